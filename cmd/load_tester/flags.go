package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"weaseldb/loadtester"
	"weaseldb/loadtester/arrival"
	"weaseldb/loadtester/check"
	"weaseldb/loadtester/datafeed"
	"weaseldb/loadtester/result"
)

// options is a command line: the load (the engine's Config) and what the
// command does with its result.
type options struct {
	cfg       loadtester.Config
	jsonPath  string // --json
	hdrLog    string // --hdr-log
	vegeta    string // --vegeta
	vegetaMax int    // --vegeta-max: results kept for --vegeta
	html      string // --html: the result's page (html.go)
	quiet     bool
	// Steps (steps.go): --rate-steps' rates, or --find-rate's search, each
	// step judged against --slo.
	rateSteps  []float64
	findRate   bool
	objectives []result.Objective
	search     result.SearchSpec
	// Live metrics (metrics.go): --metrics-addr, --metrics-linger.
	metricsAddr   string
	metricsLinger time.Duration
}

// thresholdFlag collects --threshold, each parsed as it is given, so a
// malformed one is refused in one line naming it.
type thresholdFlag struct{ ts *[]result.Threshold }

func (f thresholdFlag) String() string { return "" }

func (f thresholdFlag) Set(v string) error {
	t, err := result.ParseThreshold(v)
	if err != nil {
		return err
	}
	*f.ts = append(*f.ts, t)
	return nil
}

// checkFlag collects --check, each parsed as it is given, so a malformed
// one is refused in one line naming it.
type checkFlag struct{ exprs *[]string }

func (f checkFlag) String() string { return "" }

func (f checkFlag) Set(v string) error {
	if _, err := check.Parse(v); err != nil {
		return err
	}
	*f.exprs = append(*f.exprs, v)
	return nil
}

// outputs are the files the command writes.
func (o options) outputs() loadtester.Outputs {
	return loadtester.Outputs{JSON: o.jsonPath, Vegeta: o.vegeta, HDRLog: o.hdrLog}
}

// stringFlags are the flags read after parsing, as given.
type stringFlags struct {
	url, body, startAt, rateSteps, slo, workload string
	data, dataPolicy                             string
	tls                                          loadtester.TLSOptions // --insecure, --ca, --sni, --cert, --key, --tls-resume
}

// tlsFlags are the flags that need an https:// --url.
var tlsFlags = []string{"insecure", "ca", "sni", "cert", "key", "tls-resume"}

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

const usageHead = `load_tester: an HTTP/1.1 and HTTP/2 load generator, plaintext or TLS (epoll network threads, HdrHistogram latency).

Usage: load_tester [flags]
       load_tester merge [--json OUT] [--hdr-log OUT] [--vegeta OUT] IN.json...   (docs/distributed.md)
       load_tester html RESULT.json... -o OUT.html                                 (docs/load_tester.md, "HTML view")
       load_tester compare A.json B.json [C.json...] -o OUT.html                   (docs/load_tester.md, "Comparing runs")
  load_tester --host 127.0.0.1 --port 8080 --path /ok --concurrency 100 --duration 10
  load_tester --unix-socket weaseldb.sock --concurrency 2000 --requests-per-conn 500 \
      --connect-threads 2 --network-threads 10 --duration 120 --stats-interval 1
  load_tester --url http://127.0.0.1:8080/v1/commit --method POST \
      --body '{"request_id":"{{uuid}}","leader_id":"l","read_version":0,"operations":[]}' --rate 2000
  load_tester --url http://127.0.0.1:8080 --workload testdata/workloads/mixed.toml --rate 5000
  load_tester --url http://127.0.0.1:8080/ok --rate-steps 10000x2x4 --warmup 1 --duration 5 --json steps.json
  load_tester --url http://127.0.0.1:8080/ok --find-rate --slo p99=1ms --warmup 1 --duration 3

Times take seconds (10, 0.5) or Go durations (500ms). In the path, --header,
--body and --body-file, {{seq}} becomes a number unique in the run, {{seq%N}}
that number modulo N, {{uuid}} a random UUID per request and {{run}} a run's
own id (a workload also has {{answered:KIND}}; docs/load_tester.md). Exit
status: 0 ok, 1 failure (target down, errors over --max-errors, --find-rate
found no rate meeting --slo), 2 bad flags (or too few descriptors for
--concurrency), 99 a --threshold crossed (when nothing above applies),
130 interrupted.

Flags:
`

