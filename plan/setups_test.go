package plan

import (
	"slices"
	"strings"
	"testing"

	"weaseldb/artifacts"
	"weaseldb/internal/affinity"
)

var seedForTest = artifacts.Setup{Name: artifacts.SetupSeed, IOThreads: 8, ReleaseThreads: 1, WaitStrategy: "WaitIfUpstreamIdle", OkIterations: 4000,
	LoadThreads: 10, ConnectThreads: 2, Connections: 2000, RequestsPerConn: 500, Cores: artifacts.CoresShared}

func TestFitSetupChoices(t *testing.T) {
	tests := []struct {
		allowed         []int
		cores, strategy string
		io, load, conns int
		plan            string
	}{
		{[]int{0}, artifacts.CoresShared, "WaitIfStageEmpty", 1, 1, 100, ""},
		{cpuRange(0, 1), artifacts.CoresShared, "WaitIfStageEmpty", 1, 1, 100, ""},
		{cpuRange(0, 3), artifacts.CoresShared, "WaitIfStageEmpty", 1, 1, 100, ""},
		{cpuRange(0, 5), artifacts.CoresShared, "WaitIfStageEmpty", 1, 1, 100, ""},
		{cpuRange(0, 6), artifacts.CoresDedicated, "WaitIfUpstreamIdle", 1, 1, 100, "io 1; stages 2 3 4 5; load_tester 6"},
		{cpuRange(0, 15), artifacts.CoresDedicated, "WaitIfUpstreamIdle", 5, 6, 600, "io 1-5; stages 6 7 8 9; load_tester 10-15"},
		{[]int{0, 2, 4, 6, 8, 10, 12, 14}, artifacts.CoresDedicated, "WaitIfUpstreamIdle", 1, 2, 200, "io 2; stages 4 6 8 10; load_tester 12,14"},
	}
	for _, tc := range tests {
		t.Run(affinity.FormatCPUList(tc.allowed), func(t *testing.T) {
			f := FitSetup(tc.allowed, seedForTest)
			if f.Cores != tc.cores || f.WaitStrategy != tc.strategy || f.IOThreads != tc.io || f.LoadThreads != tc.load || f.Connections != tc.conns || f.CPUPlan != tc.plan {
				t.Fatalf("got %s %s io %d load %d conns %d plan %q", f.Cores, f.WaitStrategy, f.IOThreads, f.LoadThreads, f.Connections, f.CPUPlan)
			}
			if f.OkIterations != 4000 || f.RequestsPerConn != 500 || f.ConnectThreads != 2 || f.ReleaseThreads != 1 || f.Name != artifacts.SetupFitted {
				t.Errorf("the seed's workload was not kept: %+v", f)
			}
			if !strings.Contains(f.Why, affinity.FormatCPUList(tc.allowed)) {
				t.Errorf("why %q does not name the allowed CPUs", f.Why)
			}
		})
	}
}

// For every machine size the rule never spins on shared cores, and a
// dedicated plan uses distinct allowed CPUs, one per pinned thread, with one
// left over.
func TestFitSetupInvariants(t *testing.T) {
	for n := 1; n <= 96; n++ {
		for _, allowed := range [][]int{cpuRange(0, n-1), cpuRange(64, 63+n)} {
			f := FitSetup(allowed, seedForTest)
			if f.Cores == artifacts.CoresShared && artifacts.Spins(f.WaitStrategy) {
				t.Fatalf("%d CPUs: spinning strategy %s on shared cores", n, f.WaitStrategy)
			}
			if f.IOThreads < 1 || f.LoadThreads < 1 || f.Connections < 1 {
				t.Fatalf("%d CPUs: %+v", n, f)
			}
			if f.Cores != artifacts.CoresDedicated {
				if len(f.IOCPUs)+len(f.PipelineCPUs)+len(f.LoadCPUs) != 0 {
					t.Fatalf("%d CPUs: shared setup pinned %+v", n, f)
				}
				continue
			}
			used := slices.Clone(f.IOCPUs)
			for _, s := range f.PipelineCPUs {
				used = append(used, s...)
			}
			used = append(used, f.LoadCPUs...)
			if len(f.IOCPUs) != f.IOThreads || len(f.LoadCPUs) != f.LoadThreads || len(f.PipelineCPUs) != 4 {
				t.Fatalf("%d CPUs: plan does not match the thread counts: %+v", n, f)
			}
			sorted := slices.Sorted(slices.Values(used))
			if len(slices.Compact(sorted)) != len(used) || len(used) != n-1 {
				t.Fatalf("%d CPUs: CPUs %v reused or not one left over", n, used)
			}
			if err := affinity.Validate(used, allowed); err != nil {
				t.Fatalf("%d CPUs: %v", n, err)
			}
		}
	}
}
