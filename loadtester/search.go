package loadtester

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
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

// SearchSpec bounds and shapes a search. Zero fields take the defaults
// DefaultSearchSpec gives.
type SearchSpec struct {
	Start     float64       // first rate tried (req/s)
	Min       float64       // lowest rate tried when even Start fails
	Max       float64       // highest rate tried (0: no limit)
	Factor    float64       // step of the climb (and of the descent)
	Precision float64       // the bracket is narrow once first fail / last pass - 1 <= Precision
	Repeats   int           // runs a deciding rate needs a majority of (1: no repeats)
	MaxSteps  int           // steps in all, repeats included
	MaxTime   time.Duration // wall time for the whole search (0: no limit)
	// Now is the search's clock (nil: time.Now), injected by tests.
	Now func() time.Time
}

// DefaultSearchSpec is what --find-rate starts from.
func DefaultSearchSpec() SearchSpec {
	return SearchSpec{Start: 1000, Min: 10, Factor: 2, Precision: 0.05, Repeats: 3, MaxSteps: 20}
}

// Validate names each bad bound after its flag.
func (s *SearchSpec) Validate() error {
	var errs []string
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Sprintf(format, args...))
		}
	}
	check(s.Start > 0, "--find-rate-start %g: want > 0", s.Start)
	check(s.Min > 0 && s.Min <= s.Start, "--find-rate-min %g: want > 0 and <= --find-rate-start %g", s.Min, s.Start)
	check(s.Max == 0 || s.Max >= s.Start, "--find-rate-max %g: want 0 (none) or >= --find-rate-start %g", s.Max, s.Start)
	check(s.Factor > 1, "--find-rate-factor %g: want > 1", s.Factor)
	check(s.Precision > 0 && s.Precision < 1, "--find-rate-precision %g: want a fraction in (0, 1), like 0.05", s.Precision)
	check(s.Repeats >= 1 && s.Repeats%2 == 1, "--find-rate-repeats %d: want an odd number >= 1 (a majority decides)", s.Repeats)
	check(s.MaxSteps >= 1, "--find-rate-steps %d: want >= 1", s.MaxSteps)
	check(s.MaxTime >= 0, "--find-rate-time %v: want >= 0 (0: no limit)", s.MaxTime)
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// Probe runs one step at rate and says whether it met the objective. An
// error (the target is down, the run could not start) ends the search.
type Probe func(ctx context.Context, rate float64) (pass bool, err error)

// Search is what a search found and how sure it is.
type Search struct {
	// Rate is the answer: the highest rate that met the objective (0: none
	// did). LastPass and FirstFail are the bracket around the knee (its
	// ends' tallies below); FirstFail 0 means no rate tried failed.
	Rate      float64 `json:"rate"`
	LastPass  float64 `json:"last_pass"`
	FirstFail float64 `json:"first_fail"`
	// Confirmed: each end of the bracket was decided by a majority of
	// Repeats runs (an end that does not exist needs none).
	Confirmed bool `json:"confirmed"`
	// Resolution is FirstFail / LastPass - 1: how far above the answer the
	// knee may lie (0 when either is missing).
	Resolution float64      `json:"resolution"`
	Stopped    string       `json:"stopped"`   // why the search ended
	Certainty  string       `json:"certainty"` // the answer and its bracket in a sentence
	Trials     []Trial      `json:"trials"`    // every step, in order
	Rates      []RateTally  `json:"rates"`     // every rate tried, ascending
	Elapsed    float64      `json:"elapsed_s"`
	Spec       SearchRecord `json:"spec"`
}

// Trial is one step of a search.
type Trial struct {
	Rate float64 `json:"rate"`
	Pass bool    `json:"pass"`
}

// RateTally is every run of one rate.
type RateTally struct {
	Rate   float64 `json:"rate"`
	Passes int     `json:"passes"`
	Fails  int     `json:"fails"`
}

// SearchRecord is the spec as the result records it.
type SearchRecord struct {
	Start     float64 `json:"start"`
	Min       float64 `json:"min"`
	Max       float64 `json:"max,omitempty"`
	Factor    float64 `json:"factor"`
	Precision float64 `json:"precision"`
	Repeats   int     `json:"repeats"`
	MaxSteps  int     `json:"max_steps"`
	MaxTimeS  float64 `json:"max_time_s,omitempty"`
}

