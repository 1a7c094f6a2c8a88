package stats

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"

	"weaseldb/internal/stats"
)

// Change points of a series by E-divisive means (Matteson and James, "A
// Nonparametric Approach for Multiple Change Point Analysis of
// Multivariate Data", 2014), the method MongoDB's and Apache Otava's
// (Hunter's) performance CI use on their histories: the split that most
// separates the two halves' distributions (an energy distance, so no
// shape is assumed), kept when a permutation test says a split that good
// is unlikely in the series shuffled, then the same within each half,
// until no half has a significant split.

// ChangePointOptions tune the detection.
type ChangePointOptions struct {
	// Alpha is the permutation test's level for each split: the chance
	// that a series with no step shows one (at its first split). 0.01 by
	// default; TestChangePointsOnNoise measures the rate.
	Alpha float64
	// Permutations per test (199 by default: p-values in steps of 0.005).
	Permutations int
	// MinSegment is the fewest points on each side of a step (3).
	MinSegment int
}

func (o ChangePointOptions) WithDefaults() ChangePointOptions {
	if o.Alpha <= 0 {
		o.Alpha = 0.01
	}
	if o.Permutations <= 0 {
		o.Permutations = 199
	}
	if o.MinSegment < 2 {
		o.MinSegment = 3
	}
	return o
}

// ChangePoint is one step found: the series changes at Index (the first
// point after the step).
type ChangePoint struct {
	Index  int     `json:"index"`
	PValue float64 `json:"p_value"`
	// Before and After are the medians of the segments on either side (up
	// to the neighbouring change points), Change their relative step.
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	Change float64 `json:"change"`
}

// ChangePoints finds the steps of xs, in index order. The permutations are
// drawn from a seed made of the data, so the same series gives the same
// answer every time.
func ChangePoints(xs []float64, o ChangePointOptions) []ChangePoint {
	o = o.WithDefaults()
	seed := fnv.New64a()
	for _, x := range xs {
		var b [8]byte
		bits := math.Float64bits(x)
		for i := range b {
			b[i] = byte(bits >> (8 * i))
		}
		seed.Write(b[:])
	}
	rng := rand.New(rand.NewPCG(seed.Sum64(), uint64(len(xs))))
	var found []ChangePoint
	var split func(lo, hi int)
	split = func(lo, hi int) {
		seg := xs[lo:hi]
		tau, q := bestSplit(seg, o.MinSegment)
		if tau < 0 {
			return
		}
		p := permutationP(seg, q, o, rng)
		if p > o.Alpha {
			return
		}
		found = append(found, ChangePoint{Index: lo + tau, PValue: p})
		split(lo, lo+tau)
		split(lo+tau, hi)
	}
	split(0, len(xs))
	slices.SortFunc(found, func(a, b ChangePoint) int { return a.Index - b.Index })
	for i := range found {
		from, to := 0, len(xs)
		if i > 0 {
			from = found[i-1].Index
		}
		if i+1 < len(found) {
			to = found[i+1].Index
		}
		found[i].Before = stats.Median(xs[from:found[i].Index])
		found[i].After = stats.Median(xs[found[i].Index:to])
		if found[i].Before != 0 {
			found[i].Change = found[i].After/found[i].Before - 1
		}
	}
	return found
}

// bestSplit is the split tau of xs (both sides at least min long) that
// maximises the scaled energy statistic Q, and Q; -1 when xs is too short.
//
//	Q(tau) = tau(n-tau)/n * [ 2/(tau(n-tau)) sum|xi-xj| (across)
//	          - 1/C(tau,2) sum|xi-xk| (left) - 1/C(n-tau,2) sum|xj-xk| (right) ]
//
// Sums of distances come from running totals, O(n^2) in all.
func bestSplit(xs []float64, min int) (int, float64) {
	n := len(xs)
	if n < 2*min {
		return -1, 0
	}
	// rowTo[i] = sum_{j<i} |xi-xj| and rowFrom[i] = sum_{j>i} |xi-xj|.
	rowTo, rowFrom := make([]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			d := math.Abs(xs[i] - xs[j])
			rowTo[i] += d
			rowFrom[j] += d
		}
	}
	total := 0.0
	for _, v := range rowTo {
		total += v
	}
	// left(t) = pairs within xs[:t]; right(t) = pairs within xs[t:].
	left := make([]float64, n+1)
	for t := 1; t <= n; t++ {
		left[t] = left[t-1] + rowTo[t-1]
	}
	right := make([]float64, n+1)
	for t := n - 1; t >= 0; t-- {
		right[t] = right[t+1] + rowFrom[t]
	}
	best, bestQ := -1, math.Inf(-1)
	for t := min; t <= n-min; t++ {
		l, r := float64(t), float64(n-t)
		across := total - left[t] - right[t]
		e := 2*across/(l*r) - left[t]/(l*(l-1)/2) - right[t]/(r*(r-1)/2)
		q := l * r / float64(n) * e
		if q > bestQ {
			best, bestQ = t, q
		}
	}
	return best, bestQ
}

// permutationP is the share of shuffles of xs whose best split is at least
// as good as q (the observed one counted, so it is never 0).
func permutationP(xs []float64, q float64, o ChangePointOptions, rng *rand.Rand) float64 {
	shuffled := slices.Clone(xs)
	atLeast := 1
	for range o.Permutations {
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if _, qp := bestSplit(shuffled, o.MinSegment); qp >= q {
			atLeast++
		}
	}
	return float64(atLeast) / float64(o.Permutations+1)
}
