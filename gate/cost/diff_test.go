package cost

import (
	"strings"
	"testing"

	"weaseldb/gate/result"
)

// sampleWith is a run of n requests whose counted functions cost fns.
func sampleWith(run int, fns map[string]float64) result.CostSample {
	total := 0.0
	for _, v := range fns {
		total += v
	}
	return result.CostSample{Run: run, Requests: 1000, InstructionsPerRequest: total, UnfilteredPerRequest: 2 * total, Functions: fns}
}

// A regression names the function it came from; runs that disagree name
// the function that moved between them; a pass where nothing moved, and
// runs without profiles, name nothing.
func TestCostJudgementNamesFunctions(t *testing.T) {
	base := func(extra map[string]float64) map[string]float64 {
		m := map[string]float64{"weaseldb/server/app.(*handler).okRequest": 5000, "runtime.memmove": 2000}
		for k, v := range extra {
			m[k] += v
		}
		return m
	}
	judged := func(a, b []result.CostSample) *result.CostJudgement {
		o := DefaultOptions()
		j := &result.CostJudgement{A: costSide(a), B: costSide(b), Tolerance: o.Tolerance, MaxSpread: o.MaxSpread}
		judgeCostRuns(j, true)
		return j
	}
	steady := []result.CostSample{sampleWith(1, base(nil)), sampleWith(2, base(nil)), sampleWith(3, base(nil))}
	t.Run("regression", func(t *testing.T) {
		dear := base(map[string]float64{"weaseldb/server/commit.resolve": 150})
		j := judged(steady, []result.CostSample{sampleWith(1, dear), sampleWith(2, dear), sampleWith(3, dear)})
		if j.Verdict != result.CostRegression || len(j.Moved) != 1 || j.Moved[0].Function != "weaseldb/server/commit.resolve" || j.Moved[0].Delta != 150 {
			t.Fatalf("%s, moved %+v: %s", j.Verdict, j.Moved, j.Reason)
		}
		if !strings.Contains(j.Reason, "weaseldb/server/commit.resolve +150.0") {
			t.Errorf("reason does not name the function: %s", j.Reason)
		}
	})
	t.Run("runs disagree", func(t *testing.T) {
		wobbly := []result.CostSample{sampleWith(1, base(nil)), sampleWith(2, base(map[string]float64{"runtime.newNameForTheScheduler": 300})), sampleWith(3, base(nil))}
		j := judged(steady, wobbly)
		if j.Verdict != result.CostCouldNotJudge || j.UnsteadySide != "B" || len(j.Unsteady) != 1 || j.Unsteady[0].Function != "runtime.newNameForTheScheduler" {
			t.Fatalf("%s, unsteady %s %+v: %s", j.Verdict, j.UnsteadySide, j.Unsteady, j.Reason)
		}
		if !strings.Contains(j.Reason, "runtime.newNameForTheScheduler +300.0") || !strings.Contains(j.Reason, "gate/callgrind/filter.go") {
			t.Errorf("reason does not say what moved and where to fix it: %s", j.Reason)
		}
	})
	t.Run("pass", func(t *testing.T) {
		j := judged(steady, steady)
		if j.Verdict != result.CostPass || len(j.Moved) != 0 || len(j.Unsteady) != 0 {
			t.Fatalf("%s, moved %+v, unsteady %+v", j.Verdict, j.Moved, j.Unsteady)
		}
	})
	t.Run("no profiles", func(t *testing.T) {
		j := judged([]result.CostSample{{Run: 1, InstructionsPerRequest: 100}}, []result.CostSample{{Run: 1, InstructionsPerRequest: 100}})
		if j.Moved != nil {
			t.Fatalf("moved %+v without profiles", j.Moved)
		}
	})
}

func TestMedianRun(t *testing.T) {
	runs := []result.CostSample{{Run: 1, InstructionsPerRequest: 30}, {Run: 2, InstructionsPerRequest: 10}, {Run: 3, InstructionsPerRequest: 20}, {Run: 4, InstructionsPerRequest: 40}}
	if got := medianRun(runs[:3]).Run; got != 3 {
		t.Errorf("median of 3: run %d, want 3", got)
	}
	if got := medianRun(runs).Run; got != 3 {
		t.Errorf("lower median of 4: run %d, want 3", got)
	}
	if lo, hi := extremeRuns(runs); lo.Run != 2 || hi.Run != 4 {
		t.Errorf("extremes %d %d, want 2 4", lo.Run, hi.Run)
	}
}
