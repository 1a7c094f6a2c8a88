package loadtester

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"
	"weaseldb/loadtester/result"
)

// The search for the highest rate that meets a latency objective (the knee
// of the throughput-latency curve; --find-rate). It is a pure function over
// a probe that runs one step at a rate and says whether it passed, so it is
// tested with fakes (search_test.go) and knows nothing of servers.
//
// The algorithm brackets the knee, then bisects the bracket:
//
//  1. From Start, multiply the rate by Factor while steps pass (or divide
//     it while they fail) until one rate passes and a higher one fails.
//     The first failure ends the climb: nothing above a failed rate is
//     tried again.
//  2. Bisect the bracket [last pass, first fail] geometrically (rates
//     compound) until its ends are within Precision of each other.
//  3. One noisy step must not decide: each end of the final bracket is
//     re-run until a majority of Repeats runs agree (best of 3 by
//     default). An end that loses its majority moves the bracket, and the
//     bisection resumes.
//
// Every rate's runs are tallied; a rate's verdict is the majority of its
// runs so far. The bracket is the lowest failing rate and the highest
// passing rate below it. The search stops when the bracket is narrow and
// both ends are decided, when MaxSteps or MaxTime would be exceeded (the
// time a next step would take is estimated from the longest so far), when
// every rate up to Max passed, when even Min failed, or when the probe
// returns an error (a target that is down stops it at once).

// FindRate searches for the highest rate that meets the objective probe
// judges (above). It returns what it found even with an error (from the
// probe, or the context's when interrupted).
func FindRate(ctx context.Context, spec result.SearchSpec, probe result.Probe) (*result.Search, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	now := spec.Now
	if now == nil {
		now = time.Now
	}
	s := &searcher{spec: spec, tallies: map[float64]*result.RateTally{}}
	began := now()
	var longest time.Duration
	var err error
	for {
		if ctx.Err() != nil {
			s.stopped, err = result.StopInterrupted, ctx.Err()
			break
		}
		rate, stop := s.next()
		if stop != "" {
			s.stopped = stop
			break
		}
		if len(s.trials) >= spec.MaxSteps {
			s.stopped = result.StopSteps
			break
		}
		if spec.MaxTime > 0 && now().Sub(began)+longest > spec.MaxTime {
			s.stopped = result.StopTime
			break
		}
		t0 := now()
		pass, perr := probe(ctx, rate)
		longest = max(longest, now().Sub(t0))
		if perr != nil {
			s.stopped, err = result.StopError, perr
			if ctx.Err() != nil { // the step was cut short by the interrupt, not by the target
				s.stopped = result.StopInterrupted
			}
			break
		}
		s.record(rate, pass)
	}
	return s.result(now().Sub(began)), err
}

// searcher is one search's state (its caller's goroutine only).
type searcher struct {
	spec    result.SearchSpec
	tallies map[float64]*result.RateTally
	trials  []result.Trial
	stopped string
}

func (s *searcher) record(rate float64, pass bool) {
	t := s.tallies[rate]
	if t == nil {
		t = &result.RateTally{Rate: rate}
		s.tallies[rate] = t
	}
	if pass {
		t.Passes++
	} else {
		t.Fails++
	}
	s.trials = append(s.trials, result.Trial{Rate: rate, Pass: pass})
}

// verdicts of a rate's runs so far.
const (
	leanNone = iota // untried, or as many passes as fails
	leanPass
	leanFail
)

func lean(t *result.RateTally) int {
	switch {
	case t == nil || t.Passes == t.Fails:
		return leanNone
	case t.Passes > t.Fails:
		return leanPass
	}
	return leanFail
}

// decided: a majority of Repeats runs agree.
func (s *searcher) decided(t *result.RateTally) bool {
	need := s.spec.Repeats/2 + 1
	return t != nil && (t.Passes >= need || t.Fails >= need)
}

// bracket is the lowest failing rate (0: none) and the highest passing
// rate below it (0: none); a tie is re-run before anything else.
func (s *searcher) bracket() (lo, hi, tie float64) {
	rates := s.rates()
	for _, r := range rates {
		if lean(s.tallies[r]) == leanFail {
			hi = r
			break
		}
	}
	for _, r := range rates {
		t := s.tallies[r]
		if hi != 0 && r >= hi {
			break
		}
		switch lean(t) {
		case leanPass:
			lo = r
		case leanNone:
			if t.Passes+t.Fails > 0 {
				tie = r
			}
		}
	}
	if tie != 0 && tie < lo { // a tie below the last pass decides nothing
		tie = 0
	}
	return lo, hi, tie
}

