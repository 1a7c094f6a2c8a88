package gate

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"weaseldb/gate/cost"
	"weaseldb/gate/render"
	"weaseldb/gate/result"
)

// needValgrind skips without valgrind, except where GATE_REQUIRE_VALGRIND
// is set (CI installs it, so the cost tier is always tested there).
func needValgrind(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"valgrind", "callgrind_control"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("GATE_REQUIRE_VALGRIND") != "" {
				t.Fatalf("%s is not installed and GATE_REQUIRE_VALGRIND is set", tool)
			}
			t.Skipf("%s is not installed (apt-get install valgrind); skipping the cost tier's real runs", tool)
		}
	}
}

// TestCostTierWithRealWeaseldb counts the real server under callgrind, in
// short runs (2 a side of 300 requests): A/A passes with the JSON the
// contract names, and a B whose commits spin 3,000 iterations more (about
// a quarter of a commit's instructions) fails the commit scenario alone.
// The wiring, not the power (docs/gate.md has that).
func TestCostTierWithRealWeaseldb(t *testing.T) {
	needValgrind(t)
	lt := repoBinary(t, "load_tester")
	server := repoBinary(t, "weaseldb")
	f, err := ReadScenarios(filepath.Join("..", "testdata", "gate_scenarios.toml"))
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.A, o.B, o.LoadTester = server, server, lt
	o.Tiers = []string{result.TierCost}
	o.Cost.Requests, o.Cost.Rate, o.Cost.Runs, o.Cost.MaxRuns = 300, 300, 2, 2
	// Wide: two short runs on a machine busy with the other tests.
	o.Cost.Tolerance, o.Cost.MaxSpread = 0.03, 0.05
	run := func(t *testing.T, o Options) *result.Result {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		var progress strings.Builder
		r := runScenarios(ctx, o, f, &progress, processLab{}, cost.ProcessLab{}, time.Now)
		var table strings.Builder
		render.WriteTable(&table, r)
		t.Logf("progress:\n%s\ntable:\n%s", progress.String(), table.String())
		return r
	}
	t.Run("A/A", func(t *testing.T) {
		o := o
		o.Only = []string{"ok", "status"}
		r := run(t, o)
		if r.ExitCode != 0 {
			t.Fatalf("A/A: exit %d, %s (%s): %s", r.ExitCode, r.Verdict, r.ReasonCode, r.Reason)
		}
		path := filepath.Join(t.TempDir(), "gate.json")
		if err := render.WriteJSON(path, r); err != nil {
			t.Fatal(err)
		}
		checkCostJSON(t, path, []string{"ok", "status"})
		for _, s := range r.Scenarios {
			c := s.Cost
			if c.A.UnfilteredPerRequest <= c.A.InstructionsPerRequest || c.A.InstructionsPerRequest < 1000 {
				t.Errorf("%s: %.0f filtered, %.0f unfiltered instructions per request: the filter must leave some out, and a request costs thousands",
					s.Name, c.A.InstructionsPerRequest, c.A.UnfilteredPerRequest)
			}
		}
	})
	t.Run("B dearer on commits alone", func(t *testing.T) {
		o := o
		o.Only = []string{"ok", "commit"}
		o.BConfig = writeFile(t, "dear.toml", string(DefaultConfig())+"commit_resolve_iterations = 3000\n")
		r := run(t, o)
		if r.ExitCode != 1 || r.DecidedBy != "commit" {
			t.Fatalf("exit %d decided by %q, want 1 by commit: %s", r.ExitCode, r.DecidedBy, r.Reason)
		}
		for _, s := range r.Scenarios {
			want := result.CostPass
			if s.Name == "commit" {
				want = result.CostRegression
			}
			if s.Cost.Verdict != want {
				t.Errorf("%s: cost %s (%s), want %s", s.Name, s.Cost.Verdict, s.Cost.Reason, want)
			}
			// The knob's loop is where B's extra cost is: named first.
			if s.Name == "commit" && (len(s.Cost.Moved) == 0 || !strings.Contains(s.Cost.Moved[0].Function, "weaseldb/server/cpuwork.")) {
				t.Errorf("commit: moved most %+v, want the cpuwork loop first", s.Cost.Moved)
			}
		}
	})
}

// checkCostJSON holds the JSON to the contract the checks rely on:
// scenarios[].name and .cost = {a: {instructions_per_request, runs},
// b: {...}, ratio, verdict}.
func checkCostJSON(t *testing.T, path string, names []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Scenarios []struct {
			Name string `json:"name"`
			Cost *struct {
				A, B *struct {
					InstructionsPerRequest *float64          `json:"instructions_per_request"`
					Runs                   []json.RawMessage `json:"runs"`
				}
				Ratio   *float64 `json:"ratio"`
				Verdict string   `json:"verdict"`
			} `json:"cost"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Scenarios) != len(names) {
		t.Fatalf("%d scenarios in the JSON, want %d", len(doc.Scenarios), len(names))
	}
	for i, s := range doc.Scenarios {
		c := s.Cost
		switch {
		case s.Name != names[i]:
			t.Errorf("scenario %d is %q, want %q", i, s.Name, names[i])
		case c == nil || c.A == nil || c.B == nil || c.Ratio == nil:
			t.Errorf("%s: cost, its sides or its ratio missing: %s", s.Name, data)
		case c.A.InstructionsPerRequest == nil || c.B.InstructionsPerRequest == nil || len(c.A.Runs) == 0 || len(c.B.Runs) == 0:
			t.Errorf("%s: a side lacks instructions_per_request or runs", s.Name)
		case c.Verdict != "pass" && c.Verdict != "regression" && c.Verdict != "could_not_judge":
			t.Errorf("%s: verdict %q", s.Name, c.Verdict)
		}
	}
}
