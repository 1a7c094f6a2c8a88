package loadtester

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"weaseldb/internal/procstat"
	"weaseldb/loadtester/check"
	"weaseldb/loadtester/datafeed"
	"weaseldb/loadtester/result"
)

// Run's goroutine owns the runner and the collector (collector.go); the
// network threads, each on its own locked OS thread, own their loops
// (thread.go) and share their books with the collector under their lock;
// the connect threads share only the runner's connReqs channel and each
// thread's inbox. What the runner holds is set before any thread starts
// and read-only after, except windowEnd (atomic).

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

// minJudgedWindow is the shortest measured window whose CPU use says
// whether the client was the bottleneck: over a few milliseconds the
// start's connects and the drain's bookkeeping dominate, and a run that
// ended early (its data file ran out) read as three cores busy.
const minJudgedWindow = 100 * time.Millisecond

// runner is the state one Run shares with its threads.
type runner struct {
	cfg Config
	// unknownPlaceholders is the warning about "{{...}}" no placeholder
	// reads ("" when none): said at the start and kept in the result.
	unknownPlaceholders string
	tmpl                *requestTemplate // the first kind's (the only one without a workload)
	kinds               []kindSpec       // the request kinds (kinds.go); one without a workload
	table               []uint8          // kinds in proportion to their weights: request k is of kind table[k % len]
	family              int
	sockaddr            unix.Sockaddr
	base                time.Time // clock origin of every ns timestamp
	startNs             int64     // when the load started (ns since base)
	// The measured window, ns since base: it opens at mStart (after the
	// warm-up) and is planned to close at mEnd; windowEnd is where it does
	// close (earlier when the run is interrupted; threads read it on wake).
	mStart, mEnd int64
	windowEnd    atomic.Int64
	seed         int64
	ioBackend    string // the engine every network thread runs on (engine.go)
	ioFallback   string // why io_uring, asked for, fell back to epoll ("": it did not)
	threads      []*netThread
	connReqs     chan connRequest
	// afterBackoff, set by a test only, runs a back-off's request in place
	// of time.AfterFunc (nil: the timer).
	afterBackoff func(d time.Duration, queue func())
	// https: the client's TLS config (shared read-only by the connect
	// threads) and what the preflight connection negotiated.
	tlsConf *tls.Config
	tlsInfo *result.TLSInfo
	h2req   *h2Requests // --http2: the requests, as header fields (h2render.go)
	// --check: the parsed checks (read-only), and what of a response they
	// read (the parser keeps only that).
	checks     []*check.Check
	checkNeeds check.Needs
	// The data files requests take rows of (read-only; each file's cursor
	// is its own atomic), and how the run learns that one ran out
	// (--data-policy once): rowsOut, and endEarly, which wakes the
	// collector to end the window there (datarun.go).
	feeds []*datafeed.Feed
	// --stages: the ramp's stages for the per-stage books (stages.go;
	// nil without stages, or with too many: stagesSkipped says so).
	stagePlan     *stagePlan
	stagesSkipped string
	// The closed loop's ramp of connections (--concurrency-stages;
	// connramp.go), and how many slots, counted down from the last, it
	// does not want now: slots [0, Concurrency-unwanted) are wanted. Zero
	// (every slot) without a ramp.
	ramp     *connRamp
	unwanted atomic.Int64
	rowsOut  atomic.Bool
	endEarly context.CancelCauseFunc
}

// parseChecks sets the runner's checks from a validated config: every
// --check, then each kind's own, each expression once, and the checks
// each kind's responses are judged by (kindSpec.checks).
func (r *runner) parseChecks() {
	index := map[string]int{}
	add := func(e string) int {
		key := strings.Join(strings.Fields(e), "")
		if i, ok := index[key]; ok {
			return i
		}
		c, _ := check.Parse(e) // validated
		r.checks = append(r.checks, c)
		n := c.Needs()
		r.checkNeeds.Header = r.checkNeeds.Header || n.Header
		r.checkNeeds.Body = r.checkNeeds.Body || n.Body
		index[key] = len(r.checks) - 1
		return len(r.checks) - 1
	}
	var every []int
	for _, e := range r.cfg.Checks {
		every = append(every, add(e))
	}
	for i := range r.kinds {
		k := &r.kinds[i]
		k.checks = slices.Clone(every)
		for _, e := range k.Checks {
			if j := add(e); !slices.Contains(k.checks, j) {
				k.checks = append(k.checks, j)
			}
		}
	}
}

