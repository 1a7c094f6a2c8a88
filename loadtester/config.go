package loadtester

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"time"
	"weaseldb/loadtester/datafeed"
	"weaseldb/loadtester/result"
)

// Config is one load test. Zero values are not defaults: start from
// DefaultConfig and change what the test needs.
//
// The json tags name the "config" object of the result (Result.Config;
// record builds it): durations in seconds (their names end in _s), StartAt
// in RFC 3339 UTC when set. Fields tagged "-" steer the run without
// describing its load.
type Config struct {
	UnixSocket string   `json:"unix_socket,omitempty"` // target a unix socket instead of TCP
	Host       string   `json:"host,omitempty"`
	Port       int      `json:"port,omitempty"`
	Path       string   `json:"path"`                // request target, with its query
	Method     string   `json:"method"`              // GET, POST, ...
	Headers    []string `json:"headers"`             // "Name: value", {{seq}}/{{uuid}} substituted
	Body       []byte   `json:"-"`                   // {{seq}}/{{uuid}} substituted per request; the result records its length
	BodyFile   string   `json:"body_file,omitempty"` // when set, Run reads Body from this file
	// Workload (LoadWorkload), when set, replaces Method, Path and Body: each
	// request is one of its kinds, in proportion to their weights, with
	// Headers sent before the kind's own. The result then counts each kind
	// on its own too (Result.Kinds).
	Workload *Workload `json:"-"`

	Concurrency     int `json:"concurrency"`       // connections kept open
	RequestsPerConn int `json:"requests_per_conn"` // close and replace a connection after N responses; 0 keeps it
	ConnectThreads  int `json:"connect_threads"`
	NetworkThreads  int `json:"network_threads"`
	Pipeline        int `json:"pipeline"` // requests in flight per connection
	// IOBackend is the network threads' interface with the kernel:
	// "epoll" or "io_uring" (engine.go); io_uring where the kernel
	// refuses it runs on epoll, and the result says why. The result's
	// top-level io_backend says which ran (json "-": the config object
	// is the run's settings as they always were).
	IOBackend string `json:"-"`
	// TLS, when set, makes the target https:// (tlsconn.go): every
	// connection does a TLS handshake on its connect thread first.
	TLS *TLSOptions `json:"tls,omitempty"`
	// HTTP2 speaks HTTP/2 (h2conn.go): h2 by ALPN over TLS, h2c by prior
	// knowledge on plaintext, up to Streams requests in flight on each
	// connection (the counterpart of Pipeline, which it replaces).
	HTTP2   bool `json:"http2,omitempty"`
	Streams int  `json:"streams,omitempty"`

	Rate float64 `json:"rate"` // open loop at Rate req/s; 0 is closed loop (with Stages: the first stage's start)
	// Stages (open loop) ramps the rate within the run, k6's
	// ramping-arrival-rate ("30s:1000,1m:20000,10s:0"): each stage moves
	// linearly from the previous target (Rate, for the first) to its own;
	// the load lasts their total, Warmup of it unmeasured.
	Stages string `json:"stages,omitempty"`
	// ConcurrencyStages (closed loop) ramps the connections within the
	// run, k6's ramping VUs ("30s:10,1m:100,10s:0"): each stage moves
	// linearly from the previous target (0, for the first) to its own;
	// Concurrency is the peak, and the load lasts their total
	// (connramp.go).
	ConcurrencyStages string `json:"concurrency_stages,omitempty"`
	// Arrival (open loop) is how requests fall due: "constant" (evenly
	// spaced; "" too) or "poisson" (exponential gaps from Seed).
	Arrival string `json:"arrival,omitempty"`
	Seed    uint64 `json:"seed,omitempty"`
	// Checks are expressions every response must pass to be answered
	// (loadtester/check: status, body, header[NAME], json.PATH); one that
	// fails makes its request failed with kind "check".
	Checks []string `json:"checks,omitempty"`
	// Data is the CSV file (--data, read by datafeed.Load with
	// --data-policy) whose rows feed {{data.COLUMN}}: in the request, or
	// in the kinds of a workload that name no data file of their own.
	Data *datafeed.Feed `json:"-"`
	// SendSlack (open loop) is how long a wake-up that would send one
	// request may be put off so that the requests falling due within it go
	// in the same pass (openloop.go): no send is later than this while a
	// connection is free. 0 wakes for every due time.
	SendSlack time.Duration `json:"send_slack_s,omitempty"`
	// Burst (open loop) makes requests fall due Burst at a time, every
	// Burst/Rate seconds, at the same average rate: a pipelined client's
	// bursts, sent in one pass and, on one connection with room for them,
	// in one write (the gate's cost tier uses it so that the server reads
	// each burst at once on both sides). 0 or 1: one at a time.
	Burst          int           `json:"burst,omitempty"`
	Duration       time.Duration `json:"duration_s"`
	Warmup         time.Duration `json:"warmup_s"`
	StatsInterval  time.Duration `json:"stats_interval_s"`
	Timeout        time.Duration `json:"timeout_s"` // a request without its response this long after its send fails (timeout)
	Drain          time.Duration `json:"drain_s"`   // after the window: how long requests in flight may still finish (at most Timeout)
	ConnectTimeout time.Duration `json:"connect_timeout_s"`

	// StartAt (zero: none) opens the measured window at this wall-clock
	// time: the load starts Warmup before it (at once if that is past).
	StartAt  time.Time `json:"start_at,omitzero"`
	Instance string    `json:"-"` // this instance's name (Result.Instance), default hostname-pid
	// Command is the command line that ran this config, as the result
	// records it (Result.Command); outside the config's record, so that
	// instances that differ only in their output files still merge cleanly.
	Command string `json:"-"`

	// MaxErrors is how many failed + unfinished + dropped requests and
	// other errors the run tolerates (Verdict).
	MaxErrors int64 `json:"max_errors"`
	// Thresholds (ParseThreshold) are judged against the result at the end
	// of the run (Result.Thresholds).
	Thresholds []result.Threshold `json:"thresholds,omitempty"`

	// VegetaMax is how many per-request results Run keeps for WriteVegeta
	// (0: none); beyond it, an even sample of the run (every k-th, k a
	// power of two).
	VegetaMax int `json:"-"`
	// Progress, when set, gets the header and one line per stats interval
	// (warm-up ones marked) as the run goes.
	Progress io.Writer `json:"-"`
	// OnInterval, when set, is called with each measured interval as it
	// closes, on Run's collector goroutine (HDRLog.Interval streams a log
	// from it). A slow callback delays the next interval's collection, not
	// the load.
	OnInterval func(result.IntervalReport) `json:"-"`
	// OnSnapshot, when set, is called with the run so far at the end of
	// every stats interval (warm-up ones included), when the drain begins
	// and when the run is done, on Run's collector goroutine (a live
	// exporter's feed, e.g. livemetrics). Like OnInterval, a slow callback
	// delays collection, not the load.
	OnSnapshot func(result.Snapshot) `json:"-"`

	// warnedAtStart: the run's start-of-run warnings (an unknown
	// placeholder) were said already, by the first of a StepRunner's
	// steps: the later steps keep them in their results but do not print
	// them again.
	warnedAtStart bool
}

