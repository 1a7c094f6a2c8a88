// Package loadtester is an HTTP/1.1 load generator: connect threads open
// connections and hand them to network threads, each running its own epoll
// loop; latencies go to per-thread HdrHistograms merged every stats
// interval. It runs closed loop (a fixed number of requests in flight per
// connection) or open loop (--rate, latency from each request's intended send
// time), and writes a versioned JSON result, an HdrHistogram interval log
// and vegeta results.
package loadtester

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"weaseldb/internal/procstat"
)

// ErrTargetDown wraps the failure of the first connection: the target is
// down, refusing, or unreachable within the connect timeout.
var ErrTargetDown = errors.New("target down")

// clientBoundCPU is the busy fraction at which the client counts as the
// bottleneck (see docs/load_tester.md).
const clientBoundCPU = 0.9

// runner is the state one Run shares with its threads.
type runner struct {
	cfg          Config
	tmpl         *requestTemplate
	family       int
	sockaddr     unix.Sockaddr
	base         time.Time    // clock origin of every ns timestamp
	startNs      int64        // when the load started (ns since base)
	measureStart atomic.Int64 // the measured window, for --vegeta samples
	measureEnd   atomic.Int64
	seed         int64
	threads      []*netThread
	connReqs     chan connRequest
}

// Run drives the load described by cfg until its duration ends or ctx is
// cancelled, printing a line per stats interval to out (unless Quiet), and
// returns what was measured. An error means no measurement (bad config,
// target down); failed requests are counted in the Result instead.
func Run(ctx context.Context, cfg Config, out io.Writer) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// A network thread without a connection would never send its share of
	// an open-loop rate; more threads than connections buy nothing anyway.
	cfg.NetworkThreads = min(cfg.NetworkThreads, cfg.Concurrency)
	if cfg.BodyFile != "" {
		body, err := os.ReadFile(cfg.BodyFile)
		if err != nil {
			return nil, fmt.Errorf("--body-file: %w", err)
		}
		cfg.Body = body
	}
	tmpl, err := newRequestTemplate(cfg.Method, cfg.Path, cfg.hostHeader(), cfg.Headers, cfg.Body)
	if err != nil {
		return nil, fmt.Errorf("--header: %w", err)
	}
	if err := preflight(&cfg); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTargetDown, err)
	}
	r := &runner{cfg: cfg, tmpl: tmpl, base: time.Now(), seed: time.Now().UnixNano(),
		connReqs: make(chan connRequest, cfg.Concurrency)}
	if r.family, r.sockaddr, err = resolve(&r.cfg); err != nil {
		return nil, err
	}
	var hdrLog *hdrLogWriter
	if cfg.HDRLog != "" {
		if hdrLog, err = newHDRLogWriter(cfg.HDRLog); err != nil {
			return nil, err
		}
		defer hdrLog.close()
	}
	// Every network thread is locked to an OS thread; give each a P so they
	// never queue for one behind each other (the OS schedules the threads).
	if want := cfg.NetworkThreads + 2; runtime.GOMAXPROCS(0) < want {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(want))
	}
	r.startNs = int64(time.Since(r.base))
	r.measureStart.Store(r.startNs + int64(cfg.Warmup))
	r.measureEnd.Store(r.startNs + int64(cfg.Warmup+cfg.Duration))
	for i := range cfg.NetworkThreads {
		t, err := newNetThread(r, i)
		if err != nil {
			for _, t := range r.threads {
				t.closeFds()
			}
			return nil, err
		}
		r.threads = append(r.threads, t)
	}
	return r.drive(ctx, out, hdrLog)
}

// drive starts the threads, collects every interval, stops, and builds the
// result.
func (r *runner) drive(ctx context.Context, out io.Writer, hdrLog *hdrLogWriter) (*Result, error) {
	cfg := &r.cfg
	if cfg.Quiet {
		out = io.Discard
	}
	var loops, connectors sync.WaitGroup
	for _, t := range r.threads {
		loops.Go(t.loop)
	}
	connCtx, stopConnecting := context.WithCancel(context.Background())
	for range cfg.ConnectThreads {
		connectors.Go(func() { r.connectLoop(connCtx) })
	}
	for slot := range cfg.Concurrency {
		r.requestConn(slot, 0)
	}
	c := newCollector(r)
	intervalHeader(out)
	interrupted := c.run(ctx, out, hdrLog)
	// The measured window ends here: an interrupted run keeps its partial
	// last interval; responses that land while the threads stop are outside
	// the window and are not counted.
	if interrupted {
		cut := int64(time.Since(r.base))
		r.measureEnd.Store(cut)
		c.finalInterval(cut, out, hdrLog)
	}
	endNs := c.lastNs
	cpuEnd, _ := procstat.SelfCPU()
	stopConnecting()
	for _, t := range r.threads {
		t.stop()
	}
	loops.Wait()
	connectors.Wait()
	res := c.result(endNs, cpuEnd, interrupted)
	if hdrLog != nil {
		if err := hdrLog.close(); err != nil {
			res.Warnings = append(res.Warnings, err.Error())
		}
	}
	if cfg.Vegeta != "" {
		note, err := r.writeVegeta(res)
		if err != nil {
			return res, err
		}
		fmt.Fprintln(out, note)
	}
	if cfg.JSONPath != "" {
		if err := res.WriteJSON(cfg.JSONPath); err != nil {
			return res, err
		}
	}
	return res, nil
}