// Run drives the load described by cfg until its duration ends or ctx is
// cancelled, writing a line per stats interval to cfg.Progress and
// reporting each measured interval to cfg.OnInterval, and returns what was
// measured; the writers beside Result (WriteJSON, WriteVegeta, HDRLog) put
// it in files. A cancelled ctx once the load has started is no error: the
// Result says Interrupted and holds what was measured. An error means no
// measurement (bad config, target down), except that a cancel while waiting
// for StartAt returns an error wrapping ErrInterrupted and ctx's error
// together with a Result (every count 0, Interrupted), so a caller can
// still write what it owes. Failed requests are counted in the Result.
func Run(ctx context.Context, cfg Config) (*result.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.effective()
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
	seed := time.Now().UnixNano()
	kinds, table, err := newKinds(&cfg, runID(seed))
	if err != nil {
		return nil, err
	}
	var h2req *h2Requests // built before the preflight, which checks the server's SETTINGS allow it
	if cfg.HTTP2 {
		if h2req, err = newH2Requests(&cfg, runID(seed)); err != nil {
			return nil, err
		}
	}
	var tlsConf *tls.Config
	var tlsInfo *result.TLSInfo
	if cfg.TLS != nil {
		if tlsConf, err = cfg.TLS.tlsConfig(cfg.tlsHost(), cfg.HTTP2); err != nil {
			return nil, err
		}
		if tlsInfo, err = tlsPreflight(&cfg, tlsConf, h2req); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrTargetDown, err)
		}
	} else if cfg.HTTP2 {
		if err := h2Preflight(&cfg, h2req); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrTargetDown, err)
		}
	} else if err := preflight(&cfg); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTargetDown, err)
	}
	if err := waitForStart(ctx, &cfg); err != nil {
		if errors.Is(err, ErrInterrupted) {
			res := interruptedBeforeStart(cfg, kinds, table)
			res.Thresholds, _ = result.JudgeThresholds(res, cfg.Thresholds)
			return res, err
		}
		return nil, err
	}
	r := &runner{cfg: cfg, tmpl: kinds[0].tmpl, kinds: kinds, table: table, base: time.Now(), seed: seed,
		connReqs: make(chan connRequest, cfg.Concurrency), tlsConf: tlsConf, tlsInfo: tlsInfo, h2req: h2req}
	r.parseChecks()
	r.feeds = numberFeeds(kinds)
	r.unknownPlaceholders = cfg.unknownPlaceholderWarning()
	r.stagePlan, r.stagesSkipped = newStagePlan(&r.cfg)
	r.ramp = newConnRamp(&r.cfg)
	if r.family, r.sockaddr, err = resolve(&r.cfg); err != nil {
		return nil, err
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
	r.ioBackend, r.ioFallback = ResolveIOBackend(cfg.IOBackend)
	for i := range cfg.NetworkThreads {
		t, err := newNetThread(r, i)
		if err != nil {
			for _, t := range r.threads {
				t.eng.close()
			}
			return nil, err
		}
		r.threads = append(r.threads, t)
	}
	res := r.drive(ctx)
	res.Thresholds, _ = result.JudgeThresholds(res, cfg.Thresholds)
	return res, nil
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

// interruptedBeforeStart is the result of a run interrupted while it
// waited for --start-at: nothing was measured, and it says so as after an
// interrupt during the warm-up (every count 0, Interrupted), so that the
// outputs a caller writes from it replace whatever an earlier run left.
func interruptedBeforeStart(cfg Config, kinds []kindSpec, table []uint8) *result.Result {
	r := &runner{cfg: cfg, tmpl: kinds[0].tmpl, kinds: kinds, table: table, base: time.Now()}
	r.mStart = max(0, int64(time.Until(cfg.StartAt))) // where the window was to open
	r.mEnd = r.mStart + int64(cfg.Duration)
	c := newCollector(r, io.Discard)
	c.endNs = r.mStart
	c.cpuStart, _ = procstat.SelfCPU()
	res := c.result(c.cpuStart, true)
	res.Warnings = append(res.Warnings, "interrupted while waiting for --start-at: the measured window never opened and nothing was measured")
	return res
}

// drive starts the threads, collects every interval, waits for the drain,
// and builds the result.
func (r *runner) drive(ctx context.Context) *result.Result {
	cfg := &r.cfg
	out := cfg.Progress
	if out == nil {
		out = io.Discard
	}
	// Before any loop starts: a thread whose data file runs out cancels
	// it (datarun.go).
	ctx, r.endEarly = context.WithCancelCause(ctx)
	defer r.endEarly(nil)
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
	r.startConnections()
	if r.ramp != nil {
		connectors.Go(func() { r.runRamp(connCtx) })
	}
	c := newCollector(r, out)
	if r.unknownPlaceholders != "" && !cfg.warnedAtStart {
		fmt.Fprintf(out, "warning: %s\n", r.unknownPlaceholders)
	}
	result.IntervalHeader(out)
	interrupted := c.run(ctx, loopsDone)
	cpuEnd, _ := procstat.SelfCPU()
	stopConnecting()
	connectors.Wait()
	c.gatherKinds()
	c.gatherStages()
	c.accountTails()
	c.snapshot(result.PhaseDone, 0, c.drainHist)
	res := c.result(cpuEnd, interrupted)
	if r.unknownPlaceholders != "" {
		res.Warnings = append(res.Warnings, r.unknownPlaceholders)
	}
	if r.rowsOut.Load() {
		res.Warnings = append(res.Warnings, r.rowsOutWarning(c.endNs))
	}
	for _, t := range r.threads {
		if t.startErr != nil { // its connections never ran: the run says so
			res.Warnings = append(res.Warnings, fmt.Sprintf("network thread %d did not start its %s engine: %v", t.id, r.ioBackend, t.startErr))
		}
	}
	return res
}