// defaultVegetaMax is --vegeta-max's default.
const defaultVegetaMax = 1_000_000

// newFlagSet binds the flags to o (which holds the defaults) and sf (the
// flags read after parsing).
func newFlagSet(o *options, sf *stringFlags) *flag.FlagSet {
	cfg := &o.cfg
	url, body, startAt := &sf.url, &sf.body, &sf.startAt
	fs := flag.NewFlagSet("load_tester", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&cfg.UnixSocket, "unix-socket", "", "target a unix socket at `PATH` instead of TCP")
	fs.StringVar(&cfg.Host, "host", cfg.Host, "TCP target host")
	fs.IntVar(&cfg.Port, "port", cfg.Port, "TCP target port")
	fs.StringVar(url, "url", "", "TCP target as http://host:port/path or https://... (instead of --host, --port, --path; https: TLS 1.2/1.3; with --unix-socket: the path, scheme and Host header)")
	fs.BoolVar(&sf.tls.Insecure, "insecure", false, "https: do not verify the server's certificate")
	fs.StringVar(&sf.tls.CAFile, "ca", "", "https: verify the server's certificate by the PEM roots in `FILE` instead of the system's")
	fs.StringVar(&sf.tls.ServerName, "sni", "", "https: the server `NAME` sent as SNI and verified (default: the URL's host)")
	fs.StringVar(&sf.tls.CertFile, "cert", "", "https: a client certificate, PEM `FILE` (with --key)")
	fs.StringVar(&sf.tls.KeyFile, "key", "", "https: the client certificate's key, PEM `FILE`")
	fs.BoolVar(&sf.tls.Resume, "tls-resume", false, "https: keep a session cache, so new connections resume a session (default: a full handshake each)")
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
	fs.IntVar(&cfg.NetworkThreads, "network-threads", cfg.NetworkThreads, "threads running event loops over the connections")
	if testIOBackend != "" {
		cfg.IOBackend = testIOBackend
	}
	fs.StringVar(&cfg.IOBackend, "io-backend", cfg.IOBackend, "the network threads' kernel interface: io_uring or epoll (io_uring where the kernel refuses it runs on epoll, saying why in one line)")
	fs.BoolVar(&cfg.HTTP2, "http2", false, "speak HTTP/2: h2 by ALPN with an https:// URL, h2c by prior knowledge with http://")
	fs.IntVar(&cfg.Streams, "streams", 0, "with --http2: up to `N` requests in flight per connection, one a stream (default 1)")
	fs.IntVar(&cfg.Pipeline, "pipeline", cfg.Pipeline, "up to `D` requests in flight per connection, refilled in one write once D/2 are answered")
	fs.Float64Var(&cfg.Rate, "rate", 0, "open loop at `R` requests/s in all, latency from each request's intended send time (0: closed loop)")
	fs.IntVar(&cfg.Burst, "burst", 0, "with --rate: requests fall due `N` at a time, N/rate seconds apart, and go in one pass (one write on a connection with room): a pipelined client's bursts at a fixed rate")
	fs.StringVar(&cfg.Stages, "stages", "", "open loop ramping the rate within the run on one set of connections: `LIST` of DURATION:TARGET (30s:1000,1m:20000,10s:0), each stage moving linearly from the previous target (--rate, or 0, for the first); the run lasts their total, --warmup of it unmeasured (no --duration)")
	fs.StringVar(&cfg.ConcurrencyStages, "concurrency-stages", "", "closed loop: ramp the connections within one run, `LIST` 30s:10,1m:100,10s:0 (k6's ramping VUs: each stage moves linearly to its target, the first from 0); the peak is --concurrency, the total the run's length; results per stage")
	fs.StringVar(&cfg.Arrival, "arrival", "", "open loop: how requests fall due, `KIND` constant (evenly spaced, the default) or poisson (exponential gaps, from --seed)")
	fs.Uint64Var(&cfg.Seed, "seed", 0, "--arrival poisson: the generator's `SEED` (0: one is drawn and recorded in the JSON)")
	fs.Var(secondsFlag{&cfg.SendSlack}, "send-slack", "with --rate: how late a send may go so that requests due close together share one wake-up (0: wake for each)")
	fs.Var(secondsFlag{&cfg.Duration}, "duration", "measured run length")
	fs.Var(secondsFlag{&cfg.Warmup}, "warmup", "load before the measured run, excluded from the results")
	fs.Var(secondsFlag{&cfg.StatsInterval}, "stats-interval", "interval of the progress lines and of the HDR log")
	fs.Var(secondsFlag{&cfg.Timeout}, "timeout", "fail a request (timeout) without its response this long after its own send; its connection is replaced")
	fs.Var(secondsFlag{&cfg.Drain}, "drain", "after the measured window, how long requests in flight may still finish and, with --rate, requests due in it still waiting for a connection may still be sent (at most --timeout); the rest count as unfinished or dropped")
	fs.Var(secondsFlag{&cfg.ConnectTimeout}, "connect-timeout", "fail a connect that takes longer")
	fs.StringVar(startAt, "start-at", "", "open the measured window at `TIME` (RFC 3339, or +10s from now), after connecting and the warm-up; intervals align to it (for several instances)")
	fs.StringVar(&cfg.Instance, "instance", "", "this instance's `NAME` in the JSON and in a merge (default: hostname-pid)")
	fs.StringVar(&o.jsonPath, "json", "", "write the result as versioned JSON to `FILE`")
	fs.StringVar(&o.hdrLog, "hdr-log", "", "write an HdrHistogram interval log to `FILE`")
	fs.StringVar(&o.vegeta, "vegeta", "", "write results `FILE` in vegeta's encoding (for vegeta report/plot)")
	fs.StringVar(&o.html, "html", "", "write the result as one self-contained HTML page to `FILE` (charts and tables; also load_tester html)")
	fs.IntVar(&o.vegetaMax, "vegeta-max", o.vegetaMax, "results kept for --vegeta; beyond, an even sample")
	fs.Int64Var(&cfg.MaxErrors, "max-errors", 0, "errors tolerated before the exit status is 1")
	fs.Var(checkFlag{&cfg.Checks}, "check", "every response must pass `EXPR` to be answered, else it is failed (kind check): status==200, status in 200..299, body contains \"ok\", body ~ REGEX, header[Content-Type] ~ json, json.status == \"ok\" (a gjson path); repeatable; each check's passes and failures are in the summary and the JSON")
	fs.Var(thresholdFlag{&cfg.Thresholds}, "threshold", "judge the result at the end: `EXPR` METRIC OP LIMIT, METRIC one of p50, p90, p99, p99.9, max, mean (latency; corrected in rate mode), errors (a count, or % of due requests), rps; OP <, <=, >, >= (p99<5ms, errors<0.1%, rps>10000); repeatable; a crossed one exits 99 (per step with --rate-steps)")
	fs.StringVar(&o.metricsAddr, "metrics-addr", "", "serve Prometheus metrics of the run as it goes at http://`HOST:PORT`/metrics (load_tester_*; docs/load_tester.md, \"Live metrics\"), until the result is written")
	fs.Var(secondsFlag{&o.metricsLinger}, "metrics-linger", "with --metrics-addr: once the result is written, serve until one scrape has read the final counts, or this long at most (0: close at once)")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress lines, only the summary")
	fs.StringVar(&sf.data, "data", "", "feed {{data.COLUMN}} in --path, --header and --body (or a workload's kinds) from the CSV `FILE`: a header row names the columns, each later row is one request's values")
	fs.StringVar(&sf.dataPolicy, "data-policy", "loop", "how --data's rows are taken, `POLICY` once (each row once; the run ends when they run out), loop (in order, wrapping) or random")
	fs.StringVar(&sf.workload, "workload", "", "send a weighted mix of requests described in the TOML `FILE` (replaces --path, --method, --body; see docs/load_tester.md)")
	fs.StringVar(&sf.rateSteps, "rate-steps", "", "run one open-loop step per rate: `LIST` 10000,20000,40000 or STARTxFACTORxCOUNT 10000x2x4; a row per step (--json: one document, --hdr-log: one log per step)")
	fs.BoolVar(&o.findRate, "find-rate", false, "search for the highest rate meeting --slo (steps of --warmup + --duration each)")
	fs.StringVar(&sf.slo, "slo", "", "latency objective of each step: `P=LIMIT`[,P=LIMIT] with P one of p50, p90, p99, p99.9, max (p99=1ms)")
	sp := &o.search
	fs.Float64Var(&sp.Start, "find-rate-start", sp.Start, "--find-rate: first rate tried")
	fs.Float64Var(&sp.Min, "find-rate-min", sp.Min, "--find-rate: lowest rate tried when the first fails")
	fs.Float64Var(&sp.Max, "find-rate-max", 0, "--find-rate: highest rate tried (0: no limit)")
	fs.Float64Var(&sp.Factor, "find-rate-factor", sp.Factor, "--find-rate: the climb's step (rate times this while steps pass)")
	fs.Float64Var(&sp.Precision, "find-rate-precision", sp.Precision, "--find-rate: stop once first fail / last pass - 1 is at most this")
	fs.IntVar(&sp.Repeats, "find-rate-repeats", sp.Repeats, "--find-rate: each end of the final bracket needs a majority of this many runs (odd; 1: no repeats)")
	fs.IntVar(&sp.MaxSteps, "find-rate-steps", sp.MaxSteps, "--find-rate: most steps in all, repeats included")
	fs.Var(secondsFlag{&sp.MaxTime}, "find-rate-time", "--find-rate: most wall time in all (0: no limit); a step that would end past it is not started")
	return fs
}

