package gate_test

import (
	"slices"
	"testing"

	"weaseldb/artifacts"
	"weaseldb/gate"
	"weaseldb/internal/affinity"
	"weaseldb/internal/placement"
	"weaseldb/plan"
)

// The gate's --pin auto and the report's fitted setup place the server and
// the load tester by one rule: on one machine they measure the same
// placement. Where the machine is too small for dedicated cores the
// report's fitted setup runs unpinned (its rule for shared cores) and the
// gate pins the halves the same rule gives.
func TestGateAndReportPlaceAlike(t *testing.T) {
	for _, tc := range []struct {
		allowed   string
		dedicated bool
	}{
		{"0-15", true},
		{"0-3,8-11", true},
		{"0-63", true},
		{"0-6", true},
		{"0-5", false},
		{"0-1", false},
		{"3", false},
	} {
		t.Run(tc.allowed, func(t *testing.T) {
			allowed, err := affinity.ParseCPUList(tc.allowed)
			if err != nil {
				t.Fatal(err)
			}
			g, err := gate.PlanCPUs("auto", allowed)
			if err != nil {
				t.Fatal(err)
			}
			r := plan.FitSetup(allowed, artifacts.Setup{})
			if got := r.Cores == artifacts.CoresDedicated; got != tc.dedicated {
				t.Fatalf("report's fitted setup dedicated=%v, want %v (%s)", got, tc.dedicated, r.Why)
			}
			if tc.dedicated {
				server := slices.Clone(r.IOCPUs)
				for _, s := range r.PipelineCPUs {
					server = append(server, s...)
				}
				slices.Sort(server)
				if !slices.Equal(g.Server, server) || !slices.Equal(g.Client, r.LoadCPUs) {
					t.Errorf("gate: server %v, load tester %v; report: server %v (%s), load tester %v",
						g.Server, g.Client, server, r.CPUPlan, r.LoadCPUs)
				}
				return
			}
			p := placement.Place(allowed, placement.Fit(allowed))
			if !slices.Equal(g.Server, p.ServerCPUs) || !slices.Equal(g.Client, p.LoadCPUs) {
				t.Errorf("gate: %v / %v, the rule: %v / %v", g.Server, g.Client, p.ServerCPUs, p.LoadCPUs)
			}
		})
	}
}
