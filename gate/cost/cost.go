package cost

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"weaseldb/gate/callgrind"
	"weaseldb/gate/result"
	"weaseldb/gate/valgrind"
	"weaseldb/internal/stats"
)

// The cost tier: instructions per request, counted under callgrind. A count
// does not care what the other core is doing, so it sees a 1% step that the
// time tier's req/s, on a shared machine that drifts by up to 10% within
// minutes, never can; A and B even run at the same time, one per CPU. It
// cannot see what costs time without costing instructions (cache misses,
// lock contention, the kernel's side of a system call): the time tier stays
// for those (docs/gate.md, "The cost tier").

// Options configure the cost tier.
type Options struct {
	Requests int     // counted requests per run, after the setup
	Rate     float64 // their open-loop rate, the same on both sides
	Runs     int     // runs per side before the first look
	MaxRuns  int     // runs per side at most while undecided
	// Tolerance is the extra cost B may have before it is a regression
	// (0.005: half a percent more instructions per request).
	Tolerance float64
	// MaxSpread is how far one side's runs may disagree (max/min - 1)
	// before the side is "could not judge": a count that moves more than
	// this is following something other than the requests.
	MaxSpread float64
	Valgrind  string // valgrind binary ("" looks it up in $PATH)
	Control   string // callgrind_control ("" looks it up)
	// Godebug is added to the server's GODEBUG under valgrind (e.g.
	// "cpu.avx2=off"), after what the gate turns off itself
	// (gate/valgrind).
	Godebug string
	// SetupSlowdown paces open-loop setups this many times slower (and
	// longer) under valgrind.
	SetupSlowdown float64
	StartTimeout  time.Duration
	// KeepDir, when set, keeps every run's files there (the callgrind
	// dumps, for callgrind_annotate; valgrind's logs; the loads' JSON)
	// instead of in a temporary directory removed at the end.
	KeepDir string
}

// DefaultOptions: 1,000 requests at 250/s (4 s a run), 3 runs a side,
// up to 5; a 0.5% tolerance against runs that agree within 0.2-0.3% here
// (docs/gate.md, "The cost tier").
func DefaultOptions() Options {
	return Options{Requests: 1000, Rate: 250, Runs: 3, MaxRuns: 5, Tolerance: 0.005, MaxSpread: 0.01,
		SetupSlowdown: 10, StartTimeout: 60 * time.Second}
}

// Validate checks the options; the error names the flag.
func (c Options) Validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(c.Requests >= 10, "--cost-requests %d: want at least 10", c.Requests)
	check(c.Rate > 0 && !math.IsInf(c.Rate, 0), "--cost-rate %g: want > 0", c.Rate)
	check(c.Runs >= 2, "--cost-runs %d: want at least 2", c.Runs)
	check(c.MaxRuns >= c.Runs, "--cost-max-runs %d: want at least --cost-runs (%d)", c.MaxRuns, c.Runs)
	check(c.Tolerance > 0 && c.Tolerance < 1, "--cost-tolerance %g: want a fraction between 0 and 1", c.Tolerance)
	check(c.MaxSpread > 0, "--cost-max-spread %g: want > 0", c.MaxSpread)
	return errors.Join(errs...)
}

// Lab runs one cost run; the tests give a synthetic one.
type Lab interface {
	RunCost(ctx context.Context, spec Spec) (result.CostSample, error)
}

type ProcessLab struct{}

func (ProcessLab) RunCost(ctx context.Context, spec Spec) (result.CostSample, error) {
	return RunOnce(ctx, spec)
}

// costTools finds valgrind and callgrind_control; the error is the one
// line a "could not judge" gives.
func costTools(c *Options) error {
	for _, t := range []struct {
		path *string
		name string
	}{{&c.Valgrind, "valgrind"}, {&c.Control, "callgrind_control"}} {
		if *t.path == "" {
			*t.path = t.name
		}
		p, err := exec.LookPath(*t.path)
		if err != nil {
			return fmt.Errorf("the cost tier needs %s (apt-get install valgrind): %w", t.name, err)
		}
		*t.path = p
	}
	return nil
}

// Pair is what the cost tier needs of the two sides.
type Pair struct {
	BinA, BinB string // the servers' binaries
	CfgA, CfgB []byte // their configs (the interfaces are replaced)
	LoadTester string
	Dir        string   // every run's files go here
	env        []string // the servers' environment under valgrind (the preflight's)
}