// defaults are the options before any flag.
func defaults() options {
	return options{cfg: loadtester.DefaultConfig(), vegetaMax: defaultVegetaMax, search: result.DefaultSearchSpec()}
}

// parseArgs parses the command line. help is true for --help.
// testIOBackend, set by the tests only (LOADTESTER_TEST_IO_BACKEND), is
// --io-backend's default in place of the library's (io_uring).
var testIOBackend string

func parseArgs(args []string) (o options, help bool, err error) {
	o = defaults()
	var sf stringFlags
	fs := newFlagSet(&o, &sf)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, true, nil
		}
		return o, false, flagError(err)
	}
	if fs.NArg() > 0 {
		return o, false, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	url, body, startAt := sf.url, sf.body, sf.startAt
	set := map[string]bool{} // the flags given

	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	cfg := &o.cfg
	if err := parseTarget(cfg, &sf, set); err != nil {
		return o, false, err
	}
	for _, f := range tlsFlags {
		if set[f] && cfg.TLS == nil {
			return o, false, fmt.Errorf("--%s: only with an https:// --url", f)
		}
	}
	if err := checkInputFiles(sf, cfg.BodyFile); err != nil {
		return o, false, err
	}
	if err := checkMetricsAddr(o.metricsAddr); err != nil {
		return o, false, err
	}
	if set["metrics-linger"] && o.metricsAddr == "" {
		return o, false, errors.New("--metrics-linger: only with --metrics-addr")
	}
	if cfg.TLS != nil {
		tls := sf.tls
		cfg.TLS = &tls
		if (tls.CertFile == "") != (tls.KeyFile == "") {
			return o, false, errors.New("--cert and --key: give both")
		}
	}
	if startAt != "" {
		if cfg.StartAt, err = parseStartAt(startAt, time.Now()); err != nil {
			return o, false, err
		}
	}
	if body != "" {
		if cfg.BodyFile != "" {
			return o, false, errors.New("--body and --body-file: give one")
		}
		cfg.Body = []byte(body)
	}
	if o.vegeta != "" {
		cfg.VegetaMax = o.vegetaMax
	}
	if cfg.HTTP2 && cfg.Streams == 0 {
		cfg.Streams = 1
	}
	if sf.workload != "" {
		for _, f := range []string{"path", "method", "body", "body-file"} {
			if set[f] {
				return o, false, fmt.Errorf("--workload and --%s: the workload gives each request's %s", f, strings.TrimSuffix(f, "-file"))
			}
		}
		if set["url"] && cfg.Path != "/" {
			return o, false, fmt.Errorf("--workload and --url %s: the workload gives each request's path; give the URL without one", url)
		}
		if cfg.Workload, err = loadtester.LoadWorkload(sf.workload); err != nil {
			return o, false, workloadError(sf.workload, err)
		}
	}
	if sf.data != "" || set["data-policy"] {
		if err := parseData(cfg, sf); err != nil {
			return o, false, err
		}
	}
	if err := o.parseSteps(sf, set); err != nil {
		return o, false, err
	}
	if err := parseStages(cfg, set); err != nil {
		return o, false, err
	}
	errs := []error{cfg.Validate()}
	if o.vegetaMax < 1 {
		errs = append(errs, fmt.Errorf("--vegeta-max %d: want >= 1", o.vegetaMax))
	}
	return o, false, errors.Join(errs...)
}