// DefaultSendSlack is Config.SendSlack's default (docs/load_tester.md,
// "Closed loop and open loop", for what it costs and saves).
const DefaultSendSlack = 100 * time.Microsecond

// DefaultConfig is what the flags start from.
func DefaultConfig() Config {
	return Config{
		Host: "127.0.0.1", Port: 8080, Path: "/ok", Method: "GET",
		Concurrency: 100, ConnectThreads: 1, NetworkThreads: 1, Pipeline: 1,
		Duration: 10 * time.Second, StatsInterval: time.Second,
		Timeout: 10 * time.Second, Drain: time.Second, ConnectTimeout: 3 * time.Second,
		SendSlack: DefaultSendSlack, IOBackend: defaultIOBackend,
	}
}

// Validate reports every setting that cannot work, naming its flag.
func (c *Config) Validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(c.UnixSocket != "" || (c.Host != "" && c.Port > 0 && c.Port < 65536), "--host/--port: need a host and a port in 1..65535 (or --unix-socket)")
	check(c.UnixSocket != "" || !strings.ContainsAny(c.Host, "/ \t\r\n"), "--host %q: want a host name or address, without a scheme or a path (a URL goes in --url)", c.Host)
	check(strings.HasPrefix(c.Path, "/") || c.Path == "*", "--path %q: must start with /", c.Path)
	check(!hasSpaceOrControl(c.Path), "--path %q: a space or control character would break the request line; encode it (a space is %%20)", c.Path)
	check(c.Method != "" && !strings.ContainsAny(c.Method, " \r\n"), "--method %q: want a token like GET", c.Method)
	check(c.Concurrency >= 1 && c.Concurrency <= 1_000_000, "--concurrency %d: want 1..1000000", c.Concurrency)
	check(c.RequestsPerConn >= 0, "--requests-per-conn %d: want >= 0 (0 keeps connections)", c.RequestsPerConn)
	check(c.ConnectThreads >= 1 && c.ConnectThreads <= 1024, "--connect-threads %d: want 1..1024", c.ConnectThreads)
	check(c.NetworkThreads >= 1 && c.NetworkThreads <= 1024, "--network-threads %d: want 1..1024", c.NetworkThreads)
	check(c.Pipeline >= 1 && c.Pipeline <= 1024, "--pipeline %d: want 1..1024", c.Pipeline)
	check(c.IOBackend == "" || c.IOBackend == IOBackendEpoll || c.IOBackend == IOBackendIOUring,
		"--io-backend %q: want epoll or io_uring", c.IOBackend)
	if c.HTTP2 {
		check(c.Streams >= 1 && c.Streams <= 1024, "--streams %d: want 1..1024", c.Streams)
		check(c.Pipeline == 1 || c.Pipeline == c.Streams, "--pipeline with --http2: give --streams (requests in flight per connection)")
	} else {
		check(c.Streams == 0, "--streams: only with --http2")
	}
	check(c.Rate >= 0, "--rate %g: want >= 0 (0 is closed loop)", c.Rate)
	check(c.Burst >= 0 && c.Burst <= 1_000_000, "--burst %d: want 0..1000000 (0 or 1: requests fall due one at a time)", c.Burst)
	check(c.Burst <= 1 || c.OpenLoop(), "--burst %d: bursts pace an open loop; give --rate", c.Burst)
	errs = append(errs, c.checkSchedule()...)
	errs = append(errs, c.checkConcurrencyStages()...)
	errs = append(errs, c.checkChecks()...)
	check(c.SendSlack >= 0 && c.SendSlack <= time.Duration(lateSendThreshold), "--send-slack %v: want 0..%v", c.SendSlack, time.Duration(lateSendThreshold))
	check(c.Duration > 0, "--duration %v: want > 0", c.Duration)
	check(c.Warmup >= 0, "--warmup %v: want >= 0", c.Warmup)
	check(c.StatsInterval >= time.Millisecond, "--stats-interval %v: want >= 1ms", c.StatsInterval)
	check(c.Timeout > 0, "--timeout %v: want > 0", c.Timeout)
	check(c.Drain >= 0, "--drain %v: want >= 0", c.Drain)
	check(c.ConnectTimeout > 0, "--connect-timeout %v: want > 0", c.ConnectTimeout)
	check(c.VegetaMax >= 0, "--vegeta-max %d: want >= 0 (0 keeps no results)", c.VegetaMax)
	check(c.MaxErrors >= 0, "--max-errors %d: want >= 0", c.MaxErrors)
	check(c.Instance == "" || !strings.ContainsAny(c.Instance, "\r\n\t"), "--instance %q: want a name without tabs or newlines", c.Instance)
	for _, h := range c.Headers {
		name, _, ok := strings.Cut(h, ":")
		check(ok && strings.TrimSpace(name) != "" && !strings.ContainsAny(h, "\r\n"), "--header %q: want \"Name: value\"", h)
	}
	if len(errs) == 0 { // the requests themselves, once what builds them is sound
		errs = append(errs, c.checkData()...)
	}
	return errors.Join(errs...)
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