// next is the rate to run next, or why to stop.
func (s *searcher) next() (float64, string) {
	sp := &s.spec
	lo, hi, tie := s.bracket()
	switch {
	case tie != 0:
		return tie, ""
	case lo == 0 && hi == 0:
		return roundRate(sp.Start), ""
	case hi == 0: // climbing: every rate so far passed
		up := roundRate(lo * sp.Factor)
		if sp.Max > 0 && up > sp.Max {
			up = sp.Max
		}
		if up <= lo {
			if !s.decided(s.tallies[lo]) {
				return lo, ""
			}
			return 0, result.StopMaxPassed
		}
		return up, ""
	case lo == 0: // descending: every rate so far failed
		down := roundRate(hi / sp.Factor)
		if down < sp.Min {
			down = sp.Min
		}
		if down >= hi {
			if !s.decided(s.tallies[hi]) {
				return hi, ""
			}
			return 0, result.StopMinFailed
		}
		return down, ""
	}
	if hi/lo-1 > sp.Precision {
		mid := roundRate(math.Sqrt(lo * hi))
		if mid > lo && mid < hi {
			return mid, ""
		}
	}
	if !s.decided(s.tallies[lo]) {
		return lo, ""
	}
	if !s.decided(s.tallies[hi]) {
		return hi, ""
	}
	return 0, result.StopConverged
}

func (s *searcher) rates() []float64 {
	rates := make([]float64, 0, len(s.tallies))
	for r := range s.tallies {
		rates = append(rates, r)
	}
	sort.Float64s(rates)
	return rates
}

// result sums the search up.
func (s *searcher) result(elapsed time.Duration) *result.Search {
	sp := &s.spec
	lo, hi, _ := s.bracket()
	out := &result.Search{Rate: lo, LastPass: lo, FirstFail: hi, Stopped: s.stopped, Trials: s.trials,
		Elapsed: elapsed.Seconds(), Rates: []result.RateTally{},
		Spec: result.SearchRecord{Start: sp.Start, Min: sp.Min, Max: sp.Max, Factor: sp.Factor, Precision: sp.Precision,
			Repeats: sp.Repeats, MaxSteps: sp.MaxSteps, MaxTimeS: sp.MaxTime.Seconds()}}
	if out.Trials == nil {
		out.Trials = []result.Trial{}
	}
	for _, r := range s.rates() {
		out.Rates = append(out.Rates, *s.tallies[r])
	}
	out.Confirmed = (lo == 0 || s.decided(s.tallies[lo])) && (hi == 0 || s.decided(s.tallies[hi])) && (lo != 0 || hi != 0)
	if lo > 0 && hi > 0 {
		out.Resolution = hi/lo - 1
	}
	out.Certainty = s.certainty(lo, hi, out)
	return out
}

// certainty says the answer and how sure it is, in a sentence.
func (s *searcher) certainty(lo, hi float64, out *result.Search) string {
	runs := func(r float64, pass bool) string {
		t := s.tallies[r]
		n := t.Passes
		if !pass {
			n = t.Fails
		}
		return fmt.Sprintf("%d of %d runs", n, t.Passes+t.Fails)
	}
	sure := "confirmed"
	if !out.Confirmed {
		sure = fmt.Sprintf("NOT confirmed (an end of the bracket lacks a majority of %d runs)", s.spec.Repeats)
	}
	switch {
	case lo == 0 && hi == 0:
		return "no step ran"
	case lo == 0:
		return fmt.Sprintf("no rate met the objective: the lowest tried, %s/s, missed it in %s; %s", result.FormatRate(hi), runs(hi, false), sure)
	case hi == 0:
		return fmt.Sprintf("%s/s met the objective in %s and no higher rate was tried that missed it: the knee is at or above it; %s",
			result.FormatRate(lo), runs(lo, true), sure)
	}
	return fmt.Sprintf("the knee lies between %s/s (met the objective in %s) and %s/s (missed it in %s), a bracket of %.0f%%; %s",
		result.FormatRate(lo), runs(lo, true), result.FormatRate(hi), runs(hi, false), 100*(hi/lo-1), sure)
}

// roundRate keeps three significant digits, so that bisected rates read
// well and a rate tried again is the same rate.
func roundRate(r float64) float64 {
	if r <= 0 {
		return 0
	}
	mag := math.Pow(10, math.Floor(math.Log10(r))-2)
	return math.Round(r/mag) * mag
}
