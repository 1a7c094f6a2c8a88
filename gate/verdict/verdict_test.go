package verdict

import (
	"math"
	"strings"
	"testing"

	"weaseldb/gate/stats"
)

func TestDecide(t *testing.T) {
	ci := func(r, lo, hi float64) stats.RatioCI { return stats.RatioCI{Ratio: r, Low: lo, High: hi, Level: 0.95} }
	tol := Policy{Tolerance: 0.10}
	tests := []struct {
		name     string
		ci       stats.RatioCI
		policy   Policy
		verdict  Verdict
		reason   string
		exitCode int
	}{
		{"same speed", ci(1.00, 0.95, 1.05), tol, Pass, ReasonWithinTolerance, 0},
		{"faster", ci(1.30, 1.20, 1.40), tol, Pass, ReasonWithinTolerance, 0},
		{"5% slower is within tolerance", ci(0.95, 0.90, 0.99), tol, Pass, ReasonWithinTolerance, 0},
		{"25% slower", ci(0.75, 0.70, 0.80), tol, Regression, ReasonSlower, 1},
		{"15% slower, interval below 1", ci(0.85, 0.80, 0.97), tol, Regression, ReasonSlower, 1},
		{"15% slower but could be chance", ci(0.85, 0.70, 1.02), tol, CouldNotJudge, ReasonNoisy, 2},
		{"fine estimate, interval admits 25% slower", ci(0.98, 0.70, 1.20), tol, CouldNotJudge, ReasonNoisy, 2},
		{"noise forgiven", ci(0.98, 0.70, 1.20), Policy{Tolerance: 0.1, NoiseOK: true}, Pass, ReasonNoisy, 0},
		{"regression never forgiven", ci(0.75, 0.70, 0.80), Policy{Tolerance: 0.1, NoiseOK: true}, Regression, ReasonSlower, 1},
		{"no samples", ci(math.NaN(), math.NaN(), math.NaN()), tol, CouldNotJudge, ReasonBadInput, 2},
		{"too few rounds for an interval", ci(0.70, math.Inf(-1), math.Inf(1)), tol, CouldNotJudge, ReasonNoisy, 2},
		{"defaults: 10% slower, interval below 1", ci(0.90, 0.85, 0.97), Policy{Tolerance: 0.05}, Regression, ReasonSlower, 1},
		{"defaults: A/A needs the interval above 0.90", ci(1.00, 0.89, 1.08), Policy{Tolerance: 0.05}, CouldNotJudge, ReasonNoisy, 2},
		{"defaults: A/A", ci(1.00, 0.93, 1.06), Policy{Tolerance: 0.05}, Pass, ReasonWithinTolerance, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(tt.ci, tt.policy)
			if d.Verdict != tt.verdict || d.ReasonCode != tt.reason || d.ExitCode() != tt.exitCode {
				t.Errorf("Decide = %+v (exit %d), want %s/%s exit %d", d, d.ExitCode(), tt.verdict, tt.reason, tt.exitCode)
			}
			if d.Reason == "" || strings.Contains(d.Reason, "\n") {
				t.Errorf("reason must be one line: %q", d.Reason)
			}
		})
	}
}

func TestDecideWithProblems(t *testing.T) {
	good := stats.RatioCI{Ratio: 1, Low: 0.95, High: 1.05, Level: 0.95}
	tests := []struct {
		name     string
		problems []Problem
		noiseOK  bool
		verdict  Verdict
		reason   string
	}{
		{"none", nil, false, Pass, ReasonWithinTolerance},
		{"server did not start", []Problem{{ReasonServerStart, "A: no ready line in 10s"}}, false, CouldNotJudge, ReasonServerStart},
		{"errors", []Problem{{ReasonErrors, "B: 12 errors in round 3"}}, false, CouldNotJudge, ReasonErrors},
		{"client bound", []Problem{{ReasonClientBound, "A: client bound in 6 of 10 runs"}}, false, CouldNotJudge, ReasonClientBound},
		{"client bound forgiven", []Problem{{ReasonClientBound, "client bound"}}, true, Pass, ReasonWithinTolerance},
		{"errors are not forgiven", []Problem{{ReasonClientBound, "cb"}, {ReasonErrors, "errors"}}, true, CouldNotJudge, ReasonErrors},
		{"other machine", []Problem{{ReasonOtherMachine, "baseline from another CPU"}}, true, CouldNotJudge, ReasonOtherMachine},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := DecideWithProblems(good, Policy{Tolerance: 0.1, NoiseOK: tt.noiseOK}, tt.problems)
			if d.Verdict != tt.verdict || d.ReasonCode != tt.reason {
				t.Errorf("got %+v, want %s/%s", d, tt.verdict, tt.reason)
			}
		})
	}
}

// An interval open at one end (five rounds cannot give a two-sided 95%
// one) decides nothing.
func TestOpenIntervalDecidesNothing(t *testing.T) {
	ci := stats.PairedRatio([]float64{1, 1, 1, 1, 1}, []float64{1, 1, 1, 1, 1}, 0.95)
	if d := Decide(ci, Policy{Tolerance: 0.05}); d.ReasonCode != ReasonNoisy {
		t.Errorf("an open interval decides nothing: %+v", d)
	}
}