// tlsHost is the name TLS verifies and sends as SNI by default: the host,
// or "localhost" for a unix socket.
func (c *Config) tlsHost() string {
	if c.UnixSocket != "" {
		return "localhost"
	}
	return c.Host
}

// hostHeader is the Host header value.
func (c *Config) hostHeader() string {
	if c.UnixSocket != "" {
		return "localhost"
	}
	if c.Port == 80 && c.TLS == nil || c.Port == 443 && c.TLS != nil {
		return c.Host
	}
	return net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
}

// TargetURL names the target the way vegeta results and reports show it.
func (c *Config) TargetURL() string {
	if c.UnixSocket != "" {
		return c.scheme() + "unix" + c.Path // vegeta's convention for a unix-socket attack
	}
	return c.scheme() + c.hostHeader() + c.Path
}

// scheme is "http://" or "https://".
func (c *Config) scheme() string {
	if c.TLS != nil {
		return "https://"
	}
	return "http://"
}

// targetName names the target in a result: its URL, or with a workload
// the server and the workload ("http://127.0.0.1:8080 (workload mixed.toml)").
func (c *Config) targetName() string {
	if c.Workload == nil {
		return c.TargetURL()
	}
	name := c.scheme() + c.hostHeader()
	if c.UnixSocket != "" {
		name = c.scheme() + "unix"
	}
	src := c.Workload.Source
	if src == "" {
		src = fmt.Sprintf("%d kinds", len(c.Workload.Kinds))
	}
	return name + " (workload " + src + ")"
}

