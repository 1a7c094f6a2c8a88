package result

import (
	"weaseldb/gate/callgrind"
	"weaseldb/gate/valgrind"
	"weaseldb/gate/verdict"
)

// Tiers a run can judge.
const (
	TierTime = "time"
	TierCost = "cost"
)

// CostVerdict is the cost tier's answer for one scenario, as the JSON
// writes it.
type CostVerdict string

// The cost verdicts.
const (
	CostPass          CostVerdict = "pass"
	CostRegression    CostVerdict = "regression"
	CostCouldNotJudge CostVerdict = "could_not_judge"
)

// Verdict is the gate's verdict of the same meaning.
func (v CostVerdict) Verdict() verdict.Verdict {
	switch v {
	case CostPass:
		return verdict.Pass
	case CostRegression:
		return verdict.Regression
	default:
		return verdict.CouldNotJudge
	}
}

// CostSide is one side's cost runs and their medians.
type CostSide struct {
	InstructionsPerRequest float64 `json:"instructions_per_request"` // filtered; the median of the runs
	UnfilteredPerRequest   float64 `json:"instructions_unfiltered_per_request"`
	AllocsPerRequest       float64 `json:"allocs_per_request"`
	BytesPerRequest        float64 `json:"alloc_bytes_per_request"`
	SyscallsPerRequest     float64 `json:"syscalls_per_request"`
	// Spread is max/min - 1 of the runs' filtered count per request.
	Spread float64      `json:"spread"`
	Runs   []CostSample `json:"runs"`
}

// CostJudgement is what the cost tier found for one scenario.
type CostJudgement struct {
	A CostSide `json:"a"`
	B CostSide `json:"b"`
	// Ratio is B/A of the filtered medians; Low and High are the lower and
	// upper quartiles of the ratios of every B run to every A run (with 3
	// runs a side, 9 pairs: the third lowest and the third highest).
	Ratio           float64     `json:"ratio"`
	Low             float64     `json:"ratio_low"`
	High            float64     `json:"ratio_high"`
	UnfilteredRatio float64     `json:"ratio_unfiltered"`
	AllocsRatio     float64     `json:"ratio_allocs,omitempty"`
	Verdict         CostVerdict `json:"verdict"`
	Reason          string      `json:"reason"`
	// Moved are the functions whose counted instructions per request
	// moved most from A's median run (from) to B's (to): where a
	// difference comes from (gate/callgrind's diff).
	Moved []callgrind.FunctionDelta `json:"moved,omitempty"`
	// Unsteady, when a side's runs disagreed, are the functions that moved
	// most from its cheapest run to its dearest, on UnsteadySide: code
	// whose cost follows the clock, which the filter does not leave out.
	Unsteady     []callgrind.FunctionDelta `json:"unsteady,omitempty"`
	UnsteadySide string                    `json:"unsteady_side,omitempty"`
	// NoiseForgiven: --noise-ok made runs that disagreed a pass.
	NoiseForgiven bool    `json:"noise_forgiven,omitempty"`
	Tolerance     float64 `json:"tolerance"`
	MaxSpread     float64 `json:"max_spread"`
	// Valgrind is valgrind's version and hwcaps here, and the Go CPU
	// options the server ran with turned off (gate/valgrind).
	Valgrind *valgrind.Env `json:"valgrind,omitempty"`
	Requests int           `json:"requests_per_run"`
	Rate     float64       `json:"rate"`
	ElapsedS float64       `json:"elapsed_s"`
}

// CostSample is what one cost run measured.
type CostSample struct {
	Run      int   `json:"run"`
	Requests int64 `json:"requests"` // answered in the counted window
	// Instructions are the filtered count (gate/callgrind's filter),
	// Unfiltered all that the server's threads executed between the zero
	// and the dump.
	Instructions           int64   `json:"instructions"`
	Unfiltered             int64   `json:"instructions_unfiltered"`
	InstructionsPerRequest float64 `json:"instructions_per_request"`
	UnfilteredPerRequest   float64 `json:"instructions_unfiltered_per_request"`
	// Allocations and bytes from the Go runtime's own counters
	// (go_memstats_mallocs_total, go_memstats_alloc_bytes_total on the
	// server's /metrics) over the same window, less what reading them
	// costs (measured by two reads back to back).
	AllocsPerRequest float64 `json:"allocs_per_request"`
	BytesPerRequest  float64 `json:"alloc_bytes_per_request"`
	// SyscallsPerRequest are the system calls valgrind traced in the
	// window, clock reads left out (outside valgrind the vDSO answers
	// them); futex and nanosleep follow the clock, so this is informative.
	SyscallsPerRequest float64        `json:"syscalls_per_request"`
	Syscalls           map[string]int `json:"syscalls,omitempty"`
	WallS              float64        `json:"wall_s"`
	// Functions are the counted functions' own instructions per request,
	// for naming what a difference is made of (gate/callgrind's diff); not
	// written out, the list is thousands long.
	Functions map[string]float64 `json:"-"`
}

// Decision is the cost tier's verdict as a Decision.
func (c *CostJudgement) Decision() verdict.Decision {
	d := verdict.Decision{Verdict: c.Verdict.Verdict(), Reason: "cost: " + c.Reason}
	switch {
	case c.Verdict == CostPass:
		d.ReasonCode = verdict.ReasonCostWithin
	case c.Verdict == CostRegression:
		d.ReasonCode = verdict.ReasonCostHigher
	case c.A.Spread > c.MaxSpread || c.B.Spread > c.MaxSpread:
		d.ReasonCode = verdict.ReasonCostNoisy
	default:
		d.ReasonCode = verdict.ReasonCostFailed
	}
	return d
}
