package plan

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"weaseldb/artifacts"
	"weaseldb/internal/procstat"
)

func cpuRange(lo, hi int) []int {
	var c []int
	for i := lo; i <= hi; i++ {
		c = append(c, i)
	}
	return c
}

var fullPlan = WaitParams{PipelineStages: 2, IOThreads: 1, ReleaseThreads: 1, LoadThreads: 1, Dedicated: true}

func TestWaitStrategies(t *testing.T) {
	tests := []struct {
		name             string
		allowed          []int
		params           WaitParams
		pipelineSkipped  bool
		serverSkipped    bool
		wantNeedPipeline int
		wantNeedServer   int
		wantReason       string
	}{
		{"2 CPUs: every dedicated run skipped", cpuRange(0, 1), fullPlan, true, true, 4, 7, "this process may use 2 (0-1)"},
		{"4 CPUs: pipeline fits, server does not", cpuRange(0, 3), fullPlan, false, true, 4, 7, "needs 7 CPUs (6 dedicated + 1 for the rest)"},
		{"7 CPUs: both fit exactly", cpuRange(0, 6), fullPlan, false, false, 4, 7, ""},
		{"16 CPUs: both planned", cpuRange(0, 15), fullPlan, false, false, 4, 7, ""},
		{"a sparse cpuset", []int{2, 5, 9, 11, 12, 40, 41, 63}, fullPlan, false, false, 4, 7, ""},
		{"2 io loops, 2 release threads, 2 load threads: 10 needed", cpuRange(0, 8),
			WaitParams{PipelineStages: 2, IOThreads: 2, ReleaseThreads: 2, LoadThreads: 2, Dedicated: true}, false, true, 4, 10, "may use 9 (0-8)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := WaitStrategies(tt.allowed, tt.params)
			if len(runs) != 12 {
				t.Fatalf("planned %d runs, want 12 (2 benches × 2 kinds of cores × 3 strategies)", len(runs))
			}
			for _, r := range runs {
				if r.Cores == artifacts.CoresShared {
					if r.Status != artifacts.StatusMeasured || r.CPUPlan != "" {
						t.Errorf("shared run %+v: want planned to run, unpinned", r.WaitRun)
					}
					continue
				}
				skipped, need := tt.serverSkipped, tt.wantNeedServer
				if r.Bench == artifacts.BenchPipeline {
					skipped, need = tt.pipelineSkipped, tt.wantNeedPipeline
				}
				if r.CPUsNeeded != need {
					t.Errorf("%s %s: needs %d CPUs, want %d", r.Bench, r.Strategy, r.CPUsNeeded, need)
				}
				if skipped {
					if r.Status != artifacts.StatusSkipped || !strings.Contains(r.Reason, "needs "+strconv.Itoa(need)+" CPUs") || !strings.Contains(r.Reason, tt.wantReason) {
						t.Errorf("%s %s: status %q reason %q, want skipped naming %d CPUs and %q", r.Bench, r.Strategy, r.Status, r.Reason, need, tt.wantReason)
					}
					continue
				}
				if r.Status != artifacts.StatusMeasured {
					t.Fatalf("%s %s: %s (%s), want planned", r.Bench, r.Strategy, r.Status, r.Reason)
				}
				checkAssignment(t, r, tt.allowed, tt.params)
			}
		})
	}
}

// checkAssignment checks that a dedicated run's threads each got a distinct
// allowed CPU, and that one allowed CPU is left for the rest.
func checkAssignment(t *testing.T, r PlannedRun, allowed []int, p WaitParams) {
	t.Helper()
	var used []int
	if r.Bench == artifacts.BenchPipeline {
		used = append([]int{r.ProducerCPU}, r.StageCPUs...)
		if len(r.StageCPUs) != p.PipelineStages {
			t.Errorf("pipeline stages got %v, want %d CPUs", r.StageCPUs, p.PipelineStages)
		}
		if got, want := r.PipelineCPUsFlag(), strconv.Itoa(r.ProducerCPU)+","+joinInts(r.StageCPUs, ","); got != want {
			t.Errorf("--cpus %q does not list producer then stages", got)
		}
	} else {
		used = append(used, r.IOCPUs...)
		if len(r.IOCPUs) != p.IOThreads || len(r.LoadCPUs) != p.LoadThreads || len(r.PipelineCPUs) != 4 || len(r.PipelineCPUs[3]) != p.ReleaseThreads {
			t.Errorf("server plan io %v stages %v load %v does not match %+v", r.IOCPUs, r.PipelineCPUs, r.LoadCPUs, p)
		}
		for _, s := range r.PipelineCPUs {
			used = append(used, s...)
		}
		used = append(used, r.LoadCPUs...)
	}
	seen := map[int]bool{}
	for _, c := range used {
		if seen[c] || !slices.Contains(allowed, c) {
			t.Errorf("CPU %d used twice or not allowed (plan %s, allowed %v)", c, r.CPUPlan, allowed)
		}
		seen[c] = true
	}
	if len(allowed)-len(used) < 1 {
		t.Errorf("plan %s leaves no CPU for the rest of %v", r.CPUPlan, allowed)
	}
	if r.CPUPlan == "" {
		t.Error("dedicated run has no CPU plan text")
	}
}

func TestPlanSharedOnly(t *testing.T) {
	runs := WaitStrategies(cpuRange(0, 1), WaitParams{Strategies: []string{"Never"}, PipelineStages: 2, IOThreads: 1, ReleaseThreads: 1, LoadThreads: 1})
	if len(runs) != 2 {
		t.Fatalf("planned %d runs, want 2 (pipeline and server, shared, Never)", len(runs))
	}
	for _, r := range runs {
		if r.Cores != artifacts.CoresShared || r.Strategy != "Never" || r.Status != artifacts.StatusMeasured {
			t.Errorf("unexpected run %+v", r.WaitRun)
		}
	}
}

// The printed plan gives each dedicated thread's CPU, physical core, node
// and idle sibling under its run, as bench_pipeline --print-plan does.
func TestFormatWaitPlanShowsThreads(t *testing.T) {
	topo := procstat.ReadTopology(filepath.Join("..", "internal", "procstat", "testdata", "sysfs", "server-2s-smt"), cpuRange(0, 31))
	runs := WaitStrategiesOn(topo, WaitParams{Strategies: []string{"Never"}, PipelineStages: 2, IOThreads: 1, ReleaseThreads: 1, LoadThreads: 2, Dedicated: true})
	out := FormatWaitPlan(&artifacts.WaitStrategies{AllowedCPUs: "0-31"}, runs)
	for _, want := range []string{
		"run on 4 CPUs: producer 13; stages 14,15\n      producer cpu=13 core=13 node=1 idle=29\n      stage 0 cpu=14 core=14 node=1 idle=30\n",
		"      io 0 cpu=11 core=11 node=1 idle=27\n",
		"      load 1 cpu=10 core=10 node=1 idle=26\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
}
