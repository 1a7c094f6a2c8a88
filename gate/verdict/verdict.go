// Package verdict is the gate's rule: a ratio's interval (gate/stats) and
// the problems met while measuring become pass, regression or could not
// judge, with a reason code CI scripts may branch on and the exit status
// CI sees. It is pure; package gate measures, and calls it.
package verdict

import (
	"fmt"
	"math"

	"weaseldb/gate/stats"
)

// Verdict is the gate's answer; its exit code is what CI sees.
type Verdict string

const (
	Pass          Verdict = "pass"
	Regression    Verdict = "regression"
	CouldNotJudge Verdict = "could not judge"
)

// ExitCode maps a verdict to the process exit status: 0 pass, 1 regression,
// 2 could not judge.
func (v Verdict) ExitCode() int {
	switch v {
	case Pass:
		return 0
	case Regression:
		return 1
	default:
		return 2
	}
}

// Reason codes say why a verdict was reached; CI scripts may branch on them.
const (
	ReasonWithinTolerance = "within_tolerance"
	ReasonSlower          = "slower"
	ReasonNoisy           = "noisy"
	ReasonServerStart     = "server_start"
	ReasonServerDied      = "server_died"
	ReasonLoadFailed      = "load_tester_failed"
	ReasonErrors          = "errors"
	ReasonUnclean         = "unclean_run"
	ReasonClientBound     = "client_bound"
	ReasonOtherMachine    = "other_machine"
	ReasonOtherSettings   = "other_settings"
	ReasonBadInput        = "bad_input"
)

// noiseReasons are the could-not-judge reasons that come from the machine,
// not from the server under test: --noise-ok turns them into a pass.
var noiseReasons = map[string]bool{ReasonNoisy: true, ReasonClientBound: true}

// Decision is a verdict with a one-line reason.
type Decision struct {
	Verdict    Verdict `json:"verdict"`
	ReasonCode string  `json:"reason_code"`
	Reason     string  `json:"reason"`
	// NoiseForgiven is set when --noise-ok turned a could-not-judge for noise
	// into a pass; the original reason stays in Reason.
	NoiseForgiven bool `json:"noise_forgiven,omitempty"`
}

// ExitCode is the verdict's exit status.
func (d Decision) ExitCode() int { return d.Verdict.ExitCode() }

// Policy holds the knobs of the decision.
type Policy struct {
	// Tolerance is the fraction of req/s B may lose before it is a
	// regression (0.10: B must keep at least 90% of A).
	Tolerance float64
	// NoiseOK turns "could not judge" for noise or a client-bound run into
	// a pass (for smoke runs on shared CI machines); failures of the server
	// itself are never forgiven.
	NoiseOK bool
}

// Floor is the ratio below which B is a regression: 1 - Tolerance.
func (p Policy) Floor() float64 { return 1 - p.Tolerance }

// PassFloorFactor scales the tolerance into the largest slowdown a passing
// run's interval may still admit: 2 × 5% = 10%, the slowdown the gate is
// meant to catch with its defaults.
const PassFloorFactor = 2.0

// PassFloor is the lowest CI bound a pass may have: 1 - 2*Tolerance. A run
// whose interval still admits a slowdown that large was too noisy to have
// seen one, so it cannot pass.
func (p Policy) PassFloor() float64 { return 1 - PassFloorFactor*p.Tolerance }

