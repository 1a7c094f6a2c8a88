package stats

import (
	"fmt"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// RankTest is benchmath's Mann-Whitney U test of whether A's and B's runs
// come from the same distribution (two-sided). It ignores the pairing, so
// it is reported beside the verdict, not used in it.
type RankTest struct {
	P        float64  `json:"p"`
	Alpha    float64  `json:"alpha"`
	N1       int      `json:"n_a"`
	N2       int      `json:"n_b"`
	Warnings []string `json:"warnings,omitempty"`
}

// CompareRuns runs the U test on the req/s of A's and B's runs.
func CompareRuns(a, b []float64) RankTest {
	if len(a) == 0 || len(b) == 0 {
		return RankTest{P: math.NaN(), N1: len(a), N2: len(b)}
	}
	thresholds := benchmath.DefaultThresholds
	c := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(a), &thresholds),
		benchmath.NewSample(slices.Clone(b), &thresholds))
	return RankTest{P: c.P, Alpha: c.Alpha, N1: c.N1, N2: c.N2, Warnings: warningText(c.Warnings)}
}

// String is "p=0.43 (n=10+10)" as benchstat writes it.
func (r RankTest) String() string {
	return fmt.Sprintf("p=%.3g (n=%d+%d)", r.P, r.N1, r.N2)
}
