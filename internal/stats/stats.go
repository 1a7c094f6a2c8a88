// Package stats holds the harness's one median, for the figures the tools
// write (bench_cpu_work's and bench_pipeline's medians), the gate's and the
// report's. It is small and neutral: the server's benchmark
// packages may import it.
//
// The gate's medians are this one too; its confidence intervals and tests
// come from golang.org/x/perf/benchmath.
package stats

import (
	"math"
	"slices"
)

// Median returns the median of xs: the middle value, or the mean of the two
// middle values when len(xs) is even; NaN when xs is empty. xs need not be
// sorted and is not modified.
func Median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	s := xs
	if !slices.IsSorted(xs) {
		s = slices.Sorted(slices.Values(xs))
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