// parseData reads --data by --data-policy.
func parseData(cfg *loadtester.Config, sf stringFlags) error {
	policy, err := datafeed.ParsePolicy(sf.dataPolicy)
	if err != nil {
		return err
	}
	if sf.data == "" {
		return fmt.Errorf("--data-policy %s: only with --data FILE.csv", sf.dataPolicy)
	}
	cfg.Data, err = datafeed.Load(sf.data, policy)
	return err
}

// parseStages sets the measured time of a ramp (--stages): its total less
// --warmup, so the run is the stages and nothing else; and draws a seed
// for Poisson arrivals when none is given (recorded, so a run can be
// repeated).
func parseStages(cfg *loadtester.Config, set map[string]bool) error {
	if cfg.Arrival == "poisson" && cfg.Seed == 0 {
		cfg.Seed = rand.Uint64()>>11 | 1 // exact in any JSON reader (below 2^53)
	}
	if cfg.ConcurrencyStages != "" {
		return parseConcurrencyStages(cfg, set)
	}
	if cfg.Stages == "" {
		return nil
	}
	for _, f := range []string{"duration", "rate-steps", "find-rate"} {
		if set[f] {
			return fmt.Errorf("--stages and --%s: the stages give the run's rates and length; give one", f)
		}
	}
	stages, err := arrival.ParseStages(cfg.Stages)
	if err != nil {
		return err
	}
	total := loadtester.StagesLength(stages)
	if cfg.Warmup >= total {
		return fmt.Errorf("--warmup %v: the stages last %v in all; want a warm-up shorter than that", cfg.Warmup, total)
	}
	cfg.Duration = total - cfg.Warmup
	return nil
}