// judgeCost runs one scenario's cost runs, A and B at the same time, and
// judges them.
func judgeCost(ctx context.Context, c Options, sc Scenario, p Pair, l Lab, progress io.Writer) *result.CostJudgement {
	began := time.Now()
	j := &result.CostJudgement{Tolerance: c.Tolerance, MaxSpread: c.MaxSpread}
	j.Requests, j.Rate = costLoad(c, sc)
	defer func() { j.ElapsedS = time.Since(began).Seconds() }()
	var a, b []result.CostSample
	for run := 1; run <= c.MaxRuns; run++ {
		sa, sb, err := costRound(ctx, c, sc, p, l, run)
		if err != nil {
			j.Verdict, j.Reason = result.CostCouldNotJudge, err.Error()
			j.A, j.B = costSide(a), costSide(b)
			return j
		}
		a, b = append(a, sa), append(b, sb)
		if progress != nil {
			fmt.Fprintf(progress, "gate: cost %s run %d: A %.1f, B %.1f instructions/request\n", sc.Name, run,
				sa.InstructionsPerRequest, sb.InstructionsPerRequest)
		}
		if run < c.Runs {
			continue
		}
		j.A, j.B = costSide(a), costSide(b)
		if decided := judgeCostRuns(j, run == c.MaxRuns); decided {
			return j
		}
	}
	return j
}

// costRound is one run of each side, at the same time.
func costRound(ctx context.Context, c Options, sc Scenario, p Pair, l Lab, run int) (a, b result.CostSample, err error) {
	requests, rate := costLoad(c, sc)
	spec := func(side, bin string, cfg []byte) Spec {
		return Spec{Side: side, Binary: bin, ConfigData: cfg, Dir: p.Dir, Scenario: sc, Run: run, Requests: requests,
			Rate: rate, LoadTester: p.LoadTester, Valgrind: c.Valgrind, Control: c.Control, Env: p.env,
			SetupSlowdown: c.SetupSlowdown, StartTimeout: c.StartTimeout}
	}
	var wg sync.WaitGroup
	var errA, errB error
	wg.Add(2)
	go func() { defer wg.Done(); a, errA = l.RunCost(ctx, spec("A", p.BinA, p.CfgA)) }()
	go func() { defer wg.Done(); b, errB = l.RunCost(ctx, spec("B", p.BinB, p.CfgB)) }()
	wg.Wait()
	return a, b, errors.Join(errA, errB)
}

// costLoad is the scenario's counted requests and their rate: its own
// [scenario.cost] where it gives them, else the run's.
func costLoad(c Options, sc Scenario) (requests int, rate float64) {
	return cmp.Or(sc.Cost.Requests, c.Requests), cmp.Or(sc.Cost.Rate, c.Rate)
}

// costSide summarises one side's runs.
func costSide(runs []result.CostSample) result.CostSide {
	s := result.CostSide{Runs: runs}
	if len(runs) == 0 {
		return s
	}
	pick := func(f func(result.CostSample) float64) []float64 {
		out := make([]float64, len(runs))
		for i, r := range runs {
			out[i] = f(r)
		}
		return out
	}
	per := pick(func(r result.CostSample) float64 { return r.InstructionsPerRequest })
	s.InstructionsPerRequest = stats.Median(per)
	s.UnfilteredPerRequest = stats.Median(pick(func(r result.CostSample) float64 { return r.UnfilteredPerRequest }))
	s.AllocsPerRequest = stats.Median(pick(func(r result.CostSample) float64 { return r.AllocsPerRequest }))
	s.BytesPerRequest = stats.Median(pick(func(r result.CostSample) float64 { return r.BytesPerRequest }))
	s.SyscallsPerRequest = stats.Median(pick(func(r result.CostSample) float64 { return r.SyscallsPerRequest }))
	if lo := slices.Min(per); lo > 0 {
		s.Spread = slices.Max(per)/lo - 1
	}
	return s
}

