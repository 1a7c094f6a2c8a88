package loadtester

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Config is one load test. Zero values are not defaults: start from
// DefaultConfig and change what the test needs.
type Config struct {
	UnixSocket string   `json:"unix_socket,omitempty"` // target a unix socket instead of TCP
	Host       string   `json:"host,omitempty"`
	Port       int      `json:"port,omitempty"`
	Path       string   `json:"path"`              // request target, with its query
	Method     string   `json:"method"`            // GET, POST, ...
	Headers    []string `json:"headers,omitempty"` // "Name: value", {{seq}}/{{uuid}} substituted
	Body       []byte   `json:"-"`                 // {{seq}}/{{uuid}} substituted per request
	BodyFile   string   `json:"body_file,omitempty"`

	Concurrency     int `json:"concurrency"`       // connections kept open
	RequestsPerConn int `json:"requests_per_conn"` // close and replace a connection after N responses; 0 keeps it
	ConnectThreads  int `json:"connect_threads"`
	NetworkThreads  int `json:"network_threads"`
	Pipeline        int `json:"pipeline"` // requests in flight per connection

	Rate           float64       `json:"rate"` // open loop at Rate req/s; 0 is closed loop
	Duration       time.Duration `json:"-"`
	Warmup         time.Duration `json:"-"`
	StatsInterval  time.Duration `json:"-"`
	Timeout        time.Duration `json:"-"` // a request without its response this long after its send fails (timeout)
	Drain          time.Duration `json:"-"` // after the window: how long requests in flight may still finish (at most Timeout)
	ConnectTimeout time.Duration `json:"-"`

	// StartAt (zero: none) opens the measured window at this wall-clock
	// time: the load starts --warmup before it (at once if that is past).
	StartAt  time.Time `json:"-"`
	Instance string    `json:"instance,omitempty"` // this instance's name in a merged result

	JSONPath  string `json:"json,omitempty"`
	HDRLog    string `json:"hdr_log,omitempty"`
	Vegeta    string `json:"vegeta,omitempty"`
	VegetaMax int    `json:"vegeta_max,omitempty"` // results kept for --vegeta, sampled evenly beyond
	MaxErrors int64  `json:"max_errors"`           // errors tolerated before the exit status says failure
	Quiet     bool   `json:"quiet,omitempty"`
}

// DefaultConfig is what the flags start from.
func DefaultConfig() Config {
	return Config{
		Host: "127.0.0.1", Port: 8080, Path: "/ok", Method: "GET",
		Concurrency: 100, ConnectThreads: 1, NetworkThreads: 1, Pipeline: 1,
		Duration: 10 * time.Second, StatsInterval: time.Second,
		Timeout: 10 * time.Second, Drain: time.Second, ConnectTimeout: 3 * time.Second,
		VegetaMax: 1_000_000,
	}
}

// Validate reports the first setting that cannot work, naming the flag.
func (c *Config) Validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(c.UnixSocket != "" || (c.Host != "" && c.Port > 0 && c.Port < 65536), "--host/--port: need a host and a port in 1..65535 (or --unix-socket)")
	check(strings.HasPrefix(c.Path, "/") || c.Path == "*", "--path %q: must start with /", c.Path)
	check(c.Method != "" && !strings.ContainsAny(c.Method, " \r\n"), "--method %q: want a token like GET", c.Method)
	check(c.Concurrency >= 1 && c.Concurrency <= 1_000_000, "--concurrency %d: want 1..1000000", c.Concurrency)
	check(c.RequestsPerConn >= 0, "--requests-per-conn %d: want >= 0 (0 keeps connections)", c.RequestsPerConn)
	check(c.ConnectThreads >= 1 && c.ConnectThreads <= 1024, "--connect-threads %d: want 1..1024", c.ConnectThreads)
	check(c.NetworkThreads >= 1 && c.NetworkThreads <= 1024, "--network-threads %d: want 1..1024", c.NetworkThreads)
	check(c.Pipeline >= 1 && c.Pipeline <= 1024, "--pipeline %d: want 1..1024", c.Pipeline)
	check(c.Rate >= 0, "--rate %g: want >= 0 (0 is closed loop)", c.Rate)
	check(c.Duration > 0, "--duration %v: want > 0", c.Duration)
	check(c.Warmup >= 0, "--warmup %v: want >= 0", c.Warmup)
	check(c.StatsInterval >= time.Millisecond, "--stats-interval %v: want >= 1ms", c.StatsInterval)
	check(c.Timeout > 0, "--timeout %v: want > 0", c.Timeout)
	check(c.Drain >= 0, "--drain %v: want >= 0", c.Drain)
	check(c.ConnectTimeout > 0, "--connect-timeout %v: want > 0", c.ConnectTimeout)
	check(c.VegetaMax >= 1, "--vegeta-max %d: want >= 1", c.VegetaMax)
	check(c.MaxErrors >= 0, "--max-errors %d: want >= 0", c.MaxErrors)
	check(c.Instance == "" || !strings.ContainsAny(c.Instance, "\r\n\t"), "--instance %q: want a name without tabs or newlines", c.Instance)
	for _, h := range c.Headers {
		name, _, ok := strings.Cut(h, ":")
		check(ok && strings.TrimSpace(name) != "" && !strings.ContainsAny(h, "\r\n"), "--header %q: want \"Name: value\"", h)
	}
	return errors.Join(errs...)
}

