package cost

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"weaseldb/gate/result"
)

// synthCostLab answers cost runs from tables: side -> instructions per
// request of each run (the last repeats), with failures on demand.
type synthCostLab struct {
	mu    sync.Mutex
	per   map[string][]float64
	fail  map[string]error // side -> error of every run
	specs []Spec
}

func (l *synthCostLab) RunCost(_ context.Context, spec Spec) (result.CostSample, error) {
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
			j := judgeCost(context.Background(), DefaultOptions(), Scenario{Name: "ok"}, Pair{}, l, nil)
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
	out := RunTier(context.Background(), DefaultOptions(), []Scenario{{Name: "ok"}, {Name: "commit"}}, Pair{}, l, nil)
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
	sc := Scenario{Name: "ok_pipelined", Cost: Shape{Requests: 2048, Rate: 1600}}
	j := judgeCost(context.Background(), DefaultOptions(), sc, Pair{}, l, nil)
	if j.Requests != 2048 || j.Rate != 1600 || l.specs[0].Requests != 2048 || l.specs[0].Rate != 1600 {
		t.Fatalf("judgement %d at %g, spec %d at %g; want 2048 at 1600", j.Requests, j.Rate, l.specs[0].Requests, l.specs[0].Rate)
	}
}

func TestCostOptionsValidate(t *testing.T) {
	bad := []func(*Options){
		func(c *Options) { c.Requests = 1 },
		func(c *Options) { c.Rate = 0 },
		func(c *Options) { c.Runs = 1 },
		func(c *Options) { c.MaxRuns = 2 },
		func(c *Options) { c.Tolerance = 0 },
		func(c *Options) { c.MaxSpread = -1 },
	}
	for i, f := range bad {
		c := DefaultOptions()
		f(&c)
		if c.Validate() == nil {
			t.Errorf("case %d: %+v accepted", i, c)
		}
	}
	if err := DefaultOptions().Validate(); err != nil {
		t.Fatal(err)
	}
}
