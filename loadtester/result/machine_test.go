package result

import "testing"

// Issue 55: two instances on one 2-CPU machine merged said CPUs 4. A
// merge counts CPUs once per machine (an input naming none is a machine
// of its own, as before the field), and keeps the machine when all share it.
func TestMergeCountsCPUsPerMachine(t *testing.T) {
	in := func(name, machine string) MergeInput {
		return MergeInput{Path: name + ".json", Result: &Result{Version: ResultVersion, Instance: name, Machine: machine, CPUs: 2,
			WindowStart: "2026-12-01T10:00:00Z", DurationS: 1}}
	}
	for _, tc := range []struct {
		name    string
		inputs  []MergeInput
		cpus    int
		machine string
	}{
		{"one machine", []MergeInput{in("a", "vm1 (EPYC)"), in("b", "vm1 (EPYC)")}, 2, "vm1 (EPYC)"},
		{"two machines", []MergeInput{in("a", "vm1 (EPYC)"), in("b", "vm2 (EPYC)"), in("c", "vm2 (EPYC)")}, 4, ""},
		{"results naming no machine", []MergeInput{in("a", ""), in("b", "")}, 4, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Merge(tc.inputs)
			if err != nil {
				t.Fatal(err)
			}
			if m.CPUs != tc.cpus || m.Machine != tc.machine || m.Instances[0].Machine != tc.inputs[0].Result.Machine {
				t.Errorf("cpus %d machine %q (row %q): want %d %q", m.CPUs, m.Machine, m.Instances[0].Machine, tc.cpus, tc.machine)
			}
		})
	}
}

// A merge of an instance behind its schedule is behind schedule, and not
// client-bound for it.
func TestMergeKeepsBehindScheduleApart(t *testing.T) {
	a := &Result{Version: ResultVersion, Instance: "a", WindowStart: "2026-12-01T10:00:00Z", DurationS: 1,
		BehindSchedule: true, BehindScheduleReason: "late", LateSendLateness: &Latency{P99: 5e6}}
	b := &Result{Version: ResultVersion, Instance: "b", WindowStart: "2026-12-01T10:00:00Z", DurationS: 1}
	m, err := Merge([]MergeInput{{Path: "a.json", Result: a}, {Path: "b.json", Result: b}})
	if err != nil {
		t.Fatal(err)
	}
	if !m.BehindSchedule || m.ClientBound || m.LateSendLateness == nil || m.LateSendLateness.P99 != 5e6 || !m.Instances[0].BehindSchedule {
		t.Errorf("behind %v (%q), client-bound %v, lateness %+v", m.BehindSchedule, m.BehindScheduleReason, m.ClientBound, m.LateSendLateness)
	}
}
