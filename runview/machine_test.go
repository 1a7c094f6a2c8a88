package runview

import (
	"strings"
	"testing"

	"weaseldb/loadtester/result"
)

// A merged page counts CPUs once per machine (two instances on one 2-CPU
// machine: 2), and a client behind its schedule reads apart from a busy
// one.
func TestMergedPageCountsCPUsPerMachine(t *testing.T) {
	run := func(name string) *result.Result {
		return &result.Result{Version: result.ResultVersion, Instance: name, Machine: "vm1 (EPYC)", CPUs: 2, DurationS: 1,
			WindowStart: "2026-01-02T03:04:05Z", Intervals: []result.Interval{{TS: 1, LengthS: 1}}}
	}
	a, b := run("test-1"), run("test-2")
	b.BehindSchedule, b.BehindScheduleReason = true, "90 requests (9.0%) were sent late: the client fell behind its schedule"
	m, err := result.Merge([]result.MergeInput{{Path: "a.json", Result: a}, {Path: "b.json", Result: b}})
	if err != nil {
		t.Fatal(err)
	}
	page := renderResult(t, m)
	for _, want := range []string{`data-field="cpus">2 (counted once per machine)`, "vm1 (EPYC)",
		`data-field="behind_schedule"><span class="fail">yes</span>: instance test-2 fell behind its schedule`,
		`data-field="client_bound">no`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
