package gate

import (
	"strings"
	"testing"

	"weaseldb/gate/result"
	"weaseldb/gate/stats"
	"weaseldb/gate/verdict"
)

func TestParseTiers(t *testing.T) {
	for in, want := range map[string]string{"time": "time", "cost": "cost", "time,cost": "time cost", " cost , time ": "cost time", "cost,cost": "cost"} {
		got, err := ParseTiers(in)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("ParseTiers(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"", ",", "speed", "time,speed"} {
		if _, err := ParseTiers(in); err == nil {
			t.Errorf("ParseTiers(%q) accepted", in)
		}
	}
}

// A scenario's verdict is the worst of its tiers', and the run's the
// worst of its scenarios'.
func TestScenarioDecisionOverTiers(t *testing.T) {
	pass := result.Judgement{Decision: verdict.Decision{Verdict: verdict.Pass, ReasonCode: verdict.ReasonWithinTolerance, Reason: "fine"}, CI: stats.RatioCI{Ratio: 0.99}}
	cost := func(v result.CostVerdict) *result.CostJudgement {
		return &result.CostJudgement{Verdict: v, Reason: string(v), Ratio: 1.02, MaxSpread: 0.01}
	}
	tests := []struct {
		name string
		s    result.ScenarioResult
		want verdict.Verdict
		code string
	}{
		{"time only", result.ScenarioResult{Name: "ok", Tiers: []string{result.TierTime}, Judgement: pass}, verdict.Pass, verdict.ReasonWithinTolerance},
		{"cost regression outranks a time pass", result.ScenarioResult{Name: "ok", Tiers: []string{result.TierTime, result.TierCost}, Judgement: pass, Cost: cost(result.CostRegression)}, verdict.Regression, verdict.ReasonCostHigher},
		{"cost only", result.ScenarioResult{Name: "ok", Tiers: []string{result.TierCost}, Cost: cost(result.CostPass)}, verdict.Pass, verdict.ReasonCostWithin},
		{"cost could not judge", result.ScenarioResult{Name: "ok", Tiers: []string{result.TierTime, result.TierCost}, Judgement: pass, Cost: cost(result.CostCouldNotJudge)}, verdict.CouldNotJudge, verdict.ReasonCostFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := scenarioDecision(&tt.s)
			if d.Verdict != tt.want || d.ReasonCode != tt.code {
				t.Fatalf("decision %+v, want %s (%s)", d, tt.want, tt.code)
			}
			run, by := combineVerdicts([]result.ScenarioResult{{Name: "other", Tiers: []string{result.TierTime}, Judgement: pass}, tt.s})
			if run.Verdict != tt.want {
				t.Errorf("run's verdict %s (%s), want %s", run.Verdict, run.Reason, tt.want)
			}
			if tt.want != verdict.Pass && by != "ok" {
				t.Errorf("decided by %q, want ok", by)
			}
		})
	}
}
