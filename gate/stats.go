// Package gate is the CI regression gate on requests/sec: it drives server
// binaries and the load tester as subprocesses, compares their throughput
// (A/B in one interleaved run, or against a recorded baseline) and gives a
// verdict that survives a noisy shared machine.
package gate

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Median returns the median of xs (the mean of the two middle values when
// len(xs) is even), or NaN when xs is empty. xs is not modified.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return sortedMedian(s)
}

func sortedMedian(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Quantile returns the q-quantile (0..1) of xs by linear interpolation
// between order statistics, or NaN when xs is empty.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return sortedQuantile(s, q)
}

func sortedQuantile(s []float64, q float64) float64 {
	q = math.Max(0, math.Min(1, q))
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	frac := pos - float64(lo)
	return s[lo]*(1-frac) + s[hi]*frac
}

// RelativeSpread is the median absolute deviation divided by the median: a
// robust "±x" of one sample that a single outlier run cannot inflate.
func RelativeSpread(xs []float64) float64 {
	m := Median(xs)
	if len(xs) == 0 || m == 0 {
		return math.NaN()
	}
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - m)
	}
	return Median(dev) / m
}

// RatioCI is a point estimate of median(B)/median(A) with a bootstrap
// percentile confidence interval [Low, High] at Level (e.g. 0.95).
type RatioCI struct {
	Ratio     float64 `json:"ratio"`
	Low       float64 `json:"ci_low"`
	High      float64 `json:"ci_high"`
	Level     float64 `json:"ci_level"`
	Paired    bool    `json:"paired"`
	Resamples int     `json:"resamples"`
}

// BootstrapRatio estimates median(b)/median(a) and its confidence interval
// by resampling with a PCG generator seeded with seed, so a verdict can be
// reproduced exactly from the recorded samples.
//
// When paired is true (and len(a) == len(b)), rounds are resampled as pairs:
// a[i] and b[i] were measured next to each other, so whatever the machine was
// doing at that moment stays in both halves of the pair and cancels in the
// ratio instead of widening the interval.
func BootstrapRatio(a, b []float64, paired bool, resamples int, level float64, seed uint64) RatioCI {
	ci := RatioCI{Ratio: Median(b) / Median(a), Level: level, Resamples: resamples}
	if len(a) == 0 || len(b) == 0 || resamples <= 0 {
		ci.Low, ci.High = math.NaN(), math.NaN()
		return ci
	}
	paired = paired && len(a) == len(b)
	ci.Paired = paired
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	ratios := make([]float64, resamples)
	ra := make([]float64, len(a))
	rb := make([]float64, len(b))
	for r := range ratios {
		if paired {
			for i := range ra {
				j := rng.IntN(len(a))
				ra[i], rb[i] = a[j], b[j]
			}
		} else {
			for i := range ra {
				ra[i] = a[rng.IntN(len(a))]
			}
			for i := range rb {
				rb[i] = b[rng.IntN(len(b))]
			}
		}
		slices.Sort(ra)
		slices.Sort(rb)
		ratios[r] = sortedMedian(rb) / sortedMedian(ra)
	}
	slices.Sort(ratios)
	alpha := (1 - level) / 2
	ci.Low = sortedQuantile(ratios, alpha)
	ci.High = sortedQuantile(ratios, 1-alpha)
	return ci
}

// RankTest is the result of a one-sided Mann-Whitney U test of "B tends to
// be smaller than A".
type RankTest struct {
	U     float64 `json:"u"`     // pairs (a, b) with b > a, ties counted as 1/2
	P     float64 `json:"p"`     // one-sided p-value: P(U <= observed) when A and B are alike
	Exact bool    `json:"exact"` // exact distribution (no ties) or normal approximation
}

// MannWhitneyLess tests whether the values in b tend to be smaller than those
// in a. Without ties it uses the exact null distribution of U (small samples
// are the normal case here); with ties, the normal approximation with tie and
// continuity corrections.
func MannWhitneyLess(a, b []float64) RankTest {
	m, n := len(a), len(b)
	if m == 0 || n == 0 {
		return RankTest{P: math.NaN()}
	}
	u := 0.0
	ties := false
	for _, y := range b {
		for _, x := range a {
			switch {
			case y > x:
				u++
			case y == x:
				u += 0.5
				ties = true
			}
		}
	}
	if !ties {
		return RankTest{U: u, P: exactUCDF(m, n, int(u)), Exact: true}
	}
	return RankTest{U: u, P: normalUCDF(a, b, u)}
}

// exactUCDF returns P(U <= u) for sample sizes m and n under the null
// hypothesis, counting arrangements with the classic recurrence
// count(m, n, u) = count(m-1, n, u-n) + count(m, n-1, u).
func exactUCDF(m, n, u int) float64 {
	maxU := m * n
	// counts[j][k]: arrangements of i values of A and j values of B with U == k,
	// built up over i.
	prev := make([][]float64, n+1)
	for j := range prev {
		prev[j] = make([]float64, maxU+1)
		prev[j][0] = 1 // i == 0: U is 0
	}
	for i := 1; i <= m; i++ {
		cur := make([][]float64, n+1)
		for j := range cur {
			cur[j] = make([]float64, maxU+1)
		}
		cur[0][0] = 1
		for j := 1; j <= n; j++ {
			for k := 0; k <= i*j; k++ {
				// The largest of the i+j values is either from B (it beats all
				// i values of A: U drops by i) or from A (U unchanged).
				v := prev[j][k]
				if k >= i {
					v = cur[j-1][k-i] + prev[j][k]
				}
				cur[j][k] = v
			}
		}
		prev = cur
	}
	total, below := 0.0, 0.0
	for k, c := range prev[n] {
		total += c
		if k <= u {
			below += c
		}
	}
	return below / total
}

func normalUCDF(a, b []float64, u float64) float64 {
	m, n := float64(len(a)), float64(len(b))
	all := append(slices.Clone(a), b...)
	slices.Sort(all)
	tieTerm := 0.0
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j] == all[i] {
			j++
		}
		t := float64(j - i)
		tieTerm += t*t*t - t
		i = j
	}
	nn := m + n
	variance := m * n / 12 * ((nn + 1) - tieTerm/(nn*(nn-1)))
	if variance <= 0 {
		return 1
	}
	z := (u + 0.5 - m*n/2) / math.Sqrt(variance)
	return 0.5 * math.Erfc(-z/math.Sqrt2)
}
