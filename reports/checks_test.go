package reports

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"weaseldb/artifacts"
)

// manycoreRun is a real run of scripts/manycore.sh (16 TCG-emulated CPUs on
// a 2-CPU host, 2026-12-01), its JSON artifacts kept as they came back.
const manycoreRun = "testdata/manycore_run"

// waitRunByName returns runs[i] of wait_strategies.json for a bench, strategy and cores.
func waitRunByName(t *testing.T, doc map[string]any, bench, strategy, cores string) map[string]any {
	t.Helper()
	for _, r := range doc["runs"].([]any) {
		run := r.(map[string]any)
		if run["bench"] == bench && run["strategy"] == strategy && run["cores"] == cores {
			return run
		}
	}
	t.Fatalf("no %s %s %s run", bench, strategy, cores)
	return nil
}

func checksOf(t *testing.T, dir string) *artifacts.Checks {
	t.Helper()
	r, err := LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	return CheckRun(r, CheckOptions{CPUs: 16, RequireDedicated: true})
}

// The recorded run passes every check, and checking it again gives what it
// recorded in its checks.json: the checks depend on the artifacts alone.
func TestCheckRunOnARecordedManycoreRun(t *testing.T) {
	cs := checksOf(t, manycoreRun)
	if !cs.Passed || cs.Failed != 0 {
		t.Fatalf("%s: %+v", cs.Summary, cs.FailedChecks())
	}
	var recorded artifacts.Checks
	data, err := os.ReadFile(filepath.Join(manycoreRun, artifacts.ChecksFile))
	if err != nil || json.Unmarshal(data, &recorded) != nil {
		t.Fatalf("checks.json: %v", err)
	}
	if recorded.Total != cs.Total || recorded.Summary != cs.Summary {
		t.Errorf("checked again: %q (%d), recorded: %q (%d)", cs.Summary, cs.Total, recorded.Summary, recorded.Total)
	}
	// Every kind of check ran on every dedicated server run.
	for _, strategy := range artifacts.WaitStrategyNames {
		subject := "wait-strategies server " + strategy + " dedicated"
		for _, check := range []string{artifacts.CheckStatus, artifacts.CheckPlan, artifacts.CheckPinning, artifacts.CheckLoops, artifacts.CheckGOMAXPROCS, artifacts.CheckAccounting, artifacts.CheckIdle, artifacts.CheckStageSleeps} {
			if !hasCheck(cs, subject, check) {
				t.Errorf("no %s check of %s", check, subject)
			}
		}
	}
	for _, subject := range []string{"setups seed round 1", "setups fitted round 1"} {
		for _, check := range []string{artifacts.CheckStatus, artifacts.CheckPinning, artifacts.CheckLoops, artifacts.CheckGOMAXPROCS, artifacts.CheckAccounting} {
			if !hasCheck(cs, subject, check) {
				t.Errorf("no %s check of %s", check, subject)
			}
		}
	}
	if !hasCheck(cs, "setups fitted", artifacts.CheckPlan) || !hasCheck(cs, "setups seed", artifacts.CheckPlan) || !hasCheck(cs, "machine", artifacts.CheckCPUs) {
		t.Error("the plans or the machine were not checked")
	}
}

func hasCheck(cs *artifacts.Checks, subject, check string) bool {
	for _, c := range cs.Checks {
		if c.Subject == subject && c.Check == check {
			return true
		}
	}
	return false
}

