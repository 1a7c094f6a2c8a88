package result

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"
)

// The search's spec, its result and their schema; the algorithm that runs
// it is the load tester's (loadtester/search.go).

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

// FormatRate prints a rate without a needless fraction.
func FormatRate(r float64) string {
	if r == math.Trunc(r) {
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.4g", r)
}
