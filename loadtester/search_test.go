package loadtester

import (
	"context"
	"errors"
	"testing"
	"time"
	"weaseldb/loadtester/result"
)

// fakeClock is a search's injected clock: each probe advances it by step.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// kneeProbe passes every rate at or under knee; fail, when set, turns the
// listed probe calls (numbered from 1) into the opposite verdict: a noisy
// step.
func kneeProbe(knee float64, clock *fakeClock, step time.Duration, flip map[int]bool) (result.Probe, *[]float64) {
	var calls []float64
	return func(_ context.Context, rate float64) (bool, error) {
		calls = append(calls, rate)
		if clock != nil {
			clock.t = clock.t.Add(step)
		}
		pass := rate <= knee
		if flip[len(calls)] {
			pass = !pass
		}
		return pass, nil
	}, &calls
}

// The search finds a known knee within one step of its precision: the last
// passing rate is at or under the knee, the first failing one above it,
// and the two within Precision of each other, both ends confirmed by a
// majority of Repeats runs.
func TestFindRateFindsTheKnee(t *testing.T) {
	tests := []struct {
		name      string
		knee      float64
		start     float64
		precision float64
		repeats   int
	}{
		{"knee above start", 37_000, 1000, 0.05, 3},
		{"knee below start", 700, 10_000, 0.05, 3},
		{"knee on a climb step", 8000, 1000, 0.05, 3},
		{"coarse", 123_456, 1000, 0.25, 1},
		{"fine", 50_000, 10_000, 0.01, 3},
		{"five repeats", 20_000, 1000, 0.1, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := result.DefaultSearchSpec()
			spec.Start, spec.Precision, spec.Repeats, spec.MaxSteps, spec.Min = tt.start, tt.precision, tt.repeats, 100, 1
			probe, calls := kneeProbe(tt.knee, nil, 0, nil)
			s, err := FindRate(context.Background(), spec, probe)
			if err != nil {
				t.Fatal(err)
			}
			if s.Stopped != result.StopConverged || !s.Confirmed {
				t.Fatalf("stopped %q, confirmed %v: want converged and confirmed", s.Stopped, s.Confirmed)
			}
			if !(s.LastPass <= tt.knee && s.FirstFail > tt.knee) {
				t.Errorf("bracket [%g, %g] does not hold the knee %g", s.LastPass, s.FirstFail, tt.knee)
			}
			if s.FirstFail/s.LastPass-1 > tt.precision || s.Resolution > tt.precision {
				t.Errorf("bracket [%g, %g] (resolution %.3f) wider than the precision %g", s.LastPass, s.FirstFail, s.Resolution, tt.precision)
			}
			if s.Rate != s.LastPass || len(s.Trials) != len(*calls) {
				t.Errorf("rate %g, last pass %g, %d trials for %d probes", s.Rate, s.LastPass, len(s.Trials), len(*calls))
			}
			need := tt.repeats/2 + 1
			for _, r := range s.Rates {
				if (r.Rate == s.LastPass && r.Passes < need) || (r.Rate == s.FirstFail && r.Fails < need) {
					t.Errorf("end %g decided by %d passes, %d fails: want a majority of %d", r.Rate, r.Passes, r.Fails, tt.repeats)
				}
			}
		})
	}
}

// One noisy step cannot decide: a passing rate that fails once (or a
// failing one that passes once) is re-run until a majority agrees, and the
// answer is the one a quiet run gives.
func TestFindRateRepeatsOutweighANoisyStep(t *testing.T) {
	const knee = 37_000
	spec := result.DefaultSearchSpec()
	spec.Start, spec.MaxSteps = 1000, 100
	quiet, quietCalls := kneeProbe(knee, nil, 0, nil)
	want, err := FindRate(context.Background(), spec, quiet)
	if err != nil {
		t.Fatal(err)
	}
	n := len(*quietCalls)
	for call := 1; call <= n; call++ {
		noisy, _ := kneeProbe(knee, nil, 0, map[int]bool{call: true})
		got, err := FindRate(context.Background(), spec, noisy)
		if err != nil {
			t.Fatal(err)
		}
		// A flip during the climb or the bisection may move the bracket
		// (the bisection then passes the knee on another path), but the
		// answer still holds the knee and is confirmed.
		if !(got.LastPass <= knee && got.FirstFail > knee) || !got.Confirmed {
			t.Errorf("step %d flipped: bracket [%g, %g], confirmed %v; a quiet search gives [%g, %g]",
				call, got.LastPass, got.FirstFail, got.Confirmed, want.LastPass, want.FirstFail)
		}
	}
}