// Each thing a check holds a run to, changed in a copy of the recorded run,
// fails that check and no other.
func TestCheckRunCatches(t *testing.T) {
	const ded = "wait-strategies server Never dedicated"
	tests := []struct {
		name           string
		edit           func(t *testing.T, dir string)
		subject, check string
		detail         string
		alsoFails      int // other checks that follow from the change
	}{
		{"a machine with other CPUs", func(t *testing.T, dir string) {
			editJSON(t, dir, artifacts.ManifestFile, func(d map[string]any) { d["machine"].(map[string]any)["cores"] = 8 })
		}, "machine", artifacts.CheckCPUs, "8 CPUs online", 0},
		{"a dedicated run skipped", func(t *testing.T, dir string) {
			editJSON(t, dir, artifacts.WaitStrategiesFile, func(d map[string]any) {
				r := waitRunByName(t, d, "server", "Never", "dedicated")
				r["status"], r["reason"] = artifacts.StatusSkipped, "needs 17 CPUs"
			})
		}, ded, artifacts.CheckStatus, "skipped: needs 17 CPUs", 0},
		{"CPUs other than the planner's", func(t *testing.T, dir string) {
			editJSON(t, dir, artifacts.WaitStrategiesFile, func(d map[string]any) {
				waitRunByName(t, d, "server", "Never", "dedicated")["cpu_plan"] = "io 0-7; stages 8 9 10 11; load_tester 12-13"
			})
		}, ded, artifacts.CheckPlan, "the planner gives", 0},
		{"a pinned thread that ran elsewhere", func(t *testing.T, dir string) {
			editJSON(t, dir, "ws_server_Never_dedicated.threads.json", func(d map[string]any) {
				for _, th := range d["processes"].([]any)[0].(map[string]any)["threads"].([]any) {
					if th := th.(map[string]any); th["allowed_cpus"] == "10" {
						th["last_cpu"] = 0
					}
				}
			})
		}, ded, artifacts.CheckPinning, "is pinned to CPU 10 but last ran on CPU 0", 0},
		{"a loop that took nothing", func(t *testing.T, dir string) {
			editJSON(t, dir, "ws_server_Never_dedicated.threads.json", func(d map[string]any) {
				d["loops"].([]any)[0].(map[string]any)["accepted"] = 0
			})
		}, ded, artifacts.CheckLoops, "loop 0 accepted 0 connections", 0},
		{"GOMAXPROCS not as planned", func(t *testing.T, dir string) {
			editJSON(t, dir, artifacts.WaitStrategiesFile, func(d map[string]any) { waitRunByName(t, d, "server", "Never", "dedicated")["gomaxprocs"] = 5 })
		}, ded, artifacts.CheckGOMAXPROCS, "GOMAXPROCS 5, planned 6", 0},
		{"unfinished requests", func(t *testing.T, dir string) {
			editJSON(t, dir, "ws_server_Never_dedicated.load.json", func(d map[string]any) { d["unfinished"] = 3 })
		}, ded, artifacts.CheckAccounting, "unfinished 3", 0},
		{"Never that did not spin", func(t *testing.T, dir string) {
			editJSON(t, dir, artifacts.WaitStrategiesFile, func(d map[string]any) {
				waitRunByName(t, d, "server", "Never", "dedicated")["idle_core_fraction"] = 0.01
			})
		}, ded, artifacts.CheckIdle, "Never spins", 0},
		{"a parking strategy that spun", func(t *testing.T, dir string) {
			editJSON(t, dir, artifacts.WaitStrategiesFile, func(d map[string]any) {
				waitRunByName(t, d, "pipeline", "WaitIfStageEmpty", "shared")["idle_core_fraction"] = 0.9
			})
		}, "wait-strategies pipeline WaitIfStageEmpty shared", artifacts.CheckIdle, "WaitIfStageEmpty parks", 0},
		{"a pinned spinner that kept sleeping", func(t *testing.T, dir string) {
			editJSON(t, dir, "ws_server_Never_dedicated.threads.json", func(d map[string]any) {
				for _, th := range d["idle"].(map[string]any)["end"].(map[string]any)["threads"].([]any) {
					if th := th.(map[string]any); th["allowed_cpus"] == "10" {
						th["voluntary_switches"] = th["voluntary_switches"].(float64) + 100000
					}
				}
			})
		}, ded, artifacts.CheckStageSleeps, "on CPU 10 slept", 0},
		{"a fitted setup other than FitSetup's", func(t *testing.T, dir string) {
			editJSON(t, dir, artifacts.SetupsFile, func(d map[string]any) {
				d["setups"].([]any)[1].(map[string]any)["io_cpus"] = []int{3}
			})
		}, "setups fitted", artifacts.CheckPlan, "FitSetup gives", 0},
		{"two pinned threads on one physical core", func(t *testing.T, dir string) {
			editJSON(t, dir, artifacts.SetupsFile, func(d map[string]any) {
				for _, c := range d["topology"].(map[string]any)["cpus"].([]any) {
					if c := c.(map[string]any); c["cpu"] == 4.0 {
						c["core"] = 2 // stage 0's CPU taken for a hyper-thread of the loop's core
					}
				}
			})
		}, "setups fitted", artifacts.CheckPlan, "FitSetup gives", 1}, // the planner, on 7 cores, plans otherwise
		{"a pipeline across nodes though one had room", func(t *testing.T, dir string) {
			editJSON(t, dir, artifacts.SetupsFile, func(d map[string]any) {
				delete(d["setups"].([]any)[1].(map[string]any), "placement_gave_up")
			})
		}, "setups fitted round 1", artifacts.CheckOneNode, "spans nodes though the plan found room", 0},
		{"a printed plan other than where the threads ran", func(t *testing.T, dir string) {
			writeFile(t, dir, artifacts.PrintPlanFile, "producer cpu=8 core=8 node=1 idle=9\nstage 0 cpu=12 core=12 node=1 idle=13\nstage 1 cpu=14 core=14 node=1 idle=15\n")
		}, "wait-strategies pipeline WaitIfStageEmpty dedicated", artifacts.CheckPrintedPlan, "producer printed on CPU 8, ran pinned to CPU 10", 2}, // and the other two strategies' runs
		{"a printed plan with another topology", func(t *testing.T, dir string) {
			writeFile(t, dir, artifacts.PrintPlanFile, "producer cpu=10 core=10 node=0 idle=11\nstage 0 cpu=12 core=12 node=1 idle=13\nstage 1 cpu=14 core=14 node=1 idle=15\n")
		}, "wait-strategies pipeline WaitIfStageEmpty dedicated", artifacts.CheckPrintedPlan, "producer printed as core 10 node 0; the recorded topology puts CPU 10 on core 10 node 1", 2},
		{"no printed plan", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, artifacts.PrintPlanFile)); err != nil {
				t.Fatal(err)
			}
		}, "wait-strategies pipeline WaitIfStageEmpty dedicated", artifacts.CheckPrintedPlan, "no printed plan", 2},
		{"a seed's setup without its 8 loops", func(t *testing.T, dir string) {
			editJSON(t, dir, artifacts.SetupsFile, func(d map[string]any) { d["setups"].([]any)[0].(map[string]any)["io_threads"] = 2 })
		}, "setups seed", artifacts.CheckPlan, "runs 2 I/O loops", 1}, // and its GOMAXPROCS, planned from its loops
		{"a setup run that failed", func(t *testing.T, dir string) {
			editJSON(t, dir, artifacts.SetupsFile, func(d map[string]any) {
				r := d["runs"].([]any)[1].(map[string]any)
				r["status"], r["reason"] = artifacts.StatusFailed, "server did not start"
			})
		}, "setups fitted round 1", artifacts.CheckStatus, "server did not start", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyRun(t, manycoreRun)
			tc.edit(t, dir)
			cs := checksOf(t, dir)
			failed := cs.FailedChecks()
			if cs.Passed || len(failed) != 1+tc.alsoFails {
				t.Fatalf("want exactly the %s check of %s to fail; failed: %+v", tc.check, tc.subject, failed)
			}
			if f := failed[0]; f.Subject != tc.subject || f.Check != tc.check || !strings.Contains(f.Detail, tc.detail) {
				t.Fatalf("failed %+v, want %s / %s with %q", f, tc.subject, tc.check, tc.detail)
			}
		})
	}
}

