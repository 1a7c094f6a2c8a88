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
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"weaseldb/internal/procstat"
)

// ErrStartAtPast: --start-at had passed by the time the load could start.
var ErrStartAtPast = errors.New("--start-at already past")

// ErrInterrupted: the run was interrupted (SIGINT/SIGTERM: its context was
// cancelled) while it waited for --start-at, before anything was measured.
// An interrupt once the load has started is no error: the Result says
// Interrupted and holds what was measured.
var ErrInterrupted = errors.New("interrupted")

// ErrTargetDown wraps the failure of the first connection: the target is
// down, refusing, or unreachable within the connect timeout.
var ErrTargetDown = errors.New("target down")

// clientBoundCPU is the busy fraction at which the client counts as the
// bottleneck (see docs/load_tester.md).
const clientBoundCPU = 0.9

// runner is the state one Run shares with its threads.
type runner struct {
	cfg      Config
	tmpl     *requestTemplate
	family   int
	sockaddr unix.Sockaddr
	base     time.Time // clock origin of every ns timestamp
	startNs  int64     // when the load started (ns since base)
	// The measured window, ns since base: it opens at mStart (after the
	// warm-up) and is planned to close at mEnd; windowEnd is where it does
	// close (earlier when the run is interrupted; threads read it on wake).
	mStart, mEnd int64
	windowEnd    atomic.Int64
	seed         int64
	threads      []*netThread
	connReqs     chan connRequest
}

// Run drives the load described by cfg until its duration ends or ctx is
// cancelled, printing a line per stats interval to out (unless Quiet), and
// returns what was measured. An error means no measurement (bad config,
// target down); failed requests are counted in the Result instead. An
// interrupt while waiting for --start-at returns an error wrapping
// ErrInterrupted and ctx's error, with the Result that was written (every
// count 0, Interrupted).
func Run(ctx context.Context, cfg Config, out io.Writer) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// A network thread without a connection would never send its share of
	// an open-loop rate; more threads than connections buy nothing anyway.
	cfg.NetworkThreads = min(cfg.NetworkThreads, cfg.Concurrency)
	if err := checkDescriptors(cfg.Concurrency, cfg.NetworkThreads); err != nil {
		return nil, err
	}
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
	if err := waitForStart(ctx, &cfg); err != nil {
		if errors.Is(err, ErrInterrupted) {
			return interruptedBeforeStart(cfg, tmpl, out, err)
		}
		return nil, err
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
	r.mStart = r.startNs + int64(cfg.Warmup)
	if !cfg.StartAt.IsZero() { // the warm-up is what is left until then
		r.mStart = r.startNs + max(0, int64(time.Until(cfg.StartAt)))
	}
	r.mEnd = r.mStart + int64(cfg.Duration)
	r.windowEnd.Store(r.mEnd)
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

// waitForStart sleeps until --start-at minus the warm-up, so the load starts
// with just its warm-up ahead of the window.
func waitForStart(ctx context.Context, cfg *Config) error {
	if cfg.StartAt.IsZero() {
		return nil
	}
	if !time.Now().Before(cfg.StartAt) {
		return fmt.Errorf("%w: %s", ErrStartAtPast, cfg.StartAt.UTC().Format(time.RFC3339Nano))
	}
	wait := time.Until(cfg.StartAt) - cfg.Warmup
	if wait <= 0 {
		return nil
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		// Both wrapped: the CLI exits 130 on ErrInterrupted, and a caller
		// that cancelled ctx finds its own reason with errors.Is.
		return fmt.Errorf("%w while waiting for --start-at %s, before anything was measured (%w)",
			ErrInterrupted, cfg.StartAt.UTC().Format(time.RFC3339), ctx.Err())
	case <-timer.C:
		return nil
	}
}

// interruptedBeforeStart ends a run interrupted while it waited for
// --start-at. Nothing was measured, but the result is returned and the
// outputs written as after an interrupt during the warm-up (every count 0,
// "interrupted": true), so a file an earlier run left at --json is never
// taken for this run's; cause, the interruption, is returned with it.
func interruptedBeforeStart(cfg Config, tmpl *requestTemplate, out io.Writer, cause error) (*Result, error) {
	if cfg.Quiet {
		out = io.Discard
	}
	r := &runner{cfg: cfg, tmpl: tmpl, base: time.Now()}
	r.mStart = max(0, int64(time.Until(cfg.StartAt))) // where the window was to open
	r.mEnd = r.mStart + int64(cfg.Duration)
	c := newCollector(r, nil)
	c.endNs = r.mStart
	c.cpuStart, _ = procstat.SelfCPU()
	res := c.result(c.cpuStart, true)
	res.Warnings = append(res.Warnings, "interrupted while waiting for --start-at: the measured window never opened and nothing was measured")
	if cfg.HDRLog != "" { // emptied, as an interrupt during the warm-up leaves it
		hdrLog, err := newHDRLogWriter(cfg.HDRLog)
		if err != nil {
			return res, err
		}
		if err := hdrLog.close(); err != nil {
			return res, err
		}
	}
	if err := r.writeOutputs(res, out); err != nil {
		return res, err
	}
	return res, cause
}

// drive starts the threads, collects every interval, waits for the drain,
// and builds the result.
func (r *runner) drive(ctx context.Context, out io.Writer, hdrLog *hdrLogWriter) (*Result, error) {
	cfg := &r.cfg
	if cfg.Quiet {
		out = io.Discard
	}
	var loops, connectors sync.WaitGroup
	for _, t := range r.threads {
		loops.Go(t.loop)
	}
	loopsDone := make(chan struct{})
	go func() { loops.Wait(); close(loopsDone) }()
	connCtx, stopConnecting := context.WithCancel(context.Background())
	for range cfg.ConnectThreads {
		connectors.Go(func() { r.connectLoop(connCtx) })
	}
	for slot := range cfg.Concurrency {
		r.requestConn(slot, 0)
	}
	c := newCollector(r, hdrLog)
	intervalHeader(out)
	interrupted := c.run(ctx, out, loopsDone)
	cpuEnd, _ := procstat.SelfCPU()
	stopConnecting()
	connectors.Wait()
	c.accountTails()
	res := c.result(cpuEnd, interrupted)
	if hdrLog != nil {
		if err := c.finishHDRLog(); err != nil {
			res.Warnings = append(res.Warnings, err.Error())
		}
	}
	if err := r.writeOutputs(res, out); err != nil {
		return res, err
	}
	return res, nil
}

// writeOutputs writes --vegeta and --json once the result is final (the
// vegeta writer sets the result's sampling stride, so it goes first).
func (r *runner) writeOutputs(res *Result, out io.Writer) error {
	if r.cfg.Vegeta != "" {
		note, err := r.writeVegeta(res)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, note)
	}
	if r.cfg.JSONPath != "" {
		if err := res.WriteJSON(r.cfg.JSONPath); err != nil {
			return err
		}
	}
	return nil
}

