package result

import (
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"time"
)

// The instances of a merge: their rows, and the warnings on what makes
// the merge less than a picture of one load.

// warnRepeatedInstances: two inputs under one instance name are most often
// one result given twice (a shell glob that matched a copy), which would add
// every count twice; instances started by the recipes have distinct names.
func (m *mergeState) warnRepeatedInstances() {
	seen := map[string][]int{}
	var names []string
	for i, in := range m.inputs {
		name := in.Result.Instance
		if len(seen[name]) == 0 {
			names = append(names, name)
		}
		seen[name] = append(seen[name], i)
	}
	for _, name := range names {
		idx := seen[name]
		if len(idx) < 2 {
			continue
		}
		same := "different windows"
		if m.starts[idx[0]].Equal(m.starts[idx[1]]) {
			same = "the same window start: the same result given twice?"
		}
		m.out.Warnings = append(m.out.Warnings, fmt.Sprintf(
			"instance %s appears %d times (%s); its counts are added %d times; give each instance its own --instance",
			name, len(idx), same, len(idx)))
	}
}

// rows lists the instances.
func (m *mergeState) rows() {
	for _, in := range m.inputs {
		r := in.Result
		m.out.Instances = append(m.out.Instances, InstanceRow{Name: r.Instance, WindowStart: r.WindowStart,
			DurationS: r.DurationS, RequestsPerSec: r.RequestsPerSec, Due: r.Due, Unfinished: r.Unfinished,
			Dropped: r.Dropped, Errors: r.Errors, ClientCPUCores: r.ClientCPUCores,
			ClientCPUFraction: r.ClientCPUFraction, ClientBound: r.ClientBound, BehindSchedule: r.BehindSchedule,
			CPUs: r.CPUs, Machine: r.Machine, ClockSource: r.ClockSource})
	}
	m.out.CPUs, m.out.Machine = m.machines()
}

// configKeysPerMachine are config entries that describe the machine an
// instance ran on, not the load it was asked for.
var configKeysPerMachine = map[string]bool{"cpus": true, "gomaxprocs": true, "instances": true}

// warn says what makes the merge less than a picture of one load.
func (m *mergeState) warn() {
	o := m.out
	first := m.inputs[0].Result
	var earliestEnd, latestEnd time.Time
	latestStart := m.earliest
	for i, in := range m.inputs {
		end := m.starts[i].Add(seconds(in.Result.DurationS))
		if i == 0 || end.Before(earliestEnd) {
			earliestEnd = end
		}
		if end.After(latestEnd) {
			latestEnd = end
		}
		if m.starts[i].After(latestStart) {
			latestStart = m.starts[i]
		}
	}
	if spread := max(latestStart.Sub(m.earliest), latestEnd.Sub(earliestEnd)); spread > m.interval {
		o.Warnings = append(o.Warnings, fmt.Sprintf(
			"the instances' windows do not overlap within one interval (%v): starts differ by up to %v, ends by up to %v; give them the same --start-at",
			m.interval, latestStart.Sub(m.earliest).Round(time.Millisecond), latestEnd.Sub(earliestEnd).Round(time.Millisecond)))
	}
	m.warnRepeatedInstances()
	base, _ := first.Config.(map[string]any)
	for _, in := range m.inputs[1:] {
		cfg, _ := in.Result.Config.(map[string]any)
		if diff := configDiff(base, cfg); diff != "" {
			o.Warnings = append(o.Warnings, fmt.Sprintf("instance %s's config differs from %s's: %s", in.Result.Instance, first.Instance, diff))
		}
	}
	var reasons []string
	for _, in := range m.inputs {
		if r := in.Result; r.ClientBound {
			o.ClientBound = true
			reasons = append(reasons, fmt.Sprintf("instance %s was client-bound: %s", r.Instance, r.ClientBoundReason))
		}
		if r := in.Result; r.BehindSchedule {
			m.behindSchedule(r)
		}
		if r := in.Result; !r.Clean() {
			o.Warnings = append(o.Warnings, fmt.Sprintf("instance %s is not clean: %d unfinished, %d dropped", r.Instance, r.Unfinished, r.Dropped))
		}
	}
	if len(reasons) > 0 {
		o.ClientBoundReason = reasons[0]
		o.Warnings = append(o.Warnings, reasons...)
	}
}

// configDiff names the entries in which two configs differ, machine facts
// aside ("" when they agree).
func configDiff(a, b map[string]any) string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var names []string
	for k := range keys {
		if !configKeysPerMachine[k] && !reflect.DeepEqual(a[k], b[k]) {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s %v vs %v", k, show(a[k]), show(b[k]))
	}
	return strings.Join(parts, ", ")
}

func show(v any) string {
	if v == nil {
		return "(none)"
	}
	return fmt.Sprint(v)
}

// PrintInstances writes the per-instance table of a merged result.
func (r *Result) PrintInstances(w io.Writer) {
	if len(r.Instances) == 0 {
		return
	}
	fmt.Fprintf(w, "\n  instances (%d):\n", len(r.Instances))
	fmt.Fprintf(w, "    %-24s %-30s %10s %8s %10s %8s %10s %-12s %-15s %s\n", "name", "window start (UTC)", "req/s", "due",
		"unfinished", "dropped", "client CPU", "client-bound", "behind schedule", "machine")
	for _, row := range r.Instances {
		fmt.Fprintf(w, "    %-24s %-30s %10.0f %8d %10d %8d %5.2f cores %-12v %-15v %s\n", row.Name, row.WindowStart,
			row.RequestsPerSec, row.Due, row.Unfinished, row.Dropped, row.ClientCPUCores, row.ClientBound, row.BehindSchedule, row.Machine)
	}
}
