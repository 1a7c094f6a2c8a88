package history

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"weaseldb/gate/result"
	"weaseldb/gate/stats"
	"weaseldb/gate/verdict"
)

// historyOf builds a history whose ok scenario costs base instructions a
// request, plus step from commit stepAt on, in noise of sd.
func historyOf(n, stepAt int, base, step, sd float64, seed uint64) []Entry {
	rng := rand.New(rand.NewPCG(seed, 1))
	var out []Entry
	for i := range n {
		v := base + sd*rng.NormFloat64()
		if i >= stepAt {
			v += step
		}
		out = append(out, Entry{Version: Version, Commit: fmt.Sprintf("c%03d", i), Scenarios: []Scenario{
			{Name: "ok", Instructions: v, Sample: 200000 + 4000*rng.NormFloat64()},
			{Name: "commit", Instructions: 23000 + 20*rng.NormFloat64()},
		}})
	}
	return out
}

// A planted 1% step in the cost of ok is found at its commit, as worse;
// the other series, noise alone, show none.
func TestHistoryFindsAPlantedStep(t *testing.T) {
	entries := historyOf(40, 25, 7500, 75, 8, 7)
	series := Analyze(entries, stats.ChangePointOptions{})
	var found []string
	for _, s := range series {
		for _, st := range s.Steps {
			found = append(found, fmt.Sprintf("%s/%s at %s (%+.2f%%, worse %v)", s.Scenario, s.Metric, st.Commit, 100*st.Change, st.Worse))
		}
	}
	if len(found) != 1 || !strings.HasPrefix(found[0], "ok/cost at c025") || !strings.Contains(found[0], "worse true") {
		t.Fatalf("steps %v, want one: ok/cost at c025, worse", found)
	}
	var out strings.Builder
	WriteReport(&out, len(entries), series, stats.ChangePointOptions{})
	if !strings.Contains(out.String(), "c024..c025") || !strings.Contains(out.String(), "WORSE") {
		t.Errorf("report:\n%s", out.String())
	}
}

// Pure noise in every series: no step is reported.
func TestHistoryOnNoise(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		series := Analyze(historyOf(30, 30, 7500, 0, 8, seed), stats.ChangePointOptions{})
		for _, s := range series {
			if len(s.Steps) > 0 {
				t.Errorf("seed %d: %s/%s shows a step in noise: %+v", seed, s.Scenario, s.Metric, s.Steps)
			}
		}
	}
}

// record appends lines that history reads back; a corrupted line is an
// error naming it, and a short series says it was not searched.
func TestHistoryFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	r := &result.Result{Decision: verdict.Decision{Verdict: verdict.Pass}, Scenarios: []result.ScenarioResult{{Name: "ok",
		Judgement: result.Judgement{B: result.Side{MedianRPS: 190000}, CI: stats.RatioCI{Ratio: 1.01}},
		Cost:      &result.CostJudgement{B: result.CostSide{InstructionsPerRequest: 7500, UnfilteredPerRequest: 9000, AllocsPerRequest: 0.5}}}}}
	for i := range 3 {
		e, err := FromResult(r, fmt.Sprintf("abc%d", i), "main", time.Unix(1700000000, 0))
		if err != nil {
			t.Fatal(err)
		}
		if err := Append(path, e); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := Read(path)
	if err != nil || len(entries) != 3 || entries[2].Commit != "abc2" || entries[0].Scenarios[0].Instructions != 7500 ||
		entries[0].Scenarios[0].Sample != 190000 || entries[0].Time != "2023-11-14T22:13:20Z" {
		t.Fatalf("read back %+v, %v", entries, err)
	}
	series := Analyze(entries, stats.ChangePointOptions{})
	if len(series) == 0 || !strings.Contains(series[0].Skipped, "3 points") {
		t.Errorf("a 3-point series: %+v", series)
	}
	if _, err := FromResult(r, "", "", time.Now()); err == nil {
		t.Error("a result recorded without a commit")
	}

	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{\"version\":1,\"commit\":\"x\",\"scen\n")
	f.Close()
	if _, err := Read(path); err == nil || !strings.Contains(err.Error(), "line 4") {
		t.Errorf("a corrupted line: %v", err)
	}
	if _, err := parse(strings.NewReader(`{"version":2,"commit":"x"}`), "h"); err == nil {
		t.Error("another version accepted")
	}
	if _, err := parse(strings.NewReader(`{"version":1,"commit":"x","surprise":1}`), "h"); err == nil {
		t.Error("an unknown field accepted")
	}
}
