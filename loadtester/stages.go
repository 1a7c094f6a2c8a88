package loadtester

import (
	"fmt"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"weaseldb/loadtester/arrival"
	"weaseldb/loadtester/result"
)

// Per-stage results of a ramp (--stages, or the closed loop's
// --concurrency-stages): every request is counted in the stage it was due
// in, by its intended send time on its thread's schedule (which the ramp
// defines; in the closed loop, its send), the way kinds are counted
// (kinds.go): answered
// and failed as they happen, unfinished and dropped from the tails. So a
// stage's counts add up as the run's do, and the stages add up to the run.
//
// Who owns what: the runner's stage bounds are set before any thread
// starts and read-only after; a thread's stage books are its loop's alone
// while it runs, read by the collector once every loop has exited.

// maxStageResults bounds the stages that get results of their own: each
// costs every thread a latency histogram. A longer list (a ramp drawn as
// many short stages) is run all the same, with a warning.
const maxStageResults = 100

// stagePlan is the ramp's stages as the books see them.
type stagePlan struct {
	stages      []arrival.Stage
	from        float64 // the rate the first stage starts from
	ends        []int64 // each stage's end, ns from the schedule's start
	connections bool    // the stages ramp the closed loop's connections, not a rate
}

// newStagePlan is cfg's plan; nil without stages, or with more stages than
// get results (skipped says so).
func newStagePlan(cfg *Config) (plan *stagePlan, skipped string) {
	list, flag, from := cfg.Stages, "--stages", cfg.Rate
	if cfg.ConcurrencyStages != "" {
		list, flag, from = cfg.ConcurrencyStages, "--concurrency-stages", 0
	}
	if list == "" {
		return nil, ""
	}
	stages, _ := arrival.ParseStages(list) // validated
	if len(stages) > maxStageResults {
		return nil, fmt.Sprintf("%s has %d stages: results per stage are kept for at most %d (the run's totals are exact)", flag, len(stages), maxStageResults)
	}
	p := &stagePlan{stages: stages, from: from, connections: cfg.ConcurrencyStages != ""}
	var at int64
	for _, st := range stages {
		at += int64(st.Duration)
		p.ends = append(p.ends, at)
	}
	return p, ""
}

// stageOf is the stage a request due at due (the loop's clock) was due in:
// the last stage for anything due after the ramp's end.
func (a *accounts) stageOf(due int64) int {
	ends := a.r.stagePlan.ends
	rel := due - a.stageClock()
	i := sort.Search(len(ends), func(i int) bool { return rel < ends[i] })
	return min(i, len(ends)-1)
}

// bookStageAnswer books a measured answer of latency with status in its
// stage (a stage reports no service time: none is kept).
func (a *accounts) bookStageAnswer(due, latency int64, status int) {
	sb := &a.sb[a.stageOf(due)]
	sb.hist.RecordValue(latency)
	sb.answered++
	sb.status[status]++
}

// stageEndAbs is where stage i ends on the thread's clock.
func (a *accounts) stageEndAbs(i int) int64 { return a.stageClock() + a.r.stagePlan.ends[i] }

// stageClock is where the stages start on the loop's clock: the open
// loop's schedule starts with the thread's first connection, the closed
// loop's ramp with the load.
func (a *accounts) stageClock() int64 {
	if a.pace.on() {
		return a.pace.start
	}
	return a.r.startNs
}

// gatherStages adds every thread's stage books into the collector's
// tallies (after every loop has exited).
func (c *collector) gatherStages() {
	plan := c.r.stagePlan
	if plan == nil {
		return
	}
	c.stages = make([]groupTally, len(plan.stages))
	for i := range c.stages {
		c.stages[i].hist = newHistogram()
	}
	for _, t := range c.r.threads {
		mergeGroups(c.stages, t.acct.sb)
	}
}

// stageBound records n lower bounds of value v in stage i (a request that
// never finished).
func (c *collector) stageBound(i int, v, n int64, unfinished bool) {
	if c.stages == nil {
		return
	}
	c.stages[i].addBound(v, -1, n, unfinished)
}

// stageResults builds Result.Stages from the tallies (nil without stages).
func (c *collector) stageResults() []result.StageResult {
	r := c.r
	plan := r.stagePlan
	if plan == nil || c.stages == nil {
		return nil
	}
	// The stages' times are on the schedule's clock, which starts with the
	// first connection of each thread: the earliest is the run's.
	origin := int64(-1)
	for _, t := range r.threads {
		if t.pace.scheduling && (origin < 0 || t.pace.start < origin) {
			origin = t.pace.start
		}
	}
	if origin < 0 || plan.connections {
		origin = r.startNs
	}
	out := make([]result.StageResult, len(plan.stages))
	var start int64
	from := plan.from
	for i, st := range plan.stages {
		tl := &c.stages[i]
		end := plan.ends[i]
		measured := min(origin+end, c.endNs) - max(origin+start, r.mStart)
		s := result.StageResult{Stage: i + 1, StartS: time.Duration(start).Seconds(), EndS: time.Duration(end).Seconds(),
			From: from, To: st.Target, Connections: plan.connections, MeasuredS: max(0, time.Duration(measured).Seconds()),
			Answered: tl.answered, Failed: tl.failed, Unfinished: tl.unfinished, Dropped: tl.dropped,
			Latency: latencyOf(tl.hist)}
		s.Due = s.Answered + s.Failed + s.Unfinished + s.Dropped
		for code, n := range tl.status {
			if code >= 200 && code < 300 {
				s.Successes += n
			}
		}
		switch {
		case end <= int64(r.cfg.Warmup) && s.Due == 0:
			// A warm-up stage by the plan, with nothing counted: the few ms
			// the schedule's clock starts after the run's put its end just
			// inside the window, which showed a row of zeros.
			s.MeasuredS, s.Unmeasured = 0, "warm-up"
		case s.MeasuredS > 0:
			s.RequestsPerSec = float64(s.Answered) / s.MeasuredS
		case origin+start >= c.endNs:
			s.Unmeasured = "after the end"
		default:
			s.Unmeasured = "warm-up"
		}
		if enc, err := tl.hist.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
			s.Histogram = string(enc)
		}
		s.SetHistogram(tl.hist)
		s.SetFailedHistogram(tl.failedHist)
		out[i] = s
		start, from = end, st.Target
	}
	return out
}

// checkStages: the stages' counts must add up to the run's.
func (c *collector) checkStages(res *result.Result) {
	var sums groupSums
	for _, s := range res.Stages {
		sums.add(s.Due, s.Answered, s.Failed, s.Unfinished, s.Dropped)
	}
	sums.check(res, "stages", res.Stages != nil)
}