// collector merges the threads' interval histograms and counters.
type collector struct {
	r         *runner
	hdrLog    *hdrLogWriter
	interval  *hdrhistogram.Histogram // scratch: one interval, all threads
	total     *hdrhistogram.Histogram // the measured run
	counts    counters                // the measured run
	warm      counters                // requests due during the warm-up, whenever they ended
	carry     counters                // measured requests taken in a warm-up collection
	carryHist *hdrhistogram.Histogram // and their latencies
	intervals []Interval
	ivRecs    []intervalRecord // each measured interval's histogram, for the tail's lower bounds
	lastNs    int64            // end of the last collected interval
	endNs     int64            // where the measured window closed
	cpuStart  time.Duration
	measuring bool
	openConns int
	// From the threads' tails (accountTails).
	unfinished, dropped         int64
	warmUnfinished, warmDropped int64
	scheduled                   int64
	lowerBounds                 int64 // values recorded as lower bounds
	amended                     bool  // lower bounds landed in intervals already logged
}

// intervalRecord keeps one measured interval's histogram, compressed.
type intervalRecord struct {
	startNs, endNs int64
	enc            []byte
}

func newCollector(r *runner, hdrLog *hdrLogWriter) *collector {
	return &collector{r: r, hdrLog: hdrLog, interval: newHistogram(), total: newHistogram(),
		carryHist: newHistogram(), lastNs: r.startNs}
}

// take swaps every thread's interval histograms for their spares and takes
// their counters. Each thread's lock is held for the swaps, so the load goes
// on. It merges the measured requests' latencies into c.interval and returns
// the measured and the warm-up counters; warm-up latencies go to warmInto
// (nil: dropped).
func (c *collector) take(warmInto *hdrhistogram.Histogram) (measured, warm counters) {
	c.interval.Reset()
	open := 0
	for _, t := range c.r.threads {
		t.mu.Lock()
		h, wh := t.hist, t.warmHist
		t.hist, t.warmHist = t.spare, t.warmSpare
		st, ws := t.stats, t.warmStats
		t.stats, t.warmStats = counters{}, counters{}
		open += t.open
		t.mu.Unlock()
		c.interval.Merge(h)
		if warmInto != nil {
			warmInto.Merge(wh)
		}
		h.Reset()
		wh.Reset()
		t.spare, t.warmSpare = h, wh
		measured.add(&st)
		warm.add(&ws)
	}
	c.openConns = open
	return measured, warm
}

