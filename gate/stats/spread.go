package stats

import (
	"math"

	"weaseldb/internal/stats"
)

// RelativeSpread is the median absolute deviation divided by the median: a
// robust "±x" of one sample that a single outlier run cannot inflate.
func RelativeSpread(xs []float64) float64 {
	m := stats.Median(xs)
	if len(xs) == 0 || m == 0 {
		return math.NaN()
	}
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - m)
	}
	return stats.Median(dev) / m
}
