package stats

import (
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// summary is benchmath's median and its distribution-free interval at
// level. benchmath sorts its sample in place, so xs is copied.
func summary(xs []float64, level float64) benchmath.Summary {
	thresholds := benchmath.DefaultThresholds
	return benchmath.AssumeNothing.Summary(benchmath.NewSample(slices.Clone(xs), &thresholds), level)
}

// RatioCI is the estimate of B's req/s over A's with its confidence
// interval [Low, High].
type RatioCI struct {
	Ratio float64 `json:"ratio"`
	Low   float64 `json:"ci_low"`
	High  float64 `json:"ci_high"`
	Level float64 `json:"ci_level"` // the level asked for
	// Confidence is the level the interval really has: a distribution-free
	// interval's ends are sample values, so its level comes in steps at or
	// above the one asked for.
	Confidence float64  `json:"ci_confidence"`
	Paired     bool     `json:"paired"`
	Samples    int      `json:"samples"` // rounds (paired), or B's runs (unpaired)
	Method     string   `json:"method"`
	Warnings   []string `json:"warnings,omitempty"`
}

// Methods of RatioCI.
const (
	MethodPaired   = "median of per-round ratios B/A, distribution-free interval (benchmath AssumeNothing)"
	MethodUnpaired = "ratio of medians, from each median's distribution-free interval at the square root of the level (benchmath AssumeNothing)"
)

// RoundRatios are b[i]/a[i] for the rounds both sides measured.
func RoundRatios(a, b []float64) []float64 {
	n := min(len(a), len(b))
	out := make([]float64, 0, n)
	for i := range n {
		out = append(out, b[i]/a[i])
	}
	return out
}

// PairedRatio estimates B/A from rounds in which a[i] and b[i] were
// measured next to each other, each by a fresh server process: round i's
// ratio is one sample, and the estimate is their median with benchmath's
// distribution-free interval. Whatever hit the machine during a round hits
// both halves and cancels in its ratio; what differs between server
// processes (each fresh process has its own speed) varies from round to
// round, so the interval covers it. It needs 6 rounds for a finite interval
// at 95%; with fewer, the ends are infinite and a warning says why.
func PairedRatio(a, b []float64, level float64) RatioCI {
	ratios := RoundRatios(a, b)
	ci := RatioCI{Level: level, Paired: true, Samples: len(ratios), Method: MethodPaired}
	if len(ratios) == 0 {
		ci.Ratio, ci.Low, ci.High = math.NaN(), math.NaN(), math.NaN()
		return ci
	}
	s := summary(ratios, level)
	ci.Ratio, ci.Low, ci.High, ci.Confidence = s.Center, s.Lo, s.Hi, s.Confidence
	ci.Warnings = warningText(s.Warnings)
	return ci
}

// UnpairedRatio estimates median(b)/median(a) for samples that were not
// measured side by side (baseline mode). Each median gets benchmath's
// distribution-free interval at level √L; the ratio's interval is
// [lo(b)/hi(a), hi(b)/lo(a)], which holds whenever both medians' intervals
// do: with independent samples, with probability at least √L·√L = L.
func UnpairedRatio(a, b []float64, level float64) RatioCI {
	ci := RatioCI{Level: level, Samples: len(b), Method: MethodUnpaired}
	if len(a) == 0 || len(b) == 0 {
		ci.Ratio, ci.Low, ci.High = math.NaN(), math.NaN(), math.NaN()
		return ci
	}
	each := math.Sqrt(level)
	sa, sb := summary(a, each), summary(b, each)
	ci.Ratio = sb.Center / sa.Center
	ci.Low, ci.High = sb.Lo/sa.Hi, sb.Hi/sa.Lo
	if math.IsInf(sa.Hi, 0) || math.IsInf(sb.Lo, 0) || math.IsNaN(ci.Low) {
		ci.Low = math.Inf(-1)
	}
	if math.IsInf(sa.Lo, 0) || math.IsInf(sb.Hi, 0) || math.IsNaN(ci.High) || sa.Lo <= 0 {
		ci.High = math.Inf(1)
	}
	ci.Confidence = sa.Confidence * sb.Confidence
	ci.Warnings = append(warningText(sa.Warnings), warningText(sb.Warnings)...)
	return ci
}

func warningText(ws []error) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Error())
	}
	return out
}