// Decide turns the ratio's confidence interval into a verdict:
//
//	ratio < 1-tol and CI high < 1       -> regression (slower beyond tolerance, and not by chance)
//	ratio >= 1-tol and CI low >= 1-2tol -> pass
//	otherwise                            -> undecided: too noisy (the gate adds rounds, then could not judge)
//
// The regression rule asks for practical significance (the point estimate is
// past the tolerance) and statistical significance (the interval excludes
// "no change"); requiring the whole interval below 1-tol would let real
// slowdowns just past the tolerance slip through most of the time.
func Decide(ci stats.RatioCI, p Policy) Decision {
	if math.IsNaN(ci.Ratio) || math.IsNaN(ci.Low) || math.IsNaN(ci.High) || math.IsInf(ci.Ratio, 0) {
		return Decision{Verdict: CouldNotJudge, ReasonCode: ReasonBadInput,
			Reason: "no usable samples to compare"}
	}
	// An infinite end (too few rounds for an interval) never passes or fails.
	desc := fmt.Sprintf("ratio %.3f, %.0f%% CI [%.3f, %.3f]", ci.Ratio, ci.Level*100, ci.Low, ci.High)
	switch {
	case ci.Ratio < p.Floor() && ci.High < 1:
		return Decision{Verdict: Regression, ReasonCode: ReasonSlower,
			Reason: fmt.Sprintf("%s: B is %.1f%% slower, beyond the %.0f%% tolerance", desc, (1-ci.Ratio)*100, p.Tolerance*100)}
	case ci.Ratio >= p.Floor() && ci.Low >= p.PassFloor():
		return Decision{Verdict: Pass, ReasonCode: ReasonWithinTolerance,
			Reason: fmt.Sprintf("%s: within the %.0f%% tolerance", desc, p.Tolerance*100)}
	case ci.Ratio < p.Floor():
		return p.noise(Decision{Verdict: CouldNotJudge, ReasonCode: ReasonNoisy,
			Reason: fmt.Sprintf("too noisy: %s is past the %.0f%% tolerance but the interval includes no change", desc, p.Tolerance*100)})
	default:
		return p.noise(Decision{Verdict: CouldNotJudge, ReasonCode: ReasonNoisy,
			Reason: fmt.Sprintf("too noisy: %s admits a slowdown of %.0f%% or more", desc, PassFloorFactor*p.Tolerance*100)})
	}
}

// noise applies --noise-ok to a could-not-judge caused by the machine.
func (p Policy) noise(d Decision) Decision {
	if p.NoiseOK && d.Verdict == CouldNotJudge && noiseReasons[d.ReasonCode] {
		d.Verdict = Pass
		d.NoiseForgiven = true
		d.Reason = "noise forgiven (--noise-ok): " + d.Reason
	}
	return d
}

// Problem is something that went wrong while measuring; any problem makes
// the verdict "could not judge" unless it is a forgiven noise reason.
type Problem struct {
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// DecideWithProblems gives precedence to operational problems (the first one
// found is the reason), then falls back to Decide.
func DecideWithProblems(ci stats.RatioCI, p Policy, problems []Problem) Decision {
	for _, pr := range problems {
		d := p.noise(Decision{Verdict: CouldNotJudge, ReasonCode: pr.Code, Reason: pr.Detail})
		if d.Verdict == CouldNotJudge {
			return d
		}
	}
	d := Decide(ci, p)
	if d.Verdict != CouldNotJudge && len(problems) > 0 && p.NoiseOK {
		// Every problem was forgiven noise; say so rather than hide it.
		d.NoiseForgiven = true
		d.Reason = fmt.Sprintf("%s (forgiven: %s)", d.Reason, problems[0].Detail)
	}
	return d
}

// Reason codes of a scenario whose cost decided.
const (
	ReasonCostWithin = "cost_within_tolerance"
	ReasonCostHigher = "cost_higher"
	ReasonCostNoisy  = "cost_noisy"
	ReasonCostFailed = "cost_could_not_judge"
)

// ReasonCPUHigher: B's CPU per request rose past the tolerance.
const ReasonCPUHigher = "cpu_per_request_higher"

// Rank orders verdicts from best to worst. A regression outranks
// could-not-judge: it is a measured fact about B, while the other is the
// absence of one; the table lists every scenario's, and CI fails on both.
func Rank(v Verdict) int {
	switch v {
	case Pass:
		return 0
	case Regression:
		return 2
	default:
		return 1
	}
}

// IsNoise reports whether a could-not-judge reason comes from the machine
// (noise, a client-bound load tester), which --noise-ok forgives.
func IsNoise(code string) bool { return noiseReasons[code] }
