package gate

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"weaseldb/gate/result"
	"weaseldb/gate/stats"
	"weaseldb/gate/verdict"
)

// The verdicts of a run's parts combined: a scenario's over its tiers,
// and the run's over its scenarios.

// scenarioDecision is the scenario's verdict over its tiers: the worst of
// them (the time tier's first when they tie).
func scenarioDecision(s *result.ScenarioResult) verdict.Decision {
	ranTime := slices.Contains(s.Tiers, result.TierTime) || len(s.Tiers) == 0
	if s.Cost == nil {
		return s.Decision
	}
	c := s.Cost.Decision()
	if !ranTime || verdict.Rank(c.Verdict) > verdict.Rank(s.Decision.Verdict) {
		c.NoiseForgiven = s.NoiseForgiven
		return c
	}
	return s.Decision
}

// closeness orders passing scenarios for "the closest call": the time
// tier's ratio (lower is closer), else the cost tier's (higher is closer).
func closeness(s *result.ScenarioResult) float64 {
	if slices.Contains(s.Tiers, result.TierTime) || s.Cost == nil {
		return s.CI.Ratio
	}
	return 1 / s.Cost.Ratio
}

// combineVerdicts gives the run's decision, the worst of the scenarios'
// (the first such in the file's order), and names the scenario it came
// from; when all passed, the closest call. Noise forgiven in any scenario
// is said at the top, so CI can warn on it.
func combineVerdicts(scs []result.ScenarioResult) (verdict.Decision, string) {
	if len(scs) == 0 {
		return verdict.Decision{Verdict: verdict.CouldNotJudge, ReasonCode: verdict.ReasonBadInput, Reason: "no scenarios"}, ""
	}
	worst := 0
	forgiven := false
	ds := make([]verdict.Decision, len(scs))
	for i := range scs {
		ds[i] = scenarioDecision(&scs[i])
		forgiven = forgiven || scs[i].NoiseForgiven || ds[i].NoiseForgiven
		if verdict.Rank(ds[i].Verdict) > verdict.Rank(ds[worst].Verdict) {
			worst = i
		}
	}
	if ds[worst].Verdict == verdict.Pass {
		for i := range scs {
			if lowerRatio(closeness(&scs[i]), closeness(&scs[worst])) {
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
	d := verdict.Decision{Verdict: wd.Verdict, ReasonCode: wd.ReasonCode, NoiseForgiven: forgiven}
	if wd.Verdict == verdict.Pass {
		d.Reason = fmt.Sprintf("every scenario passed; the closest, %s: %s", w.Name, wd.Reason)
	} else {
		d.Reason = fmt.Sprintf("scenario %s: %s", w.Name, wd.Reason)
		var others []string
		for i, s := range scs {
			if i != worst && ds[i].Verdict != verdict.Pass {
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

func sameFirstProblem(scs []result.ScenarioResult) bool {
	for _, s := range scs {
		if len(s.Problems) == 0 || s.Problems[0] != scs[0].Problems[0] {
			return false
		}
	}
	return true
}

// finalLevel is the level of the look the rounds stopped at (level when
// there was none).
func finalLevel(r *result.Judgement, level float64) float64 {
	if n := len(r.Looks); n > 0 {
		return r.Looks[n-1].Level
	}
	return level
}

// judge computes the ratio and its interval at level over what was
// measured so far and gives the verdict, problems first. final records the
// client-bound check among the problems; a look only consults it.
func (m *measurement) judge(sc *scenarioRun, final bool, level float64) verdict.Decision {
	r := sc.r
	a, b := m.samples(sc)
	if m.mode == result.ModeAB {
		r.CI = stats.PairedRatio(a, b, level)
	} else {
		r.CI = stats.UnpairedRatio(a, b, level)
	}
	r.Rank = stats.CompareRuns(a, b)
	problems := append(slices.Clone(r.Problems), m.clientBoundProblems(sc)...)
	policy := verdict.Policy{Tolerance: sc.sc.Tolerance, NoiseOK: m.o.NoiseOK}
	d := verdict.DecideWithProblems(r.CI, policy, problems)
	if !final {
		return d
	}
	r.Problems = problems
	if m.mode == result.ModeAB && len(problems) == 0 {
		var ca, cb []float64
		for _, s := range sc.sides {
			if s.name == "A" {
				ca = s.cpuPerReq
			} else {
				cb = s.cpuPerReq
			}
		}
		r.CPU = judgeCPU(ca, cb, level, verdict.Policy{Tolerance: sc.sc.Tolerance})
		d = withCPU(d, r.CPU)
	}
	return d
}

// clientBoundProblems turns a side measured mostly at the client's limit
// into a problem: its req/s says how fast the load tester is, not the server.
func (m *measurement) clientBoundProblems(sc *scenarioRun) []verdict.Problem {
	if m.o.AllowClientBound {
		return nil
	}
	var out []verdict.Problem
	for _, s := range sc.sides {
		n := len(s.samples)
		if n > 0 && float64(s.clientBound) > m.o.MaxClientBoundFraction*float64(n) {
			out = append(out, verdict.Problem{Code: verdict.ReasonClientBound, Detail: fmt.Sprintf(
				"the load tester was the bottleneck in %d of %d runs of %s%s", s.clientBound, n, s.name, clientBoundWhy(sc.r, s.name))})
		}
	}
	return out
}

// clientBoundWhy is ": <load_tester's reason>" from the side's last
// client-bound run, or "".
func clientBoundWhy(r *result.Judgement, side string) string {
	for i := len(r.Runs) - 1; i >= 0; i-- {
		if run := r.Runs[i]; run.Side == side && run.ClientBound && run.ClientBoundWhy != "" {
			return ": " + run.ClientBoundWhy
		}
	}
	return " (client_bound)"
}