// run collects every interval until the measured window closes (its
// duration, or ctx cancelled: it reports which), waits for the threads to
// drain, and collects the last interval, which holds the responses that
// arrived during the drain.
func (c *collector) run(ctx context.Context, out io.Writer, loopsDone <-chan struct{}) (interrupted bool) {
	r := c.r
	for {
		c.startMeasuring()
		next := min(c.lastNs+int64(r.cfg.StatsInterval), r.mEnd)
		if c.lastNs < r.mStart {
			next = min(next, r.mStart)
		}
		if next >= r.mEnd {
			break
		}
		if !c.sleepUntil(ctx, next) {
			interrupted = true
			break
		}
		c.collect(next, out)
	}
	c.startMeasuring()
	end := r.mEnd
	if !interrupted && !c.sleepUntil(ctx, end) {
		interrupted = true
	}
	if interrupted {
		end = max(int64(time.Since(r.base)), c.lastNs)
		r.windowEnd.Store(end)
		for _, t := range r.threads {
			t.wake()
		}
	}
	c.waitForDrain(loopsDone)
	if c.lastNs < r.mStart && end > r.mStart {
		c.collect(r.mStart, out)
	}
	c.endNs = end
	c.collect(end, out)
	return interrupted
}

// startMeasuring takes the client's CPU when the measured window opens.
func (c *collector) startMeasuring() {
	if !c.measuring && c.lastNs >= c.r.mStart {
		c.measuring = true
		c.cpuStart, _ = procstat.SelfCPU()
	}
}

// waitForDrain waits for every network thread to finish its drain. The
// drain is bounded; should a thread not finish well after it, it is told to
// stop, which finishes it at once.
func (c *collector) waitForDrain(loopsDone <-chan struct{}) {
	limit := time.NewTimer(c.r.cfg.drain() + c.r.cfg.sweepEvery() + 5*time.Second)
	defer limit.Stop()
	select {
	case <-loopsDone:
		return
	case <-limit.C:
	}
	for _, t := range c.r.threads {
		t.stop()
	}
	<-loopsDone
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

// collect closes the interval ending at endNs: a warm-up interval (printed,
// excluded) or a measured one.
func (c *collector) collect(endNs int64, out io.Writer) {
	startNs := c.lastNs
	c.lastNs = endNs
	if endNs <= c.r.mStart {
		c.collectWarmup(startNs, endNs, out)
		return
	}
	st, warm := c.take(nil)
	c.warm.add(&warm)
	st.add(&c.carry)
	c.carry = counters{}
	c.interval.Merge(c.carryHist)
	c.carryHist.Reset()
	iv := c.newInterval(st, startNs, endNs)
	iv.TS = time.Duration(endNs - c.r.mStart).Seconds()
	c.intervals = append(c.intervals, iv)
	rec := intervalRecord{startNs: startNs, endNs: endNs}
	if enc, err := c.interval.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
		rec.enc = enc
	}
	c.ivRecs = append(c.ivRecs, rec)
	c.total.Merge(c.interval)
	c.counts.add(&st)
	printInterval(out, iv, false, c.r.cfg.StatsInterval)
	if c.hdrLog != nil {
		c.hdrLog.write(c.interval, c.r.base, startNs, endNs)
	}
}

// collectWarmup prints a warm-up interval from the requests due in the
// warm-up. Measured requests answered before this collection (just past the
// window's start) are carried into the first measured interval.
func (c *collector) collectWarmup(startNs, endNs int64, out io.Writer) {
	warmHist := newHistogram()
	st, warm := c.take(warmHist)
	c.warm.add(&warm)
	req := st.requestLevel()
	c.carry.add(&req)
	c.carryHist.Merge(c.interval)
	conns := warm
	conns.errors, conns.connsOpened = st.errors, st.connsOpened
	c.interval.Reset()
	c.interval.Merge(warmHist)
	iv := c.newInterval(conns, startNs, endNs)
	iv.TS = time.Duration(endNs - c.r.startNs).Seconds()
	printInterval(out, iv, true, c.r.cfg.StatsInterval)
}

func (c *collector) newInterval(st counters, startNs, endNs int64) Interval {
	length := time.Duration(endNs - startNs).Seconds()
	iv := Interval{LengthS: length, Requests: st.requests, Errors: st.totalErrors(), OpenConnections: c.openConns}
	if length > 0 {
		iv.RequestsPerSec = float64(st.requests) / length
	}
	if c.interval.TotalCount() > 0 {
		iv.P50NS, iv.P99NS = c.interval.ValueAtQuantile(50), c.interval.ValueAtQuantile(99)
	}
	return iv
}

