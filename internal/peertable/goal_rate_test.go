package peertable

import (
	"strings"
	"testing"
)

// TestOpenLoopGoalHoldsTheRate: the open loop's CPU goal counts only where
// both clients held the rate (within HeldRate).
func TestOpenLoopGoalHoldsTheRate(t *testing.T) {
	g := Goal{Issue: issue53, Scenario: "open_loop", Subject: "load_tester_io_uring", Peer: "wrk2", Metric: MetricCPU, Op: "<=", Bar: 0.6, HoldRate: true}
	for _, c := range []struct {
		name             string
		subjectRPS, wrk2 float64
		rate             float64
		verdict, noteHas string
		figureKept       bool
	}{
		{"both hold", 49_900, 49_800, 50_000, VerdictMet, "", true},
		{"rate not known", 10_000, 800, 0, VerdictMet, "", true},
		{"load_tester short", 30_000, 49_800, 50_000, VerdictNotMet, "load_tester_io_uring did not hold the rate (30,000 of 50,000 req/s)", true},
		{"wrk2 short", 49_900, 844, 50_000, VerdictNotMeasured, "wrk2 did not hold the rate (844 of 50,000 req/s)", false},
		{"both short: the subject's is the verdict", 30_000, 844, 50_000, VerdictNotMet, "load_tester_io_uring did not hold", true},
	} {
		samples := []Sample{
			// CPU per request 5 µs against wrk2's 10 µs: 0.5×, under the bar.
			load("client", "open_loop", "load_tester_io_uring", 1, c.subjectRPS, 1, c.subjectRPS*5000),
			load("client", "open_loop", "wrk2", 1, c.wrk2, 1, c.wrk2*10_000),
		}
		tab, err := Build(samples, Machine{}, Run{Rounds: 1, RateRPS: c.rate})
		if err != nil {
			t.Fatal(err)
		}
		var v *GoalVerdict
		for i := range tab.Goals {
			if tab.Goals[i].Goal == g {
				v = &tab.Goals[i]
			}
		}
		if v == nil {
			t.Fatalf("%s: the goal is not among Goals", c.name)
		}
		if v.Verdict != c.verdict {
			t.Errorf("%s: %s, want %s", c.name, v.Verdict, c.verdict)
		}
		if (c.noteHas == "") != (v.Note == "") || !strings.Contains(v.Note, c.noteHas) {
			t.Errorf("%s: note %q, want one with %q", c.name, v.Note, c.noteHas)
		}
		if (v.Ratio != nil) != c.figureKept || (v.Ratio != nil && !near(*v.Ratio, 0.5)) {
			t.Errorf("%s: figure %v, kept %v", c.name, deref(v.Ratio), c.figureKept)
		}
	}
}
