package reports

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"weaseldb/artifacts"
	"weaseldb/internal/stats"
)

// source is a number the report may print, with where it came from: an
// artifact's field (artifact and field set), or a formula over others. It
// becomes a numbered Figure the first time it is printed (writer.cite).
type source struct {
	name            string
	value           float64 // the artifact's field, or the derived value, before scale
	scale           float64
	unit            string
	prec            int
	artifact, field string // a field of an artifact
	formula         string // or a derivation
}

// fieldOf is a source read from an artifact field.
func fieldOf(name string, value, scale float64, unit string, prec int, artifact, field string) *source {
	return &source{name: name, value: value, scale: scale, unit: unit, prec: prec, artifact: artifact, field: field}
}

// derived is a source computed from others.
func derived(name string, value float64, unit string, prec int, formula string) *source {
	return &source{name: name, value: value, scale: 1, unit: unit, prec: prec, formula: formula}
}

// printed is the value as the report prints it.
func (s *source) printed() float64 { return s.value * s.scale }

// roundValue is one round's value of a quantity, with its field.
type roundValue struct {
	round           *Round
	value           float64
	artifact, field string
}

// spread is a quantity over the rounds: median, lowest and highest, each a
// source. With an odd number of rounds the median is one round's value
// (cited from that round's artifact); with an even number it is the mean of
// the two middle rounds (derived). n is the number of rounds.
type spread struct {
	median, lo, hi *source
	medianRound    *Round // the round at the median (the lower middle one for an even n)
	n              int
	// repeatLo and repeatHi bound another run's median of n rounds (see
	// repeatInterval); nil with fewer than 3 rounds.
	repeatLo, repeatHi *source
}

// spreadOf summarises values over rounds; nil when there are none.
func spreadOf(label string, vals []roundValue, scale float64, unit string, prec int) *spread {
	if len(vals) == 0 {
		return nil
	}
	sorted := slices.Clone(vals)
	slices.SortStableFunc(sorted, func(a, b roundValue) int { return cmp.Compare(a.value, b.value) })
	n := len(sorted)
	one := func(v roundValue, what string) *source {
		return fieldOf(fmt.Sprintf("%s, %s of %d rounds (round %d)", label, what, n, v.round.Number), v.value, scale, unit, prec, v.artifact, v.field)
	}
	sp := &spread{lo: one(sorted[0], "lowest"), hi: one(sorted[n-1], "highest"), n: n, medianRound: sorted[(n-1)/2].round}
	defer func() { sp.repeatLo, sp.repeatHi = repeatInterval(label, sp.median, vals, scale, unit, prec) }()
	if n == 1 {
		sp.median = fieldOf(label, vals[0].value, scale, unit, prec, vals[0].artifact, vals[0].field)
		return sp
	}
	if n%2 == 1 {
		sp.median = one(sorted[n/2], "median")
		return sp
	}
	a, b := sorted[n/2-1], sorted[n/2]
	sp.median = derived(fmt.Sprintf("%s, median of %d rounds", label, n), (a.value+b.value)/2*scale, unit, prec,
		fmt.Sprintf("mean of %s %s and %s %s (the two middle rounds) × %g", a.artifact, a.field, b.artifact, b.field, scale))
	return sp
}

// setupNumbers are one setup's figures over its rounds.
type setupNumbers struct {
	view     *SetupView
	measured []*Round // measured rounds, in round order
	clean    []*Round // of those, the ones whose every due request was answered or failed
	// used are the rounds the setup's figures are computed over: the clean
	// ones, or every measured one when none was clean (then flagged).
	used      []*Round
	notClean  bool // no round was clean: every figure is flagged
	rps       *spread
	median    *Round // the representative round: the median of rps
	workNs    float64
	theoMaxNs float64
	effPct    float64
	bounds    []bound // the median round's resources at their limit, the first the bound
}

// collectSetup computes a setup's numbers; workNs is the CPU work per
// request (0 when not measured).
func collectSetup(v *SetupView, workNs float64, machineCPUs int) *setupNumbers {
	n := &setupNumbers{view: v, workNs: workNs}
	for _, r := range v.Rounds {
		if r.Status != artifacts.StatusMeasured || r.Load == nil {
			continue
		}
		n.measured = append(n.measured, r)
		if r.Load.Clean() {
			n.clean = append(n.clean, r)
		}
	}
	n.used = n.clean
	if len(n.clean) == 0 && len(n.measured) > 0 {
		n.used, n.notClean = n.measured, true
	}
	var vals []roundValue
	for _, r := range n.used {
		vals = append(vals, roundValue{round: r, value: r.Load.RequestsPerSec, artifact: r.LoadName, field: "requests_per_sec"})
	}
	n.rps = spreadOf(v.Setup.Title+": throughput", vals, 1, "req/s", 0)
	if n.rps == nil {
		return n
	}
	n.median = n.rps.medianRound
	if rps := n.rps.median.printed(); rps > 0 {
		n.theoMaxNs = 1e9 / rps
		if workNs > 0 {
			n.effPct = workNs / n.theoMaxNs * 100
		}
	}
	n.bounds = bounds(n.median, v.Setup, machineCPUs)
	return n
}

// calNumbers are the calibration's figures over the rounds.
type calNumbers struct {
	cals          []*Calibration
	timed, target *spread // the timed count's cost (ns per call), the calibrated count (iterations)
	timedIters    int
	targetNs      float64
	notAgreed     []*Calibration // rounds whose passes never agreed within 5%
	// Cost per iteration, medians over rounds: the timed run's and the
	// calibration's; disagreePct is how far apart (over the larger).
	perIterTimed, perIterTarget, disagreePct float64
}

func collectCalibration(cals []*Calibration) *calNumbers {
	c := &calNumbers{cals: cals}
	var timed, target []roundValue
	var perTimed, perTarget []float64
	for _, cal := range cals {
		rd := &Round{Number: cal.Round}
		if t := cal.Timed; t != nil && t.Iterations > 0 {
			timed = append(timed, roundValue{round: rd, value: t.NsPerCallMedian, artifact: cal.TimedName, field: "ns_per_call_median"})
			perTimed = append(perTimed, t.NsPerCallMedian/float64(t.Iterations))
			c.timedIters = t.Iterations
		}
		if t := cal.Target; t != nil && t.Iterations > 0 {
			target = append(target, roundValue{round: rd, value: float64(t.Iterations), artifact: cal.TargetName, field: "iterations"})
			perTarget = append(perTarget, t.NsPerCallMedian/float64(t.Iterations))
			if t.TargetNs > 0 {
				c.targetNs = t.TargetNs
			}
			if t.TargetAgreed != nil && !*t.TargetAgreed {
				c.notAgreed = append(c.notAgreed, cal)
			}
		}
	}
	c.timed = spreadOf(fmt.Sprintf("CPU work of %d iterations", c.timedIters), timed, 1, "ns", 0)
	c.target = spreadOf("Iterations calibrated for the target", target, 1, "iterations", 0)
	if len(perTimed) > 0 && len(perTarget) > 0 {
		c.perIterTimed, c.perIterTarget = stats.Median(perTimed), stats.Median(perTarget)
		c.disagreePct = math.Abs(c.perIterTimed-c.perIterTarget) / math.Max(c.perIterTimed, c.perIterTarget) * 100
	}
	return c
}