// judge applies the cost rule to the runs so far; it reports whether the
// verdict is final (final: no more runs will come).
//
//   - either side's runs disagree by more than MaxSpread: could not judge;
//   - B/A - 1 at most the tolerance: pass;
//   - the run pairs' lower quartile (Low) above 1 + tolerance: regression;
//   - else undecided: more runs, and at the last one could not judge.
func judgeCostRuns(j *result.CostJudgement, final bool) bool {
	a, b := j.A, j.B
	if a.InstructionsPerRequest <= 0 || b.InstructionsPerRequest <= 0 {
		j.Verdict, j.Reason = result.CostCouldNotJudge, "no instructions counted"
		return true
	}
	j.Ratio = b.InstructionsPerRequest / a.InstructionsPerRequest
	j.UnfilteredRatio = b.UnfilteredPerRequest / a.UnfilteredPerRequest
	if a.AllocsPerRequest > 0 {
		j.AllocsRatio = b.AllocsPerRequest / a.AllocsPerRequest
	}
	j.Low, j.High = pairRatioRange(a.Runs, b.Runs)
	j.Moved = abDeltas(a.Runs, b.Runs)
	j.Unsteady, j.UnsteadySide = nil, ""
	more := 100 * (j.Ratio - 1)
	switch {
	case a.Spread > j.MaxSpread || b.Spread > j.MaxSpread:
		j.Verdict = result.CostCouldNotJudge
		j.Reason = fmt.Sprintf("the runs disagree: A's spread %.2f%%, B's %.2f%%, more than the %.2f%% allowed (docs/gate.md)",
			100*a.Spread, 100*b.Spread, 100*j.MaxSpread)
		j.UnsteadySide, j.Unsteady = "A", unsteadyDeltas(a.Runs)
		if b.Spread > a.Spread {
			j.UnsteadySide, j.Unsteady = "B", unsteadyDeltas(b.Runs)
		}
		if len(j.Unsteady) > 0 {
			j.Reason += fmt.Sprintf("; from %s's cheapest run to its dearest, instructions per request moved most in %s (code whose cost follows the clock belongs in the filter, gate/callgrind/filter.go)",
				j.UnsteadySide, callgrind.FormatDeltas(j.Unsteady))
		}
		return true
	case j.Ratio-1 <= j.Tolerance:
		j.Verdict = result.CostPass
		j.Reason = fmt.Sprintf("B costs %+.2f%% instructions per request (%.0f against %.0f), within the %.2f%% tolerance",
			more, b.InstructionsPerRequest, a.InstructionsPerRequest, 100*j.Tolerance)
		return true
	case j.Low-1 > j.Tolerance:
		j.Verdict = result.CostRegression
		j.Reason = fmt.Sprintf("B costs %+.2f%% instructions per request (%.0f against %.0f; run pairs %+.2f%% to %+.2f%%), beyond the %.2f%% tolerance",
			more, b.InstructionsPerRequest, a.InstructionsPerRequest, 100*(j.Low-1), 100*(j.High-1), 100*j.Tolerance)
		if len(j.Moved) > 0 {
			j.Reason += fmt.Sprintf("; moved most, instructions per request from A's median run to B's: %s", callgrind.FormatDeltas(j.Moved))
		}
		return true
	case final:
		j.Verdict = result.CostCouldNotJudge
		j.Reason = fmt.Sprintf("B costs %+.2f%% instructions per request, past the %.2f%% tolerance, but its runs overlap it (run pairs %+.2f%% to %+.2f%%)",
			more, 100*j.Tolerance, 100*(j.Low-1), 100*(j.High-1))
		return true
	}
	return false
}

// pairRatioRange is the lower and upper quartile of B_j/A_i over every
// pair of runs (the k-th lowest and highest, k = pairs/4 + 1): one
// outlying run moves a third of the pairs at most with 3 runs a side, and
// extra runs can settle a verdict it would otherwise block.
func pairRatioRange(a, b []result.CostSample) (lo, hi float64) {
	var rs []float64
	for _, rb := range b {
		for _, ra := range a {
			if ra.InstructionsPerRequest > 0 {
				rs = append(rs, rb.InstructionsPerRequest/ra.InstructionsPerRequest)
			}
		}
	}
	if len(rs) == 0 {
		return math.NaN(), math.NaN()
	}
	slices.Sort(rs)
	k := len(rs) / 4
	return rs[k], rs[len(rs)-1-k]
}

// RunTier judges every scenario's cost, one scenario after another.
// The error is for a tier that could not start (no valgrind): every
// scenario then gets that line as its "could not judge".
func RunTier(ctx context.Context, c Options, scs []Scenario, p Pair, l Lab, progress io.Writer) []*result.CostJudgement {
	out := make([]*result.CostJudgement, len(scs))
	if err := c.Validate(); err != nil {
		return costFailed(out, c, err)
	}
	var venv *valgrind.Env
	if _, ok := l.(ProcessLab); ok {
		if err := costTools(&c); err != nil {
			return costFailed(out, c, err)
		}
		if _, err := os.Stat(p.LoadTester); err != nil {
			return costFailed(out, c, fmt.Errorf("load tester %s: %w", p.LoadTester, err))
		}
		env, err := Preflight(ctx, c, p)
		venv = &env
		if err != nil {
			out = costFailed(out, c, err)
			for _, j := range out {
				j.Valgrind = venv
			}
			return out
		}
		p.env = env.Environ()
		if len(env.CPUOff) > 0 && progress != nil {
			fmt.Fprintf(progress, "gate: cost: %s cannot execute Go's %v here; the servers run with GODEBUG=%s\n",
				cmp.Or(env.Version, "valgrind"), env.CPUOff, env.Godebug())
		}
	}
	for i, sc := range scs {
		if ctx.Err() != nil {
			out[i] = &result.CostJudgement{Verdict: result.CostCouldNotJudge, Reason: "interrupted", Tolerance: c.Tolerance}
		} else {
			out[i] = judgeCost(ctx, c, sc, p, l, progress)
		}
		out[i].Valgrind = venv
	}
	return out
}

func costFailed(out []*result.CostJudgement, c Options, err error) []*result.CostJudgement {
	for i := range out {
		out[i] = &result.CostJudgement{Verdict: result.CostCouldNotJudge, Reason: err.Error(), Tolerance: c.Tolerance, MaxSpread: c.MaxSpread,
			Requests: c.Requests, Rate: c.Rate}
	}
	return out
}
