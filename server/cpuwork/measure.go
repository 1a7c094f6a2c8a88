package cpuwork

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// Stats is the cost of one SpendCPUCycles(Iterations) call over Runs timed runs
// of CallsPerRun calls each (wall time per call; run it on an otherwise idle
// core for a CPU figure).
type Stats struct {
	Iterations  int
	Runs        int
	CallsPerRun int
	MedianNs    float64
	MinNs       float64
	MaxNs       float64
}

// Measure times SpendCPUCycles(iterations) over runs runs, each about runTime
// long, and returns the median, min and max ns per call. The min is the least
// disturbed by other processes; the median is the usual figure to quote.
func Measure(iterations, runs int, runTime time.Duration) (Stats, error) {
	if iterations < 0 || runs < 1 || runTime <= 0 {
		return Stats{}, fmt.Errorf("cpuwork: measure: need iterations >= 0, runs >= 1, runTime > 0 (got %d, %d, %v)", iterations, runs, runTime)
	}
	calls := callsFor(iterations, runTime)
	perCall := make([]float64, runs)
	SpendCPUCycles(iterations) // warm up caches and the branch predictor
	for r := range perCall {
		start := time.Now()
		for range calls {
			SpendCPUCycles(iterations)
		}
		perCall[r] = float64(time.Since(start).Nanoseconds()) / float64(calls)
	}
	slices.Sort(perCall)
	return Stats{
		Iterations:  iterations,
		Runs:        runs,
		CallsPerRun: calls,
		MedianNs:    median(perCall),
		MinNs:       perCall[0],
		MaxNs:       perCall[len(perCall)-1],
	}, nil
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

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// IterationsFor finds the iteration count whose call costs about target on
// this machine: it measures ns per iteration on a long call, then corrects the
// guess twice against the measured cost at that count (the fixed cost of a call
// matters for short targets).
func IterationsFor(target time.Duration, runs int, runTime time.Duration) (int, Stats, error) {
	if target <= 0 {
		return 0, Stats{}, errors.New("cpuwork: target must be > 0")
	}
	probe, err := Measure(1<<16, runs, runTime)
	if err != nil {
		return 0, Stats{}, err
	}
	n := max(1, int(math.Round(float64(target.Nanoseconds())/(probe.MedianNs/(1<<16)))))
	var st Stats
	for range 2 {
		if st, err = Measure(n, runs, runTime); err != nil {
			return 0, Stats{}, err
		}
		n = max(1, int(math.Round(float64(n)*float64(target.Nanoseconds())/st.MedianNs)))
	}
	st, err = Measure(n, runs, runTime)
	return n, st, err
}
