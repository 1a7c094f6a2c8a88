package pipebench

import (
	"slices"
	"strings"
	"testing"

	"weaseldb/internal/affinity"
)

// --cpus auto places the producer and the stages by the placement rule:
// the highest CPUs, one each, the lowest kept where that fits, else one
// each and none kept; where some thread would share, an error that says
// how many it needs.
func TestAutoCPUs(t *testing.T) {
	tests := []struct {
		allowed string
		stages  int
		want    []int
		err     string
	}{
		{"0-15", 2, []int{13, 14, 15}, ""},
		{"0-3,8-11", 2, []int{9, 10, 11}, ""},
		{"0-3", 3, []int{0, 1, 2, 3}, ""},
		{"0-2", 2, []int{0, 1, 2}, ""},
		{"0-3", 4, nil, "needs 5 CPUs (one per hot thread: the producer and 4 stages), this process may use 4 (0-3)"},
		{"0-1", 2, nil, "needs 3 CPUs"},
	}
	for _, tt := range tests {
		allowed, err := affinity.ParseCPUList(tt.allowed)
		if err != nil {
			t.Fatal(err)
		}
		got, err := AutoCPUs(allowed, tt.stages)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s, %d stages: err %v, want %q", tt.allowed, tt.stages, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s, %d stages: %v, %v; want %v", tt.allowed, tt.stages, got, err, tt.want)
		}
	}
}

// --cpus auto for the latency family, on injected CPU sets: from 2 CPUs the
// producer and the stage each own one; with 1 the dedicated cases are
// skipped, saying why.
func TestPlanLatencyAuto(t *testing.T) {
	for _, tc := range []struct {
		allowed         string
		producer, stage int
		whyHas, skipHas string
	}{
		{allowed: "0-1", producer: 0, stage: 1, whyHas: "none kept"},
		{allowed: "0-2", producer: 1, stage: 2, whyHas: "0 kept"},
		{allowed: "0-3", producer: 2, stage: 3, whyHas: "0-1 kept"},
		{allowed: "0-15", producer: 14, stage: 15, whyHas: "0-13 kept"},
		{allowed: "5", skipHas: "needs at least 2 CPUs"},
	} {
		allowed, err := affinity.ParseCPUList(tc.allowed)
		if err != nil {
			t.Fatal(err)
		}
		p := PlanLatencyAuto(allowed)
		if tc.skipHas != "" {
			if p.Dedicated || !strings.Contains(p.Skip, tc.skipHas) {
				t.Errorf("%s: %+v, want skipped with %q", tc.allowed, p, tc.skipHas)
			}
			continue
		}
		if !p.Dedicated || p.Producer != tc.producer || p.Stage != tc.stage || !strings.Contains(p.Why, tc.whyHas) {
			t.Errorf("%s: %+v, want producer %d stage %d, why with %q", tc.allowed, p, tc.producer, tc.stage, tc.whyHas)
		}
	}
}

// --cpus P,S0 for the latency family: the producer and stage 0 from the
// list, the rest of the allowed set named in Why; one CPU for both is not
// dedicated, and the dedicated cases are skipped, saying why.
func TestPlanLatencyList(t *testing.T) {
	for _, tc := range []struct {
		list, allowed string
		want          LatencyPlan
	}{
		{"2,3", "0-3", LatencyPlan{Dedicated: true, Producer: 2, Stage: 3,
			Why: "from --cpus: producer on 2, stage 0 on 3; the Go runtime's other threads float over 0-3"}},
		{"1,0,0", "0-1", LatencyPlan{Dedicated: true, Producer: 1, Stage: 0,
			Why: "from --cpus: producer on 1, stage 0 on 0; the Go runtime's other threads float over 0-1"}},
		{"1,1,0", "0-1", LatencyPlan{Skip: "--cpus gives the producer and stage 0 the same CPU (1): not dedicated"}},
		{"1", "0-1", LatencyPlan{Skip: "--cpus gives 1 CPUs: the producer and stage 0 need one each"}},
	} {
		list, err := affinity.ParseCPUList(tc.list)
		if err != nil {
			t.Fatal(err)
		}
		allowed, err := affinity.ParseCPUList(tc.allowed)
		if err != nil {
			t.Fatal(err)
		}
		if got := PlanLatencyList(list, allowed); got != tc.want {
			t.Errorf("%s of %s: %+v, want %+v", tc.list, tc.allowed, got, tc.want)
		}
	}
}

func TestSharedLatencyPlan(t *testing.T) {
	for _, tc := range []struct {
		allowed    []int
		gomaxprocs int
		want       string
	}{
		{[]int{0, 1, 2, 3}, 4, "shared cores: nothing pinned; the producer, the stage and the Go runtime's threads float over 0-3 (GOMAXPROCS 4)"},
		{nil, 2, "shared cores: nothing pinned; the producer, the stage and the Go runtime's threads float over (none) (GOMAXPROCS 2)"},
	} {
		if got := SharedLatencyPlan(tc.allowed, tc.gomaxprocs); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.allowed, got, tc.want)
		}
	}
}

// MaxStages sizes --cpus: the wait_strategy family's 2 stages, else 1.
func TestMaxStages(t *testing.T) {
	for _, tc := range []struct {
		families []string
		want     int
	}{
		{nil, 1},
		{[]string{FamilyBatch}, 1},
		{[]string{FamilySingleStage, FamilyBatchSpin}, 1},
		{[]string{FamilyBatch, FamilyWaitStrategy}, 2},
		{[]string{FamilyLatency}, 1},
	} {
		if got := MaxStages(tc.families); got != tc.want {
			t.Errorf("%v: %d, want %d", tc.families, got, tc.want)
		}
	}
}

// FamilyCases keeps AllCases' order and only the families asked for.
func TestFamilyCases(t *testing.T) {
	for _, tc := range []struct {
		families []string
		want     int
	}{
		{nil, 0},
		{[]string{FamilySingleStage}, 3},
		{[]string{FamilyBatch}, 15},
		{[]string{FamilyWaitStrategy, FamilySingleStage}, 8},
		{[]string{FamilyLatency}, 0},
	} {
		got := FamilyCases(tc.families)
		var want []Case
		for _, c := range AllCases() {
			if slices.Contains(tc.families, c.Family) {
				want = append(want, c)
			}
		}
		if len(got) != tc.want || !slices.Equal(got, want) {
			t.Errorf("%v: %d cases, want %d in AllCases' order", tc.families, len(got), tc.want)
		}
	}
}