// maxStartAhead bounds --start-at: further away is a mistake (a wrong date
// or time zone), not a plan.
const maxStartAhead = 24 * time.Hour

// parseStartAt reads --start-at: RFC 3339 (2026-12-01T10:00:00Z) or
// relative to now (+10s, +1.5, +2m). It must lie in the future, within
// maxStartAhead.
func parseStartAt(v string, now time.Time) (time.Time, error) {
	var at time.Time
	if rel, ok := strings.CutPrefix(v, "+"); ok {
		var d time.Duration
		if err := (secondsFlag{&d}).Set(rel); err != nil {
			return at, fmt.Errorf("--start-at %q: want RFC 3339 (2026-12-01T10:00:00Z) or +DURATION (+10s)", v)
		}
		at = now.Add(d)
	} else {
		var err error
		if at, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return at, fmt.Errorf("--start-at %q: want RFC 3339 (2026-12-01T10:00:00Z) or +DURATION (+10s)", v)
		}
	}
	switch {
	case !at.After(now):
		return at, fmt.Errorf("--start-at %s: already past (now %s)", at.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339Nano))
	case at.Sub(now) > maxStartAhead:
		return at, fmt.Errorf("--start-at %s: %v from now, more than %v ahead", at.UTC().Format(time.RFC3339), at.Sub(now).Round(time.Second), maxStartAhead)
	}
	return at, nil
}

// drain is the effective drain: --drain, never longer than --timeout (a
// request still unanswered then has timed out).
func (c *Config) drain() time.Duration { return min(c.Drain, c.Timeout) }

// sweepEvery is the period of the timeout sweep: a tenth of --timeout,
// between 1 ms and 100 ms, so a request fails within 10% of its deadline.
func (c *Config) sweepEvery() time.Duration {
	return min(max(c.Timeout/10, time.Millisecond), 100*time.Millisecond)
}

// network and address for net.Dial.
func (c *Config) dialTarget() (network, address string) {
	if c.UnixSocket != "" {
		return "unix", c.UnixSocket
	}
	return "tcp", net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
}

// hostHeader is the Host header value.
func (c *Config) hostHeader() string {
	if c.UnixSocket != "" {
		return "localhost"
	}
	if c.Port == 80 {
		return c.Host
	}
	return net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
}

// TargetURL names the target the way vegeta results and reports show it.
func (c *Config) TargetURL() string {
	if c.UnixSocket != "" {
		return "http://unix" + c.Path // vegeta's convention for a unix-socket attack
	}
	return "http://" + c.hostHeader() + c.Path
}

// applyURL sets host, port and path from an http:// URL.
func (c *Config) applyURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("--url %q: %w", raw, err)
	}
	if u.Scheme != "http" {
		return fmt.Errorf("--url %q: only http:// is supported", raw)
	}
	c.Host = u.Hostname()
	c.Port = 80
	if p := u.Port(); p != "" {
		if c.Port, err = strconv.Atoi(p); err != nil {
			return fmt.Errorf("--url %q: port: %w", raw, err)
		}
	}
	c.Path = u.EscapedPath()
	if c.Path == "" {
		c.Path = "/"
	}
	if u.RawQuery != "" {
		c.Path += "?" + u.RawQuery
	}
	return nil
}
