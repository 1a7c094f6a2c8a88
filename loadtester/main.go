package loadtester

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Exit statuses of Main.
const (
	ExitOK          = 0
	ExitFailure     = 1   // target down, errors above --max-errors, an output not written
	ExitUsage       = 2   // bad flags
	ExitInterrupted = 130 // SIGINT/SIGTERM: what was measured is still printed and written
)

// secondsFlag accepts "10" (seconds, fractions allowed) or a Go duration ("500ms").
type secondsFlag struct{ d *time.Duration }

func (s secondsFlag) String() string {
	if s.d == nil {
		return ""
	}
	return strconv.FormatFloat(s.d.Seconds(), 'g', -1, 64)
}

func (s secondsFlag) Set(v string) error {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		*s.d = time.Duration(f * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("want seconds (10, 0.5) or a duration (500ms)")
	}
	*s.d = d
	return nil
}

const usageHead = `load_tester: an HTTP/1.1 load generator (epoll network threads, HdrHistogram latency).

Usage: load_tester [flags]
       load_tester merge [--json OUT] [--hdr-log OUT] [--vegeta OUT] IN.json...   (docs/distributed.md)
  load_tester --host 127.0.0.1 --port 8080 --path /ok --concurrency 100 --duration 10
  load_tester --unix-socket weaseldb.sock --concurrency 2000 --requests-per-conn 500 \
      --connect-threads 2 --network-threads 10 --duration 120 --stats-interval 1
  load_tester --url http://127.0.0.1:8080/v1/commit --method POST \
      --body '{"request_id":"{{uuid}}","leader_id":"l","read_version":0,"operations":[]}' --rate 2000

Times take seconds (10, 0.5) or Go durations (500ms). In --header, --body and
--body-file, {{seq}} becomes a number unique in the run and {{uuid}} a random
UUID, per request. Exit status: 0 ok, 1 failure (target down, errors over
--max-errors), 2 bad flags (or too few descriptors for --concurrency),
130 interrupted.

Flags:
`

// newFlagSet binds the flags to cfg (which holds the defaults), url and body.
func newFlagSet(cfg *Config, url, body, startAt *string) *flag.FlagSet {
	fs := flag.NewFlagSet("load_tester", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&cfg.UnixSocket, "unix-socket", "", "target a unix socket at `PATH` instead of TCP")
	fs.StringVar(&cfg.Host, "host", cfg.Host, "TCP target host")
	fs.IntVar(&cfg.Port, "port", cfg.Port, "TCP target port")
	fs.StringVar(url, "url", "", "TCP target as http://host:port/path (sets --host, --port, --path)")
	fs.StringVar(&cfg.Path, "path", cfg.Path, "request target (path and query)")
	fs.StringVar(&cfg.Method, "method", cfg.Method, "request method")
	fs.Func("header", "request header `\"Name: value\"` (repeatable)", func(v string) error {
		cfg.Headers = append(cfg.Headers, v)
		return nil
	})
	fs.StringVar(body, "body", "", "request body")
	fs.StringVar(&cfg.BodyFile, "body-file", "", "read the request body from `FILE`")
	fs.IntVar(&cfg.Concurrency, "concurrency", cfg.Concurrency, "connections kept open")
	fs.IntVar(&cfg.RequestsPerConn, "requests-per-conn", 0, "close and replace a connection after `N` responses (0 keeps connections)")
	fs.IntVar(&cfg.ConnectThreads, "connect-threads", cfg.ConnectThreads, "threads opening connections")
	fs.IntVar(&cfg.NetworkThreads, "network-threads", cfg.NetworkThreads, "threads running epoll loops over the connections")
	fs.IntVar(&cfg.Pipeline, "pipeline", cfg.Pipeline, "up to `D` requests in flight per connection, refilled in one write once D/2 are answered")
	fs.Float64Var(&cfg.Rate, "rate", 0, "open loop at `R` requests/s in all, latency from each request's intended send time (0: closed loop)")
	fs.Var(secondsFlag{&cfg.Duration}, "duration", "measured run length")
	fs.Var(secondsFlag{&cfg.Warmup}, "warmup", "load before the measured run, excluded from the results")
	fs.Var(secondsFlag{&cfg.StatsInterval}, "stats-interval", "interval of the progress lines and of the HDR log")
	fs.Var(secondsFlag{&cfg.Timeout}, "timeout", "fail a request (timeout) without its response this long after its own send; its connection is replaced")
	fs.Var(secondsFlag{&cfg.Drain}, "drain", "after the measured window, how long requests in flight may still finish and, with --rate, requests due in it still waiting for a connection may still be sent (at most --timeout); the rest count as unfinished or dropped")
	fs.Var(secondsFlag{&cfg.ConnectTimeout}, "connect-timeout", "fail a connect that takes longer")
	fs.StringVar(startAt, "start-at", "", "open the measured window at `TIME` (RFC 3339, or +10s from now), after connecting and the warm-up; intervals align to it (for several instances)")
	fs.StringVar(&cfg.Instance, "instance", "", "this instance's `NAME` in the JSON and in a merge (default: hostname-pid)")
	fs.StringVar(&cfg.JSONPath, "json", "", "write the result as versioned JSON to `FILE`")
	fs.StringVar(&cfg.HDRLog, "hdr-log", "", "write an HdrHistogram interval log to `FILE`")
	fs.StringVar(&cfg.Vegeta, "vegeta", "", "write results `FILE` in vegeta's encoding (for vegeta report/plot)")
	fs.IntVar(&cfg.VegetaMax, "vegeta-max", cfg.VegetaMax, "results kept for --vegeta; beyond, an even sample")
	fs.Int64Var(&cfg.MaxErrors, "max-errors", 0, "errors tolerated before the exit status is 1")
	fs.BoolVar(&cfg.Quiet, "quiet", false, "no progress lines, only the summary")
	return fs
}

