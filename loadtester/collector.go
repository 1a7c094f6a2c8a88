package loadtester

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"weaseldb/internal/numfmt"
	"weaseldb/internal/procstat"
	"weaseldb/loadtester/result"
)

// The collector runs on Run's goroutine: it owns everything below. It
// reaches into a network thread only through the thread's books, under the
// thread's lock (take), and, once every loop has exited, through what each
// thread left (its tail, service histogram, samples and CPU).

// collector merges the threads' interval histograms and counters.
type collector struct {
	r         *runner
	out       io.Writer               // progress lines
	interval  *hdrhistogram.Histogram // scratch: one interval, all threads
	total     *hdrhistogram.Histogram // the measured run
	counts    counters                // the measured run
	warm      counters                // requests due during the warm-up, whenever they ended
	carry     counters                // measured requests taken in a warm-up collection
	carryHist *hdrhistogram.Histogram // and their latencies
	intervals []result.Interval
	ivRecs    []intervalRecord // each measured interval's histogram, for the tail's lower bounds
	lastNs    int64            // end of the last collected interval
	endNs     int64            // where the measured window closed
	// lastAsPlanned is set for the last collection of a run that ended as
	// planned (not interrupted): a short last interval says "last".
	lastAsPlanned bool
	cpuStart      time.Duration
	measuring     bool
	openConns     int
	inFlight      int64 // written, not yet answered or failed, both phases (Snapshot)
	draining      bool
	drainHist     *hdrhistogram.Histogram // the last interval's latencies, for the last Snapshot
	// From the threads' tails (accountTails).
	unfinished, dropped         int64
	warmUnfinished, warmDropped int64
	scheduled                   int64
	lowerBounds                 int64        // values recorded as lower bounds
	amended                     bool         // lower bounds landed in intervals already reported
	kinds                       []groupTally // workload: each kind's sums (kinds.go)
	stages                      []groupTally // --stages: each stage's sums (stages.go)
}

// intervalRecord keeps one measured interval's histogram, compressed.
type intervalRecord struct {
	startNs, endNs int64
	enc            []byte
}

func newCollector(r *runner, out io.Writer) *collector {
	return &collector{r: r, out: out, interval: newHistogram(), total: newHistogram(),
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
		b := &t.acct.books
		t.acct.mu.Lock()
		st, h := b.measured.take()
		ws, wh := b.warm.take()
		open += b.open
		t.acct.mu.Unlock()
		c.interval.Merge(h)
		if warmInto != nil {
			warmInto.Merge(wh)
		}
		b.measured.giveBack(h)
		b.warm.giveBack(wh)
		measured.add(&st)
		warm.add(&ws)
		c.inFlight += st.sent + ws.sent - st.requests - ws.requests - st.failed() - ws.failed()
	}
	c.openConns = open
	return measured, warm
}

