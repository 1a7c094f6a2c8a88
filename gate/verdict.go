package gate

import (
	"fmt"
	"math"
	"slices"
	"strings"
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

// The verdicts of a run's parts combined: a scenario's over its tiers,
// and the run's over its scenarios.

// Reason codes of a scenario whose cost decided.
const (
	ReasonCostWithin = "cost_within_tolerance"
	ReasonCostHigher = "cost_higher"
	ReasonCostNoisy  = "cost_noisy"
	ReasonCostFailed = "cost_could_not_judge"
)

// costDecision is the cost tier's verdict as a Decision.
func (c *CostJudgement) decision() Decision {
	d := Decision{Verdict: c.Verdict.Verdict(), Reason: "cost: " + c.Reason}
	switch {
	case c.Verdict == CostPass:
		d.ReasonCode = ReasonCostWithin
	case c.Verdict == CostRegression:
		d.ReasonCode = ReasonCostHigher
	case c.A.Spread > c.MaxSpread || c.B.Spread > c.MaxSpread:
		d.ReasonCode = ReasonCostNoisy
	default:
		d.ReasonCode = ReasonCostFailed
	}
	return d
}

// decision is the scenario's verdict over its tiers: the worst of them
// (the time tier's first when they tie).
func (s *ScenarioResult) decision() Decision {
	ranTime := slices.Contains(s.Tiers, TierTime) || len(s.Tiers) == 0
	if s.Cost == nil {
		return s.Decision
	}
	c := s.Cost.decision()
	if !ranTime || verdictRank(c.Verdict) > verdictRank(s.Decision.Verdict) {
		c.NoiseForgiven = s.NoiseForgiven
		return c
	}
	return s.Decision
}

// closeness orders passing scenarios for "the closest call": the time
// tier's ratio (lower is closer), else the cost tier's (higher is closer).
func (s *ScenarioResult) closeness() float64 {
	if slices.Contains(s.Tiers, TierTime) || s.Cost == nil {
		return s.CI.Ratio
	}
	return 1 / s.Cost.Ratio
}

// verdictRank orders verdicts from best to worst. A regression outranks
// could-not-judge: it is a measured fact about B, while the other is the
// absence of one; the table lists every scenario's, and CI fails on both.
func verdictRank(v Verdict) int {
	switch v {
	case Pass:
		return 0
	case Regression:
		return 2
	default:
		return 1
	}
}

// combineVerdicts gives the run's decision, the worst of the scenarios'
// (the first such in the file's order), and names the scenario it came
// from; when all passed, the closest call. Noise forgiven in any scenario
// is said at the top, so CI can warn on it.
func combineVerdicts(scs []ScenarioResult) (Decision, string) {
	if len(scs) == 0 {
		return Decision{Verdict: CouldNotJudge, ReasonCode: ReasonBadInput, Reason: "no scenarios"}, ""
	}
	worst := 0
	forgiven := false
	ds := make([]Decision, len(scs))
	for i := range scs {
		ds[i] = scs[i].decision()
		forgiven = forgiven || scs[i].NoiseForgiven || ds[i].NoiseForgiven
		if verdictRank(ds[i].Verdict) > verdictRank(ds[worst].Verdict) {
			worst = i
		}
	}
	if ds[worst].Verdict == Pass {
		for i := range scs {
			if lowerRatio(scs[i].closeness(), scs[worst].closeness()) {
				worst = i
			}
		}
	}
	w, wd := scs[worst], ds[worst]
	// A problem every scenario met before measuring (bad options, a
	// missing load tester) is the run's, not one scenario's.
	if len(w.Problems) > 0 && w.Rounds == 0 && sameFirstProblem(scs) {
		d := w.Decision
		d.NoiseForgiven = forgiven
		return d, ""
	}
	d := Decision{Verdict: wd.Verdict, ReasonCode: wd.ReasonCode, NoiseForgiven: forgiven}
	if wd.Verdict == Pass {
		d.Reason = fmt.Sprintf("every scenario passed; the closest, %s: %s", w.Name, wd.Reason)
	} else {
		d.Reason = fmt.Sprintf("scenario %s: %s", w.Name, wd.Reason)
		var others []string
		for i, s := range scs {
			if i != worst && ds[i].Verdict != Pass {
				others = append(others, fmt.Sprintf("%s %s (%s)", s.Name, ds[i].Verdict, ds[i].ReasonCode))
			}
		}
		if len(others) > 0 {
			d.Reason += "; also " + strings.Join(others, ", ")
		}
	}
	return d, w.Name
}

// lowerRatio: a below b, a NaN ratio (nothing measured) never lower.
func lowerRatio(a, b float64) bool {
	return !math.IsNaN(a) && (math.IsNaN(b) || a < b)
}

func sameFirstProblem(scs []ScenarioResult) bool {
	for _, s := range scs {
		if len(s.Problems) == 0 || s.Problems[0] != scs[0].Problems[0] {
			return false
		}
	}
	return true
}

// finalLevel is the level of the look the rounds stopped at (level when
// there was none).
func finalLevel(r *Judgement, level float64) float64 {
	if n := len(r.Looks); n > 0 {
		return r.Looks[n-1].Level
	}
	return level
}

// judge computes the ratio and its interval at level over what was
// measured so far and gives the verdict, problems first. final records the
// client-bound check among the problems; a look only consults it.
func (m *measurement) judge(sc *scenarioRun, final bool, level float64) Decision {
	r := sc.r
	a, b := m.samples(sc)
	if m.mode == ModeAB {
		r.CI = stats.PairedRatio(a, b, level)
	} else {
		r.CI = stats.UnpairedRatio(a, b, level)
	}
	r.Rank = stats.CompareRuns(a, b)
	problems := append(slices.Clone(r.Problems), m.clientBoundProblems(sc)...)
	policy := Policy{Tolerance: sc.sc.Tolerance, NoiseOK: m.o.NoiseOK}
	d := DecideWithProblems(r.CI, policy, problems)
	if !final {
		return d
	}
	r.Problems = problems
	if m.mode == ModeAB && len(problems) == 0 {
		var ca, cb []float64
		for _, s := range sc.sides {
			if s.name == "A" {
				ca = s.cpuPerReq
			} else {
				cb = s.cpuPerReq
			}
		}
		r.CPU = judgeCPU(ca, cb, level, Policy{Tolerance: sc.sc.Tolerance})
		d = withCPU(d, r.CPU)
	}
	return d
}

// clientBoundProblems turns a side measured mostly at the client's limit
// into a problem: its req/s says how fast the load tester is, not the server.
func (m *measurement) clientBoundProblems(sc *scenarioRun) []Problem {
	if m.o.AllowClientBound {
		return nil
	}
	var out []Problem
	for _, s := range sc.sides {
		n := len(s.samples)
		if n > 0 && float64(s.clientBound) > m.o.MaxClientBoundFraction*float64(n) {
			out = append(out, Problem{Code: ReasonClientBound, Detail: fmt.Sprintf(
				"the load tester was the bottleneck in %d of %d runs of %s%s", s.clientBound, n, s.name, clientBoundWhy(sc.r, s.name))})
		}
	}
	return out
}

// clientBoundWhy is ": <load_tester's reason>" from the side's last
// client-bound run, or "".
func clientBoundWhy(r *Judgement, side string) string {
	for i := len(r.Runs) - 1; i >= 0; i-- {
		if run := r.Runs[i]; run.Side == side && run.ClientBound && run.ClientBoundWhy != "" {
			return ": " + run.ClientBoundWhy
		}
	}
	return " (client_bound)"
}