// collector merges the threads' interval histograms and counters.
type collector struct {
	r         *runner
	interval  *hdrhistogram.Histogram // scratch: one interval, all threads
	total     *hdrhistogram.Histogram // the measured run
	counts    counters                // the measured run
	intervals []Interval
	lastNs    int64 // end of the last collected interval
	measureNs int64 // start of the measured run (after warm-up)
	cpuStart  time.Duration
	measuring bool
	openConns int
}

func newCollector(r *runner) *collector {
	return &collector{r: r, interval: newHistogram(), total: newHistogram(), lastNs: r.startNs}
}

// take swaps every thread's interval histogram for its spare and takes its
// counters. Each thread's lock is held for one swap, so the load goes on.
func (c *collector) take() counters {
	c.interval.Reset()
	var sum counters
	open := 0
	for _, t := range c.r.threads {
		t.mu.Lock()
		h := t.hist
		t.hist = t.spare
		st := t.stats
		t.stats = counters{}
		open += t.open
		t.mu.Unlock()
		c.interval.Merge(h)
		h.Reset()
		t.spare = h
		sum.add(&st)
	}
	c.openConns = open
	return sum
}

// run collects until the measured duration ends or ctx is cancelled; it
// reports whether ctx cut the run short.
func (c *collector) run(ctx context.Context, out io.Writer, hdrLog *hdrLogWriter) bool {
	cfg := &c.r.cfg
	if cfg.Warmup > 0 {
		warmEnd := c.r.startNs + int64(cfg.Warmup)
		for c.lastNs < warmEnd {
			next := min(c.lastNs+int64(cfg.StatsInterval), warmEnd)
			if !c.sleepUntil(ctx, next) {
				return true
			}
			c.collect(next, out, nil, true)
		}
	}
	c.startMeasuring(c.lastNs)
	end := c.measureNs + int64(cfg.Duration)
	for c.lastNs < end {
		next := min(c.lastNs+int64(cfg.StatsInterval), end)
		if !c.sleepUntil(ctx, next) {
			return true
		}
		c.collect(next, out, hdrLog, false)
	}
	return false
}

func (c *collector) startMeasuring(now int64) {
	c.measuring = true
	c.measureNs = now
	c.r.measureStart.Store(now)
	c.r.measureEnd.Store(now + int64(c.r.cfg.Duration))
	c.cpuStart, _ = procstat.SelfCPU()
}