// parseConcurrencyStages sets the closed loop's ramp of connections
// (--concurrency-stages): its peak is the concurrency, its total less
// --warmup the measured time.
func parseConcurrencyStages(cfg *loadtester.Config, set map[string]bool) error {
	for _, f := range []string{"duration", "concurrency", "rate", "stages", "rate-steps", "find-rate"} {
		if set[f] {
			return fmt.Errorf("--concurrency-stages and --%s: the stages give the run's connections and length; give one", f)
		}
	}
	stages, err := arrival.ParseStages(cfg.ConcurrencyStages)
	if err != nil {
		return fmt.Errorf("--concurrency-stages: %w", err)
	}
	total, peak := loadtester.StagesLength(stages), 0.0
	for _, st := range stages {
		peak = max(peak, st.Target)
	}
	if cfg.Warmup >= total {
		return fmt.Errorf("--warmup %v: the stages last %v in all; want a warm-up shorter than that", cfg.Warmup, total)
	}
	cfg.Duration = total - cfg.Warmup
	cfg.Concurrency = max(1, int(peak)) // checked whole, and above 0, by Validate
	return nil
}

// usage writes the --help text.
func usage(w io.Writer) {
	fmt.Fprint(w, usageHead)
	o := defaults()
	var sf stringFlags
	fs := newFlagSet(&o, &sf)
	fs.SetOutput(w)
	fs.PrintDefaults()
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