// The bounds: the step and time budgets stop the search (the time budget
// before a step that would overrun it, on the injected clock), the
// highest rate passing stops the climb, the lowest failing stops the
// descent, an error from a step stops it at once, and so does a cancelled
// context.
func TestFindRateBounds(t *testing.T) {
	stepErr := errors.New("target down")
	tests := []struct {
		name     string
		spec     func(*result.SearchSpec)
		knee     float64
		failAt   int // the probe call (from 1) that returns stepErr; 0: none
		cancelAt int // the probe call (from 1) during which the context is cancelled; 0: none
		cancel   bool
		stopped  string
		maxCalls int
		wantErr  error
		rate     float64 // the answer, when exact
	}{
		{"step budget", func(s *result.SearchSpec) { s.MaxSteps = 4 }, 37_000, 0, 0, false, result.StopSteps, 4, nil, 8000},
		{"time budget: a 10 s step never starts past 35 s", func(s *result.SearchSpec) { s.MaxTime = 35 * time.Second }, 37_000, 0, 0, false, result.StopTime, 3, nil, 4000},
		{"max passes", func(s *result.SearchSpec) { s.Max = 5000 }, 1e9, 0, 0, false, result.StopMaxPassed, 5, nil, 5000},
		{"min fails", func(s *result.SearchSpec) { s.Min = 200 }, 10, 0, 0, false, result.StopMinFailed, 5, nil, 0},
		{"error stops at once", nil, 37_000, 2, 0, false, result.StopError, 2, stepErr, 1000},
		{"cancelled", nil, 37_000, 0, 0, true, result.StopInterrupted, 0, context.Canceled, 0},
		{"cancelled during a step", nil, 37_000, 0, 3, false, result.StopInterrupted, 3, context.Canceled, 2000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := result.DefaultSearchSpec()
			spec.Start, spec.MaxSteps = 1000, 100
			if tt.spec != nil {
				tt.spec(&spec)
			}
			clock := &fakeClock{t: time.Unix(0, 0)}
			spec.Now = clock.now
			inner, calls := kneeProbe(tt.knee, clock, 10*time.Second, nil)
			ctx, cancel := context.WithCancel(context.Background())
			probe := func(ctx context.Context, rate float64) (bool, error) {
				switch len(*calls) + 1 {
				case tt.failAt:
					*calls = append(*calls, rate)
					return false, stepErr
				case tt.cancelAt:
					*calls = append(*calls, rate)
					cancel()
					return false, context.Canceled
				}
				return inner(ctx, rate)
			}
			if tt.cancel {
				cancel()
			}
			defer cancel()
			s, err := FindRate(ctx, spec, probe)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if s.Stopped != tt.stopped || len(*calls) > tt.maxCalls || s.Rate != tt.rate {
				t.Errorf("stopped %q after %d probes with rate %g; want %q, at most %d probes, rate %g (trials %v)",
					s.Stopped, len(*calls), s.Rate, tt.stopped, tt.maxCalls, tt.rate, s.Trials)
			}
			if s.Certainty == "" {
				t.Error("no certainty sentence")
			}
		})
	}
}

func TestRoundRate(t *testing.T) {
	for _, tt := range []struct{ in, want float64 }{
		{28284.27, 28300}, {1000, 1000}, {999.6, 1000}, {12.345, 12.3}, {7, 7}, {0, 0},
	} {
		if got := roundRate(tt.in); got != tt.want {
			t.Errorf("roundRate(%g) = %g, want %g", tt.in, got, tt.want)
		}
	}
}