// run collects every interval until the measured window closes (its
// duration, or ctx cancelled: it reports which), waits for the threads to
// drain, and collects the last interval, which holds the responses that
// arrived during the drain.
func (c *collector) run(ctx context.Context, loopsDone <-chan struct{}) (interrupted bool) {
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
		c.collect(next)
	}
	c.startMeasuring()
	end := r.mEnd
	if !interrupted && !c.sleepUntil(ctx, end) {
		interrupted = true
	}
	ranOut := interrupted && context.Cause(ctx) == errRowsOut
	if ranOut { // not an interrupt: the run ends where its data did (datarun.go)
		interrupted = false
	} else if interrupted {
		end = max(int64(time.Since(r.base)), c.lastNs)
		r.windowEnd.Store(end)
		for _, t := range r.threads {
			t.wake()
		}
	}
	c.draining = true
	c.snapshot(result.PhaseDrain, 0, nil)
	c.waitForDrain(loopsDone)
	if ranOut { // read once every thread is done: each may have moved it earlier
		end = max(r.windowEnd.Load(), c.lastNs, r.mStart)
	}
	if c.lastNs < r.mStart && end > r.mStart {
		c.collect(r.mStart)
	}
	c.endNs = end
	c.lastAsPlanned = !interrupted
	c.collect(end)
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
func (c *collector) collect(endNs int64) {
	startNs := c.lastNs
	c.lastNs = endNs
	if endNs <= c.r.mStart {
		c.collectWarmup(startNs, endNs)
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
	if c.lastAsPlanned {
		result.PrintLastInterval(c.out, iv, c.r.cfg.StatsInterval)
	} else {
		result.PrintInterval(c.out, iv, false, c.r.cfg.StatsInterval)
	}
	if report := c.r.cfg.OnInterval; report != nil {
		report(result.IntervalReport{Interval: iv, Start: c.r.base.Add(time.Duration(startNs)),
			End: c.r.base.Add(time.Duration(endNs)), Hist: c.interval})
	}
	if c.draining { // the drain's responses go with the run's last Snapshot
		c.drainHist = c.interval
		return
	}
	c.snapshot(result.PhaseMeasured, iv.RequestsPerSec, c.interval)
}

// collectWarmup prints a warm-up interval from the requests due in the
// warm-up. Measured requests answered before this collection (just past the
// window's start) are carried into the first measured interval.
func (c *collector) collectWarmup(startNs, endNs int64) {
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
	result.PrintInterval(c.out, iv, true, c.r.cfg.StatsInterval)
	c.snapshot(result.PhaseWarmup, iv.RequestsPerSec, nil)
}

func (c *collector) newInterval(st counters, startNs, endNs int64) result.Interval {
	length := time.Duration(endNs - startNs).Seconds()
	iv := result.Interval{LengthS: length, Requests: st.requests, Errors: st.totalErrors(), OpenConnections: c.openConns}
	if iv.Errors > 0 { // a map only for an interval with errors: once a stats interval at most
		iv.ErrorsByKind = st.errorsByKind()
	}
	if length > 0 {
		iv.RequestsPerSec = float64(st.requests) / length
	}
	if c.interval.TotalCount() > 0 {
		iv.P50NS, iv.P99NS = c.interval.ValueAtQuantile(50), c.interval.ValueAtQuantile(99)
	}
	return iv
}

// result builds the Result of the measured window [mStart, endNs].
func (c *collector) result(cpuEnd time.Duration, interrupted bool) *result.Result {
	r := c.r
	cfg := &r.cfg
	dur := max(0, time.Duration(c.endNs-r.mStart).Seconds())
	n := &c.counts
	res := &result.Result{Version: result.ResultVersion, Target: cfg.targetName(), Instance: cfg.instanceName(),
		WindowStart: r.base.Add(time.Duration(r.mStart)).UTC().Format(time.RFC3339Nano),
		CPUs:        runtime.NumCPU(), Machine: machineName(), ClockSource: clockSource(), Requests: n.requests,
		Successes: n.successes(), Errors: n.totalErrors(), DurationS: dur,
		Answered: n.requests, Failed: n.failed(), Unfinished: c.unfinished, Dropped: c.dropped,
		Latency: latencyOf(c.total), Intervals: c.intervals, ErrorsByKind: n.errorsByKind(),
		StatusCodes: n.statusCodes(), ConnectionsOpened: n.connsOpened, ReconnectBackoffs: n.backoffs,
		ReconnectBackoffS: time.Duration(n.backoffNs).Seconds(), ReconnectBackoffMaxS: time.Duration(n.backoffMaxNs).Seconds(),
		BytesIn: n.bytesIn, BytesOut: n.bytesOut, RateAsked: cfg.askedRate(),
		WaitedForConn: n.waitedForConn, LateSends: n.lateSends, LowerBounds: c.lowerBounds,
		RecordErrors: n.recordErrors, Interrupted: interrupted, Config: cfg.resultRecord(), Command: cfg.Command}
	res.SetHistogram(c.total)
	res.SetAmended(c.amended)
	res.Due = res.Answered + res.Failed + res.Unfinished + res.Dropped
	if cfg.Warmup > 0 {
		w := &c.warm
		res.Warmup = &result.Accounting{Answered: w.requests, Failed: w.failed(), Unfinished: c.warmUnfinished, Dropped: c.warmDropped}
		res.Warmup.Due = res.Warmup.Answered + res.Warmup.Failed + res.Warmup.Unfinished + res.Warmup.Dropped
	}
	if !cfg.StartAt.IsZero() && c.ivRecs != nil { // the window opened at --start-at (to the clock read)
		res.WindowStart = cfg.StartAt.UTC().Format(time.RFC3339Nano)
	}
	if res.Intervals == nil {
		res.Intervals = []result.Interval{}
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
	if cfg.OpenLoop() {
		svc := newHistogram()
		for _, t := range r.threads {
			svc.Merge(t.acct.books.svc)
		}
		l := latencyOf(svc)
		res.ServiceLatency = &l
		late := newHistogram()
		for _, t := range r.threads {
			late.Merge(t.acct.books.lateHist)
		}
		if late.TotalCount() > 0 {
			ll := latencyOf(late)
			res.LateSendLateness = &ll
		}
		if enc, err := svc.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
			res.ServiceHistogram = string(enc)
		}
	}
	if r.checks != nil {
		failed := newHistogram()
		for _, t := range r.threads {
			failed.Merge(t.acct.books.failedHist)
		}
		res.SetFailedHistogram(failed)
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
	if r.tlsInfo != nil {
		res.TLS = c.tlsResult()
	}
	if cfg.HTTP2 {
		res.Protocol = "h2c"
		if cfg.TLS != nil {
			res.Protocol = "h2"
		}
	}
	res.IOBackend, res.IOBackendFallback = r.ioBackend, r.ioFallback
	res.ResponseStamps = cfg.OpenLoop() && len(r.threads) > 0
	for _, t := range r.threads {
		res.BusiestThreadCPU = max(res.BusiestThreadCPU, t.cpu.busy())
		res.ResponseStamps = res.ResponseStamps && t.rx.on
	}
	if c.kinds == nil {
		c.gatherKinds()
	}
	res.Kinds = c.kindResults(dur)
	if c.stages == nil {
		c.gatherStages()
	}
	res.Stages = c.stageResults()
	if r.stagesSkipped != "" {
		res.Warnings = append(res.Warnings, r.stagesSkipped)
	}
	res.Checks = c.checkResults()
	c.checkBooks(res)
	c.checkKinds(res)
	c.checkStages(res)
	c.judgeClient(res)
	if cfg.VegetaMax > 0 {
		v := c.vegetaResults(res)
		res.SetVegeta(v)
		res.VegetaSampleEvery = v.Every
	}
	return res
}

// tlsResult adds up the threads' handshakes (once every loop has exited).
func (c *collector) tlsResult() *result.TLSInfo {
	info := *c.r.tlsInfo
	h := newHistogram()
	info.SetHistogram(h)
	for _, t := range c.r.threads {
		if tb := t.acct.books.tls; tb != nil {
			h.Merge(tb.hist)
			info.Handshakes += tb.handshakes
			info.Resumed += tb.resumed
		}
	}
	info.Handshake = latencyOf(h)
	if enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
		info.Histogram = string(enc)
	}
	return &info
}

// vegetaResults gathers the threads' samples at one stride (the largest of
// any thread, so every thread is sampled alike), in due-time order.
func (c *collector) vegetaResults(res *result.Result) *result.VegetaRun {
	r := c.r
	v := &result.VegetaRun{Every: 1, Base: r.base, BytesOut: uint64(len(r.tmpl.static))}
	for _, k := range r.kinds {
		cfg := r.cfg
		cfg.Path = k.Path
		v.URLs, v.Methods = append(v.URLs, cfg.TargetURL()), append(v.Methods, k.Method)
	}
	for _, t := range r.threads {
		v.Every = max(v.Every, t.acct.books.samples.stride)
		v.Offered += t.acct.books.samples.seen
	}
	var kept []sample
	for _, t := range r.threads {
		t.acct.books.samples.thin(v.Every)
		kept = append(kept, t.acct.books.samples.kept...)
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].start < kept[j].start })
	v.Kept = make([]result.VegetaSample, len(kept))
	for i, s := range kept {
		v.Kept[i] = result.VegetaSample{Start: s.start, Latency: s.latency, Code: s.code, Kind: s.kind, Err: s.errorName()}
	}
	if sent := res.Answered + res.Failed + res.Unfinished; (len(r.kinds) > 1 || r.tmpl.dynamic()) && sent > 0 {
		v.BytesOut = uint64(res.BytesOut / sent) // requests differ: the mean size
	}
	return v
}

