package cpuwork

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"weaseldb/internal/procstat"
	"weaseldb/internal/stats"
)

// Stats is the cost of one SpendCPUCycles(Iterations) call over Runs timed runs
// of CallsPerRun calls each.
//
// MedianNs, MinNs and MaxNs are the measuring thread's CPU time per call
// (CLOCK_THREAD_CPUTIME_ID, the kernel's nanosecond count): on a shared
// machine the wall clock also counts time the thread sat preempted, which
// says nothing about the work, so the headline figures leave it out. The
// wall-clock figures are kept beside them.
type Stats struct {
	Iterations   int
	Runs         int
	CallsPerRun  int
	MedianNs     float64
	MinNs        float64
	MaxNs        float64
	WallMedianNs float64
	WallMinNs    float64
}

// Measure times SpendCPUCycles(iterations) over runs runs, each about runTime
// long, and returns the median, min and max ns per call.
func Measure(iterations, runs int, runTime time.Duration) (Stats, error) {
	st, err := MeasureInterleaved([]int{iterations}, runs, runTime)
	if err != nil {
		return Stats{}, err
	}
	return st[0], nil
}

// MeasureInterleaved measures several iteration counts with their runs
// interleaved (run 1 of each, then run 2 of each, ...), so a change in the
// machine's load or clock speed hits every count alike and their ratios
// stay fair. It runs on one locked OS thread so the CPU figures are that
// thread's.
func MeasureInterleaved(iterations []int, runs int, runTime time.Duration) ([]Stats, error) {
	if len(iterations) == 0 || runs < 1 || runTime <= 0 {
		return nil, fmt.Errorf("cpuwork: measure: need iteration counts, runs >= 1 and runTime > 0 (got %d counts, %d, %v)", len(iterations), runs, runTime)
	}
	for _, n := range iterations {
		if n < 0 {
			return nil, fmt.Errorf("cpuwork: measure: iterations %d < 0", n)
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	SpendCPUCycles(20_000_000) // let the core reach its steady clock
	calls := make([]int, len(iterations))
	wall := make([][]float64, len(iterations))
	cpu := make([][]float64, len(iterations))
	for k, n := range iterations {
		calls[k] = callsFor(n, runTime)
		wall[k] = make([]float64, runs)
		cpu[k] = make([]float64, runs)
	}
	for r := range runs {
		for k, n := range iterations {
			cpu0, err := procstat.ThreadCPU()
			if err != nil {
				return nil, err
			}
			start := time.Now()
			for range calls[k] {
				SpendCPUCycles(n)
			}
			el := time.Since(start)
			cpu1, err := procstat.ThreadCPU()
			if err != nil {
				return nil, err
			}
			wall[k][r] = float64(el.Nanoseconds()) / float64(calls[k])
			cpu[k][r] = float64((cpu1 - cpu0).Nanoseconds()) / float64(calls[k])
		}
	}
	out := make([]Stats, len(iterations))
	for k, n := range iterations {
		slices.Sort(wall[k])
		slices.Sort(cpu[k])
		out[k] = Stats{
			Iterations:   n,
			Runs:         runs,
			CallsPerRun:  calls[k],
			MedianNs:     stats.Median(cpu[k]),
			MinNs:        cpu[k][0],
			MaxNs:        cpu[k][runs-1],
			WallMedianNs: stats.Median(wall[k]),
			WallMinNs:    wall[k][0],
		}
	}
	return out, nil
}

// callsFor picks how many calls fill about runTime, from a short trial.
func callsFor(iterations int, runTime time.Duration) int {
	trial := 1
	for {
		start := time.Now()
		for range trial {
			SpendCPUCycles(iterations)
		}
		el := time.Since(start)
		if el >= runTime/20 || trial >= 1<<30 {
			calls := int(float64(trial) * float64(runTime) / float64(max(el, time.Nanosecond)))
			return max(calls, 1)
		}
		trial *= 4
	}
}

// IterationsFor finds the iteration count whose call costs about target on
// this machine: it measures ns per iteration on a long call, then corrects the
// guess twice against the measured cost at that count (the fixed cost of a call
// matters for short targets).
func IterationsFor(target time.Duration, runs int, runTime time.Duration) (int, Stats, error) {
	return iterationsFor(target, func(n int) (Stats, error) { return Measure(n, runs, runTime) })
}

// measureFunc measures the cost of SpendCPUCycles(n). The calibration search
// takes it as a parameter so its logic is tested against a known cost model,
// not against this machine's speed.
type measureFunc func(iterations int) (Stats, error)

// probeIterations is the long call whose cost gives the first guess of ns
// per iteration.
const probeIterations = 1 << 16

func iterationsFor(target time.Duration, measure measureFunc) (int, Stats, error) {
	if target <= 0 {
		return 0, Stats{}, errors.New("cpuwork: target must be > 0")
	}
	probe, err := measure(probeIterations)
	if err != nil {
		return 0, Stats{}, err
	}
	if probe.MedianNs <= 0 {
		return 0, Stats{}, fmt.Errorf("cpuwork: calibration probe measured %.1f ns for %d iterations", probe.MedianNs, probeIterations)
	}
	n := max(1, int(math.Round(float64(target.Nanoseconds())/(probe.MedianNs/probeIterations))))
	var st Stats
	for range 2 {
		if st, err = measure(n); err != nil {
			return 0, Stats{}, err
		}
		if st.MedianNs <= 0 {
			return 0, Stats{}, fmt.Errorf("cpuwork: calibration measured %.1f ns for %d iterations", st.MedianNs, n)
		}
		n = max(1, int(math.Round(float64(n)*float64(target.Nanoseconds())/st.MedianNs)))
	}
	st, err = measure(n)
	return n, st, err
}

// The repeated calibration: one pass of the search lands wherever the
// machine's speed was during its few measurements (the cost of an iteration
// moves 2x with the neighbour on a sibling hyper-thread), so Calibrate
// repeats the search until two passes agree.
const (
	// AgreeWithin is how far apart two passes' counts may be and still
	// agree: the larger at most 5% above the smaller.
	AgreeWithin = 0.05
	// MaxPasses bounds the search: after this many passes without two that
	// agree, Calibrate gives up and says how far apart they were.
	MaxPasses = 6
)

// Pass is one run of the calibration search.
type Pass struct {
	Iterations int     `json:"iterations"`
	MedianNs   float64 `json:"ns_per_call_median"` // the cost the pass measured at its count
}

// Calibration is the outcome of Calibrate.
type Calibration struct {
	// Iterations is the later of the first two passes that agreed; when
	// none agreed, the median of the passes' counts.
	Iterations int
	Stats      Stats // the cost of that pass's count, as it measured it
	Passes     []Pass
	Agreed     bool
}

// Spread is the largest pass's count over the smallest, minus one (0.3 is
// 30% apart).
func (c Calibration) Spread() float64 {
	if len(c.Passes) == 0 {
		return 0
	}
	lo, hi := c.Passes[0].Iterations, c.Passes[0].Iterations
	for _, p := range c.Passes {
		lo, hi = min(lo, p.Iterations), max(hi, p.Iterations)
	}
	return float64(hi)/float64(max(lo, 1)) - 1
}

// NotAgreedError says that no two passes agreed, with their counts.
type NotAgreedError struct {
	Target time.Duration
	Passes []Pass
	Spread float64
}

func (e *NotAgreedError) Error() string {
	counts := make([]string, len(e.Passes))
	for i, p := range e.Passes {
		counts[i] = strconv.Itoa(p.Iterations)
	}
	return fmt.Sprintf("calibration for %v: no two of %d passes agreed within %.0f%%: iterations %s (the largest %.0f%% above the smallest); the machine's speed changed while it measured",
		e.Target, len(e.Passes), AgreeWithin*100, strings.Join(counts, ", "), e.Spread*100)
}

// Calibrate repeats the calibration search (IterationsFor) until two passes
// agree within AgreeWithin, at most MaxPasses times. When none agree it
// returns the calibration (Agreed false, Iterations the median pass) with a
// *NotAgreedError.
func Calibrate(target time.Duration, runs int, runTime time.Duration) (Calibration, error) {
	return calibrate(target, func(n int) (Stats, error) { return Measure(n, runs, runTime) }, MaxPasses)
}

func calibrate(target time.Duration, measure measureFunc, maxPasses int) (Calibration, error) {
	var c Calibration
	var stats []Stats
	for range max(maxPasses, 2) {
		n, st, err := iterationsFor(target, measure)
		if err != nil {
			return c, err
		}
		pass := Pass{Iterations: n, MedianNs: st.MedianNs}
		for _, earlier := range c.Passes {
			if agree(earlier.Iterations, n) {
				c.Passes = append(c.Passes, pass)
				c.Iterations, c.Stats, c.Agreed = n, st, true
				return c, nil
			}
		}
		c.Passes = append(c.Passes, pass)
		stats = append(stats, st)
	}
	mid := medianPass(c.Passes)
	c.Iterations, c.Stats = c.Passes[mid].Iterations, stats[mid]
	return c, &NotAgreedError{Target: target, Passes: c.Passes, Spread: c.Spread()}
}

// agree tells whether two counts are within AgreeWithin of each other.
func agree(a, b int) bool {
	lo, hi := min(a, b), max(a, b)
	return float64(hi) <= float64(lo)*(1+AgreeWithin)
}

// medianPass is the index of the pass whose count is the median (the lower
// of the two middle ones for an even number).
func medianPass(passes []Pass) int {
	idx := make([]int, len(passes))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return passes[a].Iterations - passes[b].Iterations })
	return idx[(len(idx)-1)/2]
}
