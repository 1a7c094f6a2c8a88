package loadtester

import (
	"strings"
	"testing"
	"time"

	"weaseldb/loadtester/result"
)

// Issue 55: an open-loop run on an idle machine whose sends were late was
// labelled client-bound. Late sends and a busy client are two findings:
// client_bound (the gate's) only for a busy client, behind_schedule (with
// how late) for late sends, each with its own words.
func TestLateSendsAreNotClientBound(t *testing.T) {
	c := &collector{r: &runner{cfg: Config{NetworkThreads: 1}}}
	lateness := &result.Latency{P50: int64(3 * time.Millisecond), P99: int64(5 * time.Millisecond), Max: int64(7 * time.Millisecond)}
	for _, tc := range []struct {
		name          string
		cpu           float64
		late          int64
		bound, behind bool
	}{
		{"idle client, late sends", 0.09, 90, false, true},
		{"busy client, late sends", 0.95, 90, true, true},
		{"busy client, on time", 0.95, 0, true, false},
		{"idle client, few late sends", 0.09, 5, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &result.Result{DurationS: 1, RateAsked: 1000, Requests: 1000, Answered: 1000, LateSends: tc.late,
				LateSendLateness: lateness, ClientCPUFraction: tc.cpu, BusiestThreadCPU: tc.cpu}
			c.judgeClient(res)
			if res.ClientBound != tc.bound || res.BehindSchedule != tc.behind {
				t.Fatalf("client_bound %v (%q), behind_schedule %v (%q): want %v, %v", res.ClientBound, res.ClientBoundReason,
					res.BehindSchedule, res.BehindScheduleReason, tc.bound, tc.behind)
			}
			if tc.bound && strings.Contains(res.ClientBoundReason, "schedule") {
				t.Errorf("client_bound_reason %q speaks of late sends", res.ClientBoundReason)
			}
			if tc.behind && (!strings.Contains(res.BehindScheduleReason, "p99 5.00ms") || !strings.Contains(res.BehindScheduleReason, "fell behind its schedule")) {
				t.Errorf("behind_schedule_reason %q: want how late, and what it means", res.BehindScheduleReason)
			}
			warned := strings.Join(res.Warnings, "\n")
			if strings.Contains(warned, "fell behind its schedule") != tc.behind || strings.Contains(warned, "may measure the client") != tc.bound {
				t.Errorf("warnings %q", res.Warnings)
			}
		})
	}
}
