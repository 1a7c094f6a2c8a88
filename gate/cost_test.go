package gate

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"weaseldb/gate/result"
	"weaseldb/gate/stats"
	"weaseldb/gate/verdict"
)

// synthCostLab answers cost runs from tables: side -> instructions per
// request of each run (the last repeats), with failures on demand.
type synthCostLab struct {
	mu    sync.Mutex
	per   map[string][]float64
	fail  map[string]error // side -> error of every run
	specs []CostSpec
}

func (l *synthCostLab) runCost(_ context.Context, spec CostSpec) (result.CostSample, error) {
	l.mu.Lock()
	l.specs = append(l.specs, spec)
	l.mu.Unlock()
	if err := l.fail[spec.Side]; err != nil {
		return result.CostSample{}, err
	}
	runs := l.per[spec.Side]
	v := runs[min(spec.Run, len(runs))-1]
	n := int64(spec.Requests)
	return result.CostSample{Run: spec.Run, Requests: n, InstructionsPerRequest: v, UnfilteredPerRequest: 2 * v,
		Instructions: int64(v) * n, Unfiltered: int64(2*v) * n, AllocsPerRequest: 1}, nil
}

func TestCostVerdicts(t *testing.T) {
	tests := []struct {
		name     string
		a, b     []float64
		verdict  result.CostVerdict
		runs     int // per side
		inReason string
	}{
		{"A/A within the noise", []float64{10000, 10010, 9995}, []float64{10004, 9998, 10006}, result.CostPass, 3, "within the 0.50% tolerance"},
		{"B 1% dearer", []float64{10000, 10010, 9995}, []float64{10100, 10105, 10098}, result.CostRegression, 3, "beyond the 0.50% tolerance"},
		{"B cheaper", []float64{10000, 10010, 9995}, []float64{9000, 9001, 9002}, result.CostPass, 3, "-9.99%"},
		{"runs disagree", []float64{10000, 12000, 10000}, []float64{10000, 10000, 10000}, result.CostCouldNotJudge, 3, "the runs disagree"},
		// Past the tolerance on the median, but a pair of runs inside it:
		// more runs, up to the cap, then could not judge.
		{"overlapping the tolerance", []float64{10000, 10060, 9990, 10060, 10000}, []float64{10090, 10055, 10100, 10080, 10100}, result.CostCouldNotJudge, 5, "overlap"},
		{"decided by the extra runs", []float64{10000, 10050, 10000, 10000, 10000}, []float64{10070, 10075, 10075, 10090, 10080},
			result.CostRegression, 4, "beyond"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &synthCostLab{per: map[string][]float64{"A": tt.a, "B": tt.b}}
			j := judgeCost(context.Background(), DefaultCostOptions(), Scenario{Name: "ok"}, costPair{}, l, nil)
			if j.Verdict != tt.verdict || !strings.Contains(j.Reason, tt.inReason) {
				t.Fatalf("verdict %s (%s), want %s with %q", j.Verdict, j.Reason, tt.verdict, tt.inReason)
			}
			if len(j.A.Runs) != tt.runs || len(j.B.Runs) != tt.runs {
				t.Errorf("runs %d+%d, want %d a side", len(j.A.Runs), len(j.B.Runs), tt.runs)
			}
			if j.UnfilteredRatio <= 0 || j.AllocsRatio != 1 || j.Requests != 1000 || j.Rate != 250 {
				t.Errorf("judgement %+v", j)
			}
		})
	}
}

// A run that fails makes the scenario "could not judge" with its line,
// and the next scenario is still judged.
func TestCostRunFailure(t *testing.T) {
	l := &synthCostLab{per: map[string][]float64{"A": {100}, "B": {100}},
		fail: map[string]error{"B": errors.New("server B died under callgrind: boom")}}
	out := runCostTier(context.Background(), DefaultCostOptions(), []Scenario{{Name: "ok"}, {Name: "commit"}}, costPair{}, l, nil)
	for _, j := range out {
		if j.Verdict != result.CostCouldNotJudge || !strings.Contains(j.Reason, "boom") {
			t.Errorf("verdict %s (%s), want could_not_judge naming the failure", j.Verdict, j.Reason)
		}
	}
	if len(l.specs) != 4 {
		t.Errorf("%d runs, want one round of each side per scenario", len(l.specs))
	}
}

// A scenario's [scenario.cost] overrides the run's requests and rate.
func TestCostLoadPerScenario(t *testing.T) {
	l := &synthCostLab{per: map[string][]float64{"A": {100}, "B": {100}}}
	sc := Scenario{Name: "ok_pipelined", Cost: CostShape{Requests: 2048, Rate: 1600}}
	j := judgeCost(context.Background(), DefaultCostOptions(), sc, costPair{}, l, nil)
	if j.Requests != 2048 || j.Rate != 1600 || l.specs[0].Requests != 2048 || l.specs[0].Rate != 1600 {
		t.Fatalf("judgement %d at %g, spec %d at %g; want 2048 at 1600", j.Requests, j.Rate, l.specs[0].Requests, l.specs[0].Rate)
	}
}

func TestCostOptionsValidate(t *testing.T) {
	bad := []func(*CostOptions){
		func(c *CostOptions) { c.Requests = 1 },
		func(c *CostOptions) { c.Rate = 0 },
		func(c *CostOptions) { c.Runs = 1 },
		func(c *CostOptions) { c.MaxRuns = 2 },
		func(c *CostOptions) { c.Tolerance = 0 },
		func(c *CostOptions) { c.MaxSpread = -1 },
	}
	for i, f := range bad {
		c := DefaultCostOptions()
		f(&c)
		if c.Validate() == nil {
			t.Errorf("case %d: %+v accepted", i, c)
		}
	}
	if err := DefaultCostOptions().Validate(); err != nil {
		t.Fatal(err)
	}
}

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