// sleepUntil waits until the run's clock reaches ns; false if ctx ended.
func (c *collector) sleepUntil(ctx context.Context, ns int64) bool {
	d := time.Duration(ns - int64(time.Since(c.r.base)))
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// collect closes the interval ending at endNs.
func (c *collector) collect(endNs int64, out io.Writer, hdrLog *hdrLogWriter, warmup bool) {
	st := c.take()
	c.record(st, c.lastNs, endNs, out, hdrLog, warmup)
}

func (c *collector) record(st counters, startNs, endNs int64, out io.Writer, hdrLog *hdrLogWriter, warmup bool) {
	c.lastNs = endNs
	length := time.Duration(endNs - startNs).Seconds()
	iv := Interval{LengthS: length, Requests: st.requests, Errors: st.totalErrors(), OpenConnections: c.openConns}
	if length > 0 {
		iv.RequestsPerSec = float64(st.requests) / length
	}
	if c.interval.TotalCount() > 0 {
		iv.P50NS, iv.P99NS = c.interval.ValueAtQuantile(50), c.interval.ValueAtQuantile(99)
	}
	if warmup {
		iv.TS = time.Duration(endNs - c.r.startNs).Seconds()
		printInterval(out, iv, true)
		return
	}
	iv.TS = time.Duration(endNs - c.measureNs).Seconds()
	c.intervals = append(c.intervals, iv)
	c.total.Merge(c.interval)
	c.counts.add(&st)
	printInterval(out, iv, false)
	if hdrLog != nil {
		hdrLog.write(c.interval, c.r.base, startNs, endNs)
	}
}

// finalInterval collects the partial interval of an interrupted run.
func (c *collector) finalInterval(endNs int64, out io.Writer, hdrLog *hdrLogWriter) {
	if !c.measuring { // interrupted during warm-up: nothing measured
		c.take()
		c.startMeasuring(endNs)
		c.lastNs = endNs
		return
	}
	st := c.take()
	if endNs > c.lastNs {
		c.record(st, c.lastNs, endNs, out, hdrLog, false)
	}
}

// result builds the Result of the measured window [measureNs, endNs].
func (c *collector) result(endNs int64, cpuEnd time.Duration, interrupted bool) *Result {
	r := c.r
	cfg := &r.cfg
	dur := time.Duration(endNs - c.measureNs).Seconds()
	res := &Result{Version: ResultVersion, Target: cfg.TargetURL(), Requests: c.counts.requests,
		Successes: c.counts.successes(), Errors: c.counts.totalErrors(), DurationS: dur,
		Latency: latencyOf(c.total), Intervals: c.intervals, ErrorsByKind: c.counts.errorsByKind(),
		StatusCodes: c.counts.statusCodes(), ConnectionsOpened: c.counts.connsOpened,
		BytesIn: c.counts.bytesIn, BytesOut: c.counts.bytesOut, RateAsked: cfg.Rate,
		WaitedForConn: c.counts.waitedForConn, LateSends: c.counts.lateSends,
		RecordErrors: c.counts.recordErrors, Interrupted: interrupted, Config: configForJSON(cfg), hist: c.total}
	if res.Intervals == nil {
		res.Intervals = []Interval{}
	}
	if dur > 0 {
		res.RequestsPerSec = float64(res.Requests) / dur
	}
	if enc, err := c.total.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
		res.Histogram = string(enc) // already base64 text ("HISTF...")
	}
	res.ClientCPUS = (cpuEnd - c.cpuStart).Seconds()
	if dur > 0 {
		res.ClientCPUCores = res.ClientCPUS / dur
	}
	usable := float64(min(cfg.NetworkThreads, runtime.NumCPU()))
	res.ClientCPUFraction = res.ClientCPUCores / usable
	if res.Requests > 0 {
		res.ClientCPUNsPerReq = res.ClientCPUS * 1e9 / float64(res.Requests)
	}
	for _, t := range r.threads {
		if t.wall > 0 {
			res.BusiestThreadCPU = max(res.BusiestThreadCPU, t.cpu.Seconds()/t.wall.Seconds())
		}
	}
	c.judgeClient(res)
	return res
}

// judgeClient sets client_bound with a plain reason and adds warnings.
func (c *collector) judgeClient(res *Result) {
	var reasons []string
	if res.ClientCPUFraction >= clientBoundCPU || res.BusiestThreadCPU >= clientBoundCPU {
		reasons = append(reasons, fmt.Sprintf(
			"the client used %.0f%% of the cores its %d network thread(s) could use (busiest thread %.0f%% of a core): the numbers may measure the client, not the server; add --network-threads or free a core",
			100*res.ClientCPUFraction, c.r.cfg.NetworkThreads, 100*res.BusiestThreadCPU))
	}
	if res.RateAsked > 0 && res.Requests > 0 && float64(res.LateSends) > 0.01*float64(res.Requests) {
		reasons = append(reasons, fmt.Sprintf(
			"%d requests (%.1f%%) were sent more than %v after their intended time while a connection was free: the client fell behind its schedule",
			res.LateSends, 100*float64(res.LateSends)/float64(res.Requests), time.Duration(lateSendThreshold)))
	}
	if len(reasons) > 0 {
		res.ClientBound = true
		res.ClientBoundReason = reasons[0]
		res.Warnings = append(res.Warnings, reasons...)
	}
	if res.RecordErrors > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d latencies fell outside the histogram's range and were not recorded", res.RecordErrors))
	}
	if res.WaitedForConn > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d requests found every connection busy when due (their wait counts as latency); raise --concurrency if that was not the point", res.WaitedForConn))
	}
}

// configForJSON records the flags as given, durations in seconds.
func configForJSON(cfg *Config) map[string]any {
	m := map[string]any{
		"path": cfg.Path, "method": cfg.Method, "concurrency": cfg.Concurrency,
		"requests_per_conn": cfg.RequestsPerConn, "connect_threads": cfg.ConnectThreads,
		"network_threads": cfg.NetworkThreads, "pipeline": cfg.Pipeline, "rate": cfg.Rate,
		"duration_s": cfg.Duration.Seconds(), "warmup_s": cfg.Warmup.Seconds(),
		"stats_interval_s": cfg.StatsInterval.Seconds(), "timeout_s": cfg.Timeout.Seconds(),
		"connect_timeout_s": cfg.ConnectTimeout.Seconds(), "headers": cfg.Headers,
		"body_bytes": len(cfg.Body), "max_errors": cfg.MaxErrors, "gomaxprocs": runtime.GOMAXPROCS(0),
		"cpus": runtime.NumCPU(),
	}
	if cfg.UnixSocket != "" {
		m["unix_socket"] = cfg.UnixSocket
	} else {
		m["host"], m["port"] = cfg.Host, cfg.Port
	}
	if cfg.BodyFile != "" {
		m["body_file"] = cfg.BodyFile
	}
	return m
}
