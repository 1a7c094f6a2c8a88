package cost

import (
	"cmp"
	"slices"

	"weaseldb/gate/callgrind"
	"weaseldb/gate/result"
)

// Which functions a cost difference is made of. A verdict that says "B
// costs +1.2%" sends its reader to a profiler; the counts are already in
// hand, so the gate names the functions whose counted instructions per
// request moved most. Between A and B that is where a regression came from;
// between two runs of one side that did not agree, it is the code whose
// cost follows the clock and that the filter (gate/callgrind/filter.go)
// does not yet leave out: after a Go release renames a runtime function,
// this is the list to read. The lists are gate/callgrind's TopDeltas; which
// runs they compare is the cost tier's choice, here.

// costDiffTop is how many functions a difference names.
const costDiffTop = 5

// medianRun is the run whose counted instructions per request are the
// median of its side's (the lower one of an even count), the run a side's
// figure comes from.
func medianRun(runs []result.CostSample) result.CostSample {
	sorted := slices.Clone(runs)
	slices.SortStableFunc(sorted, func(a, b result.CostSample) int {
		return cmp.Compare(a.InstructionsPerRequest, b.InstructionsPerRequest)
	})
	return sorted[(len(sorted)-1)/2]
}

// extremeRuns are a side's cheapest and dearest runs.
func extremeRuns(runs []result.CostSample) (lo, hi result.CostSample) {
	lo, hi = runs[0], runs[0]
	for _, r := range runs[1:] {
		if r.InstructionsPerRequest < lo.InstructionsPerRequest {
			lo = r
		}
		if r.InstructionsPerRequest > hi.InstructionsPerRequest {
			hi = r
		}
	}
	return lo, hi
}

// abDeltas: what moved from A's median run to B's (nil without profiles).
func abDeltas(a, b []result.CostSample) []callgrind.FunctionDelta {
	if len(a) == 0 || len(b) == 0 {
		return nil
	}
	ma, mb := medianRun(a), medianRun(b)
	if ma.Functions == nil || mb.Functions == nil {
		return nil
	}
	return callgrind.TopDeltas(ma.Functions, mb.Functions, costDiffTop)
}

// unsteadyDeltas: what moved from a side's cheapest run to its dearest.
func unsteadyDeltas(runs []result.CostSample) []callgrind.FunctionDelta {
	if len(runs) < 2 {
		return nil
	}
	lo, hi := extremeRuns(runs)
	if lo.Functions == nil || hi.Functions == nil {
		return nil
	}
	return callgrind.TopDeltas(lo.Functions, hi.Functions, costDiffTop)
}