// checkBooks compares the four counts with what was counted independently
// as it happened: requests written, and (open loop) the schedule's requests
// due in the window. A difference is a bug of this tool, and says so.
func (c *collector) checkBooks(res *result.Result) {
	if sent := c.counts.sent; sent != res.Answered+res.Failed+res.Unfinished {
		res.Warnings = append(res.Warnings, fmt.Sprintf(
			"accounting mismatch (a load_tester bug; please report it): %d requests sent in the window, but answered %d + failed %d + unfinished %d = %d",
			sent, res.Answered, res.Failed, res.Unfinished, res.Answered+res.Failed+res.Unfinished))
	}
	if c.r.cfg.OpenLoop() && c.scheduled != res.Due {
		res.Warnings = append(res.Warnings, fmt.Sprintf(
			"accounting mismatch (a load_tester bug; please report it): the schedule had %d requests due in the window, the counts add up to %d",
			c.scheduled, res.Due))
	}
}

// judgeClient sets client_bound with a plain reason and adds warnings.
func (c *collector) judgeClient(res *result.Result) {
	var reasons []string
	short := res.DurationS < minJudgedWindow.Seconds()
	if short && res.Requests > 0 && !res.Interrupted { // an interrupt says enough
		res.Warnings = append(res.Warnings, fmt.Sprintf("the measured window (%v) was too short to judge whether the client's CPU was the bottleneck",
			time.Duration(res.DurationS*1e9).Round(time.Microsecond)))
	}
	if !short && (res.ClientCPUFraction >= clientBoundCPU || res.BusiestThreadCPU >= clientBoundCPU) {
		reasons = append(reasons, fmt.Sprintf(
			"the client used %.0f%% of the cores its %d network thread(s) could use (busiest thread %.0f%% of a core): the numbers may measure the client, not the server; add --network-threads or free a core",
			100*res.ClientCPUFraction, c.r.cfg.NetworkThreads, 100*res.BusiestThreadCPU))
	}
	judgeSchedule(res)
	if len(reasons) > 0 {
		res.ClientBound = true
		res.ClientBoundReason = reasons[0]
		res.Warnings = append(res.Warnings, reasons...)
	}
	if res.RecordErrors > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s fell outside the histogram's range and %s not recorded", numfmt.Count(res.RecordErrors, "latency"), numfmt.WasWere(res.RecordErrors)))
	}
	if res.WaitedForConn > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s found every connection busy when due and %s sent late (the wait counts as latency); raise --concurrency if that was not the point", numfmt.Count(res.WaitedForConn, "request"), numfmt.WasWere(res.WaitedForConn)))
	}
	if res.Dropped > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s due in the window %s never sent: every connection was busy until the drain (%v) ended", numfmt.Count(res.Dropped, "request"), numfmt.WasWere(res.Dropped), c.r.cfg.drain()))
	}
	if w := res.Warmup; w != nil && w.Unfinished+w.Dropped > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the warm-up left %s unfinished and %d dropped (not in the counts above, which are the measured window's)", numfmt.Count(w.Unfinished, "request"), w.Dropped))
	}
	if res.Unfinished > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s %s sent and had no complete response when the drain (%v) ended", numfmt.Count(res.Unfinished, "request"), numfmt.WasWere(res.Unfinished), c.r.cfg.drain()))
	}
}
