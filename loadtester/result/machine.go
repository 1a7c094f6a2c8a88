package result

import "fmt"

// Who measured a merged result: the machines its instances ran on, and
// whether any fell behind its schedule.

// machines counts the CPUs of the merge's inputs once per distinct
// machine (two instances on one 2-CPU machine have 2 CPUs, not 4), and
// names the machine when every input ran on one. An input that names no
// machine (a result from before the field) counts as a machine of its own.
func (m *mergeState) machines() (cpus int, machine string) {
	seen := map[string]bool{}
	for i, in := range m.inputs {
		r := in.Result
		key := r.Machine
		if key == "" {
			key = fmt.Sprintf("\x00input %d", i)
		}
		if !seen[key] {
			seen[key] = true
			cpus += r.CPUs
		}
	}
	if first := m.inputs[0].Result.Machine; len(seen) == 1 && first != "" {
		machine = first
	}
	return cpus, machine
}

// behindSchedule marks the merge as behind schedule for instance r, with
// the first such instance's reason, and the lateness of the latest sender
// (the percentiles of several instances' lateness cannot be added without
// their histograms: the worst is a bound).
func (m *mergeState) behindSchedule(r *Result) {
	o := m.out
	why := fmt.Sprintf("instance %s fell behind its schedule: %s", r.Instance, r.BehindScheduleReason)
	if !o.BehindSchedule {
		o.BehindSchedule, o.BehindScheduleReason = true, why
	}
	o.Warnings = append(o.Warnings, why)
	if l := r.LateSendLateness; l != nil && (o.LateSendLateness == nil || l.P99 > o.LateSendLateness.P99) {
		worst := *l
		o.LateSendLateness = &worst
	}
}