// ParseArgs parses command-line flags into a Config. help is true for --help.
func ParseArgs(args []string) (cfg Config, help bool, err error) {
	cfg = DefaultConfig()
	var url, body, startAt string
	fs := newFlagSet(&cfg, &url, &body, &startAt)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, true, nil
		}
		return cfg, false, err
	}
	if fs.NArg() > 0 {
		return cfg, false, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if url != "" {
		if err := cfg.applyURL(url); err != nil {
			return cfg, false, err
		}
	}
	if startAt != "" {
		if cfg.StartAt, err = parseStartAt(startAt, time.Now()); err != nil {
			return cfg, false, err
		}
	}
	if body != "" {
		if cfg.BodyFile != "" {
			return cfg, false, errors.New("--body and --body-file: give one")
		}
		cfg.Body = []byte(body)
	}
	return cfg, false, cfg.Validate()
}

// Usage writes the --help text.
func Usage(w io.Writer) {
	fmt.Fprint(w, usageHead)
	cfg := DefaultConfig()
	var url, body, startAt string
	fs := newFlagSet(&cfg, &url, &body, &startAt)
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// Main is the load_tester command: flags, signals, run, summary, exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "merge" {
		return MergeMain(args[1:], stdout, stderr)
	}
	cfg, help, err := ParseArgs(args)
	if help {
		Usage(stdout)
		return ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "load_tester: %s (see --help)\n", oneLine(err))
		return ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); stop() }() // a second ^C kills at once
	res, err := Run(ctx, cfg, stdout)
	if res != nil {
		res.PrintSummary(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "load_tester: %s\n", oneLine(err))
		return exitStatus(err)
	}
	code, verdict, reason := Verdict(res, cfg.MaxErrors)
	if verdict != "" {
		fmt.Fprintf(stdout, "  verdict       %s\n", verdict)
	}
	if reason != "" {
		fmt.Fprintf(stderr, "load_tester: %s\n", reason)
	}
	return code
}

// exitStatus is the exit status of a run that ended in err.
func exitStatus(err error) int {
	switch {
	case errors.Is(err, ErrInterrupted): // ^C before the window opened: as ^C during the run
		return ExitInterrupted
	case errors.Is(err, ErrStartAtPast), errors.Is(err, ErrTooFewDescriptors):
		return ExitUsage // the command cannot run as given
	}
	return ExitFailure
}

// Verdict is the exit status of a finished run, a line for the summary
// (empty when there is nothing to say) and the one-line reason of a failure
// for stderr. Every due request that did not get a good answer counts
// against --max-errors: failed, unfinished and dropped requests, plus the
// other errors (non-2xx responses, failed connects).
func Verdict(res *Result, maxErrors int64) (code int, verdict, reason string) {
	other := res.Errors - res.Failed
	bad := res.Errors + res.Unfinished + res.Dropped
	counts := fmt.Sprintf("failed %d + unfinished %d + dropped %d + other errors %d = %d",
		res.Failed, res.Unfinished, res.Dropped, other, bad)
	switch {
	case res.Interrupted:
		return ExitInterrupted, "interrupted: what was measured is above", ""
	case bad > maxErrors:
		return ExitFailure, "FAILED: " + counts + fmt.Sprintf(", over --max-errors %d", maxErrors),
			counts + fmt.Sprintf(", over --max-errors %d", maxErrors)
	case res.Requests == 0:
		return ExitFailure, "FAILED: no responses received", "no responses received"
	case bad > 0:
		return ExitOK, fmt.Sprintf("ok, but not clean: %s, within --max-errors %d", counts, maxErrors), ""
	}
	return ExitOK, "ok: every due request answered", ""
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }
