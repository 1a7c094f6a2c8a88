package reports

import (
	"slices"

	"weaseldb/artifacts"
)

// measuredRuns returns the indexes of the measured runs of one bench.
func measuredRuns(ws *artifacts.WaitStrategies, bench string) []int {
	var idx []int
	for i, r := range ws.Runs {
		if r.Bench == bench && r.Status == artifacts.StatusMeasured {
			idx = append(idx, i)
		}
	}
	return idx
}

// strategyOrder sorts strategy names in WaitStrategyNames order, others last.
func strategyOrder(s string) int {
	if i := slices.Index(artifacts.WaitStrategyNames, s); i >= 0 {
		return i
	}
	return len(artifacts.WaitStrategyNames)
}

// hasMeasured reports whether any run on the given kind of cores was measured.
func hasMeasured(ws *artifacts.WaitStrategies, cores string) bool {
	for _, r := range ws.Runs {
		if r.Cores == cores && r.Status == artifacts.StatusMeasured {
			return true
		}
	}
	return false
}
