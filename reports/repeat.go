package reports

import (
	"fmt"
	"math"

	"github.com/aclements/go-moremath/stats"
)

// repeatLevel is the confidence of a spread's repeat interval.
const repeatLevel = 0.95

// repeatInterval bounds, at repeatLevel, the median another run of the same
// number of rounds should measure if the machine holds as steady as it did
// over this run's rounds: this run's median ± t(n−1) · 1.2533 · s · √(2/n),
// s the rounds' standard deviation. The median of n rounds varies about
// 1.2533 (√(π/2)) times as much as their mean, and the difference of two
// runs' medians √2 times as much as one; t (go-moremath's Student's t, the
// library benchstat builds on) pays for knowing s from n rounds only.
//
// It is what a reader needs to judge a second report against this one,
// which the rounds' min–max does not say: five rounds can agree closely
// by luck, and the median of another five may still fall outside them.
// It covers only what varied within this run; a machine whose speed moves
// over minutes moves a later run by more (docs/report.md, "Four runs").
// Nil, nil with fewer than 3 rounds (s from 2 is no estimate).
func repeatInterval(label string, median *source, vals []roundValue, scale float64, unit string, prec int) (lo, hi *source) {
	n := len(vals)
	if n < 3 || median == nil {
		return nil, nil
	}
	var sum, sq float64
	for _, v := range vals {
		sum += v.value * scale
	}
	mean := sum / float64(n)
	for _, v := range vals {
		d := v.value*scale - mean
		sq += d * d
	}
	s := math.Sqrt(sq / float64(n-1))
	t := stats.InvCDF(stats.TDist{V: float64(n - 1)})(1 - (1-repeatLevel)/2)
	half := t * math.Sqrt(math.Pi/2) * s * math.Sqrt(2/float64(n))
	m := median.printed()
	formula := func(sign string) string {
		return fmt.Sprintf("median %s t(%d) %.3f × 1.2533 × s %.*f × √(2/%d), s the standard deviation of the %d rounds' %s",
			sign, n-1, t, prec+1, s, n, n, firstField(vals))
	}
	what := fmt.Sprintf("%s, another run's median of %d rounds (%.0f%%)", label, n, repeatLevel*100)
	lo = derived(what+", low end", m-half, unit, prec, formula("−"))
	hi = derived(what+", high end", m+half, unit, prec, formula("+"))
	return lo, hi
}

// firstField names the field the values come from.
func firstField(vals []roundValue) string {
	if len(vals) == 0 {
		return ""
	}
	return vals[0].field
}