// SetURL sets host, port and path from an http:// or https:// URL (--url);
// https:// sets TLS (default options unless already set) and port 443.
// The path and query are kept as typed (only a #fragment is dropped), so
// that placeholders in them render as they do in --path and a %XX the
// user typed is sent as it is: url.Parse would percent-encode "{{seq}}"
// into literal text.
func (c *Config) SetURL(raw string) error {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return fmt.Errorf("--url %q: want http://HOST:PORT/PATH or https://... (add http:// in front)", raw)
	}
	authority, target := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, target = rest[:i], rest[i:]
	}
	target, _, _ = strings.Cut(target, "#")
	if hasSpaceOrControl(target) {
		return fmt.Errorf("--url %q: a space or control character in the path would break the request line; encode it (a space is %%20)", raw)
	}
	u, err := url.Parse(scheme + "://" + authority)
	if err != nil {
		return fmt.Errorf("--url %q: %w", raw, errors.Unwrap(err))
	}
	port := 0
	switch u.Scheme {
	case "http":
		port = 80
	case "https":
		port = 443
	default:
		return fmt.Errorf("--url %q: want http:// or https://", raw)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("--url %q: no host; want http://HOST:PORT/PATH", raw)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("--url %q: port %s: want 1..65535", raw, p)
		}
		port = n
	}
	if u.Scheme == "http" {
		c.TLS = nil
	} else if c.TLS == nil {
		c.TLS = &TLSOptions{}
	}
	c.Host, c.Port = u.Hostname(), port
	switch {
	case target == "":
		target = "/"
	case target[0] == '?':
		target = "/" + target
	}
	c.Path = target
	return nil
}

// hasSpaceOrControl reports whether s holds a space or an ASCII control
// character, which no request target may.
func hasSpaceOrControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f })
}

// effective is the config a run records and runs: the TCP target dropped
// for a unix socket, more network threads than connections cut (a thread
// without a connection would never send its share of an open-loop rate,
// and buys nothing in a closed loop), the drain it really gets, and no
// send slack in the closed loop.
func (c Config) effective() Config {
	if c.UnixSocket != "" {
		c.Host, c.Port = "", 0
	}
	c.NetworkThreads = min(c.NetworkThreads, c.Concurrency)
	if c.HTTP2 { // the engine's depth per connection is its streams
		c.Pipeline = c.Streams
	}
	c.Drain = c.drain()
	if !c.OpenLoop() { // the closed loop paces nothing
		c.SendSlack = 0
	}
	return c
}

// MarshalJSON writes the config as the result's "config" object (record),
// so that encoding a Config never yields durations in nanoseconds under
// names that say seconds.
func (c Config) MarshalJSON() ([]byte, error) { return json.Marshal(c.record()) }

// record is the config as the result's "config" object: each field under
// its json tag ("-" left out, omitempty and omitzero meaning zero), durations
// in seconds, a time in RFC 3339 UTC. It is a map, as ReadResult
// gives it back, so encoding/json writes its keys sorted, as results have
// always had them.
func (c *Config) record() map[string]any {
	m := map[string]any{}
	v := reflect.ValueOf(c).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || name == "" || !f.IsExported() {
			continue
		}
		fv := v.Field(i)
		if (strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")) && fv.IsZero() {
			continue
		}
		switch x := fv.Interface().(type) {
		case time.Duration:
			m[name] = x.Seconds()
		case time.Time:
			m[name] = x.UTC().Format(time.RFC3339Nano)
		default:
			m[name] = x
		}
	}
	return m
}

// resultRecord is the result's "config" object: the run's effective config
// (record), with the body's length and the machine it ran on (GOMAXPROCS as
// the run raised it, the CPU count).
func (c *Config) resultRecord() map[string]any {
	m := c.record()
	m["body_bytes"] = len(c.Body)
	if w := c.Workload; w != nil {
		kinds := make([]map[string]any, len(w.Kinds))
		for i, k := range w.Kinds {
			kinds[i] = map[string]any{"name": k.Name, "weight": k.Weight, "method": k.Method, "path": k.Path, "body_bytes": len(k.Body)}
		}
		m["workload"] = kinds
		if w.Source != "" {
			m["workload_file"] = w.Source
		}
	}
	m["gomaxprocs"] = runtime.GOMAXPROCS(0)
	m["cpus"] = runtime.NumCPU()
	return m
}

// instanceName is Instance, or hostname-pid.
// InstanceName is the instance's name as the result gives it (--instance,
// or hostname-pid).
func (c *Config) InstanceName() string { return c.instanceName() }

// TargetName is the target as the result names it.
func (c *Config) TargetName() string { return c.targetName() }

func (c *Config) instanceName() string {
	if c.Instance != "" {
		return c.Instance
	}
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}

// clockSource is the kernel's clock source (tsc, kvm-clock, ...): clocks of
// several machines drift differently by source, which matters to StartAt.
func clockSource() string {
	data, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(data))
}