// result builds the Result of the measured window [mStart, endNs].
func (c *collector) result(cpuEnd time.Duration, interrupted bool) *Result {
	r := c.r
	cfg := &r.cfg
	dur := max(0, time.Duration(c.endNs-r.mStart).Seconds())
	n := &c.counts
	res := &Result{Version: ResultVersion, Target: cfg.TargetURL(), Instance: cfg.instanceName(),
		WindowStart: r.base.Add(time.Duration(r.mStart)).UTC().Format(time.RFC3339Nano),
		CPUs:        runtime.NumCPU(), ClockSource: clockSource(), VegetaFile: cfg.Vegeta, Requests: n.requests,
		Successes: n.successes(), Errors: n.totalErrors(), DurationS: dur,
		Answered: n.requests, Failed: n.failed(), Unfinished: c.unfinished, Dropped: c.dropped,
		Latency: latencyOf(c.total), Intervals: c.intervals, ErrorsByKind: n.errorsByKind(),
		StatusCodes: n.statusCodes(), ConnectionsOpened: n.connsOpened,
		BytesIn: n.bytesIn, BytesOut: n.bytesOut, RateAsked: cfg.Rate,
		WaitedForConn: n.waitedForConn, LateSends: n.lateSends, LowerBounds: c.lowerBounds,
		RecordErrors: n.recordErrors, Interrupted: interrupted, Config: configForJSON(cfg), hist: c.total}
	res.Due = res.Answered + res.Failed + res.Unfinished + res.Dropped
	if cfg.Warmup > 0 {
		w := &c.warm
		res.Warmup = &Accounting{Answered: w.requests, Failed: w.failed(), Unfinished: c.warmUnfinished, Dropped: c.warmDropped}
		res.Warmup.Due = res.Warmup.Answered + res.Warmup.Failed + res.Warmup.Unfinished + res.Warmup.Dropped
	}
	if !cfg.StartAt.IsZero() && c.ivRecs != nil { // the window opened at --start-at (to the clock read)
		res.WindowStart = cfg.StartAt.UTC().Format(time.RFC3339Nano)
	}
	if res.Intervals == nil {
		res.Intervals = []Interval{}
	}
	for i := range res.Intervals {
		res.Intervals[i].Histogram = string(c.ivRecs[i].enc)
	}
	if dur > 0 {
		res.RequestsPerSec = float64(res.Requests) / dur
	}
	if enc, err := c.total.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
		res.Histogram = string(enc) // already base64 text ("HISTF...")
	}
	if cfg.Rate > 0 {
		svc := newHistogram()
		for _, t := range r.threads {
			svc.Merge(t.svc)
		}
		l := latencyOf(svc)
		res.ServiceLatency = &l
		if enc, err := svc.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
			res.ServiceHistogram = string(enc)
		}
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
	c.checkBooks(res)
	c.judgeClient(res)
	return res
}

// checkBooks compares the four counts with what was counted independently
// as it happened: requests written, and (open loop) the schedule's requests
// due in the window. A difference is a bug of this tool, and says so.
func (c *collector) checkBooks(res *Result) {
	if sent := c.counts.sent; sent != res.Answered+res.Failed+res.Unfinished {
		res.Warnings = append(res.Warnings, fmt.Sprintf(
			"accounting mismatch (a load_tester bug; please report it): %d requests sent in the window, but answered %d + failed %d + unfinished %d = %d",
			sent, res.Answered, res.Failed, res.Unfinished, res.Answered+res.Failed+res.Unfinished))
	}
	if c.r.cfg.Rate > 0 && c.scheduled != res.Due {
		res.Warnings = append(res.Warnings, fmt.Sprintf(
			"accounting mismatch (a load_tester bug; please report it): the schedule had %d requests due in the window, the counts add up to %d",
			c.scheduled, res.Due))
	}
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
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d requests found every connection busy when due and were sent late (their wait counts as latency); raise --concurrency if that was not the point", res.WaitedForConn))
	}
	if res.Dropped > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d requests due in the window were never sent: every connection was busy until the drain (%v) ended", res.Dropped, c.r.cfg.drain()))
	}
	if w := res.Warmup; w != nil && w.Unfinished+w.Dropped > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the warm-up left %d requests unfinished and %d dropped (not in the counts above, which are the measured window's)", w.Unfinished, w.Dropped))
	}
	if res.Unfinished > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d requests were sent and had no complete response when the drain (%v) ended", res.Unfinished, c.r.cfg.drain()))
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
		"drain_s":           cfg.drain().Seconds(),
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
	if !cfg.StartAt.IsZero() {
		m["start_at"] = cfg.StartAt.UTC().Format(time.RFC3339Nano)
	}
	return m
}

// instanceName is --instance, or hostname-pid.
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
// several machines drift differently by source, which matters to --start-at.
func clockSource() string {
	data, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(data))
}