// Never on shared cores starves some loops of CPU: its loops are reported,
// not required; a loop that took nothing anywhere else fails.
func TestCheckRunLoopsAdvisoryForNeverOnSharedCores(t *testing.T) {
	dir := copyRun(t, manycoreRun)
	editJSON(t, dir, "ws_server_Never_shared.threads.json", func(d map[string]any) {
		d["loops"].([]any)[0].(map[string]any)["accepted"] = 0
	})
	cs := checksOf(t, dir)
	if !cs.Passed {
		t.Fatalf("failed: %+v", cs.FailedChecks())
	}
	for _, c := range cs.Checks {
		if c.Subject == "wait-strategies server Never shared" && c.Check == artifacts.CheckLoops {
			if !c.Advisory || !strings.Contains(c.Detail, "loop 0 accepted 0 connections") || !strings.Contains(c.Detail, "not required here") {
				t.Errorf("%+v", c)
			}
			return
		}
	}
	t.Fatal("no loops check of Never on shared cores")
}

// A run without its threads artifacts (a runner from before them) fails the
// checks that need them, naming what is missing, instead of passing.
func TestCheckRunWithoutThreads(t *testing.T) {
	dir := copyRun(t, manycoreRun, "ws_server_Never_dedicated.threads.json")
	cs := checksOf(t, dir)
	if cs.Passed {
		t.Fatal("passed without the threads of a dedicated run")
	}
	for _, c := range cs.FailedChecks() {
		if c.Subject != "wait-strategies server Never dedicated" || !strings.Contains(c.Detail, "ws_server_Never_dedicated.threads.json") {
			t.Errorf("unexpected failure %+v", c)
		}
	}
}

func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