// Why a search stopped.
const (
	StopConverged   = "converged: the bracket is within the precision and both ends are decided"
	StopMaxPassed   = "every rate up to --find-rate-max met the objective"
	StopMinFailed   = "even the lowest rate (--find-rate-min) missed the objective"
	StopSteps       = "step budget (--find-rate-steps) spent"
	StopTime        = "time budget (--find-rate-time) would be exceeded by another step"
	StopInterrupted = "interrupted"
	StopError       = "a step could not run"
)

// FindRate searches for the highest rate that meets the objective probe
// judges (above). It returns what it found even with an error (from the
// probe, or the context's when interrupted).
func FindRate(ctx context.Context, spec SearchSpec, probe Probe) (*Search, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	now := spec.Now
	if now == nil {
		now = time.Now
	}
	s := &searcher{spec: spec, tallies: map[float64]*RateTally{}}
	began := now()
	var longest time.Duration
	var err error
	for {
		if ctx.Err() != nil {
			s.stopped, err = StopInterrupted, ctx.Err()
			break
		}
		rate, stop := s.next()
		if stop != "" {
			s.stopped = stop
			break
		}
		if len(s.trials) >= spec.MaxSteps {
			s.stopped = StopSteps
			break
		}
		if spec.MaxTime > 0 && now().Sub(began)+longest > spec.MaxTime {
			s.stopped = StopTime
			break
		}
		t0 := now()
		pass, perr := probe(ctx, rate)
		longest = max(longest, now().Sub(t0))
		if perr != nil {
			s.stopped, err = StopError, perr
			if ctx.Err() != nil { // the step was cut short by the interrupt, not by the target
				s.stopped = StopInterrupted
			}
			break
		}
		s.record(rate, pass)
	}
	return s.result(now().Sub(began)), err
}

// searcher is one search's state (its caller's goroutine only).
type searcher struct {
	spec    SearchSpec
	tallies map[float64]*RateTally
	trials  []Trial
	stopped string
}

func (s *searcher) record(rate float64, pass bool) {
	t := s.tallies[rate]
	if t == nil {
		t = &RateTally{Rate: rate}
		s.tallies[rate] = t
	}
	if pass {
		t.Passes++
	} else {
		t.Fails++
	}
	s.trials = append(s.trials, Trial{Rate: rate, Pass: pass})
}

// verdicts of a rate's runs so far.
const (
	leanNone = iota // untried, or as many passes as fails
	leanPass
	leanFail
)

func lean(t *RateTally) int {
	switch {
	case t == nil || t.Passes == t.Fails:
		return leanNone
	case t.Passes > t.Fails:
		return leanPass
	}
	return leanFail
}

// decided: a majority of Repeats runs agree.
func (s *searcher) decided(t *RateTally) bool {
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
			return 0, StopMaxPassed
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
			return 0, StopMinFailed
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
	return 0, StopConverged
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
func (s *searcher) result(elapsed time.Duration) *Search {
	sp := &s.spec
	lo, hi, _ := s.bracket()
	out := &Search{Rate: lo, LastPass: lo, FirstFail: hi, Stopped: s.stopped, Trials: s.trials,
		Elapsed: elapsed.Seconds(), Rates: []RateTally{},
		Spec: SearchRecord{Start: sp.Start, Min: sp.Min, Max: sp.Max, Factor: sp.Factor, Precision: sp.Precision,
			Repeats: sp.Repeats, MaxSteps: sp.MaxSteps, MaxTimeS: sp.MaxTime.Seconds()}}
	if out.Trials == nil {
		out.Trials = []Trial{}
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
func (s *searcher) certainty(lo, hi float64, out *Search) string {
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
		return fmt.Sprintf("no rate met the objective: the lowest tried, %s/s, missed it in %s; %s", fmtRate(hi), runs(hi, false), sure)
	case hi == 0:
		return fmt.Sprintf("%s/s met the objective in %s and no higher rate was tried that missed it: the knee is at or above it; %s",
			fmtRate(lo), runs(lo, true), sure)
	}
	return fmt.Sprintf("the knee lies between %s/s (met the objective in %s) and %s/s (missed it in %s), a bracket of %.0f%%; %s",
		fmtRate(lo), runs(lo, true), fmtRate(hi), runs(hi, false), 100*(hi/lo-1), sure)
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

// fmtRate prints a rate without a needless fraction.
func fmtRate(r float64) string {
	if r == math.Trunc(r) {
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.4g", r)
}
