package pipebench

// What bench_pipeline's --families and --cpus mean, resolved against this
// machine: the families a run takes, and where its hot threads go. The
// main only parses the flags; the meaning lives here beside the plans
// (cpuplan.go) it draws on.

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"weaseldb/internal/affinity"
	"weaseldb/internal/placement"
	"weaseldb/internal/procstat"
)

// DefaultFamilies are the families a run takes when none are named: the
// throughput families. KnownFamilies adds the latency family, which runs
// only when named.
func DefaultFamilies() []string {
	return []string{FamilySingleStage, FamilyBatch, FamilyBatchSpin, FamilyWaitStrategy}
}

// KnownFamilies are every family --families accepts.
func KnownFamilies() []string { return append(DefaultFamilies(), FamilyLatency) }

// ThroughputFamilies are the given families but latency.
func ThroughputFamilies(families []string) []string {
	var out []string
	for _, f := range families {
		if f != FamilyLatency {
			out = append(out, f)
		}
	}
	return out
}

// ParseFamilies reads --families' comma-separated list; the error names
// the flag and the families it knows.
func ParseFamilies(list string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !slices.Contains(KnownFamilies(), f) {
			return nil, fmt.Errorf("--families: unknown family %q (want some of %s)", f, strings.Join(KnownFamilies(), ", "))
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, errors.New("--families: name at least one family")
	}
	return out, nil
}

// CPUChoice is where a run's hot threads go.
type CPUChoice struct {
	// CPUs pins the throughput families: the producer's CPU, then one per
	// stage; empty: not pinned.
	CPUs []int
	// Plan is --cpus auto's plan in lines (PlanLines), for --print-plan
	// and the run's header.
	Plan []string
	// Latency is where the latency family's dedicated cases run.
	Latency LatencyPlan
}

// ChooseCPUs resolves --cpus for the families: "" (not pinned), "auto" (a
// physical core per hot thread by internal/placement) or a list P,S0,S1
// checked against the CPUs this process may use. The error names --cpus.
func ChooseCPUs(spec string, families []string) (CPUChoice, error) {
	c := CPUChoice{Latency: LatencyPlan{Skip: "not pinned: --cpus auto (or --cpus P,S0) gives the producer and the stage a CPU each"}}
	others := ThroughputFamilies(families)
	switch spec {
	case "":
		return c, nil
	case "auto":
		allowed, err := affinity.AllowedCPUs()
		if err != nil {
			return c, err
		}
		topo := procstat.ReadTopology(procstat.SysRoot, allowed)
		topo.NetIRQs = procstat.NetworkIRQs(procstat.ProcRoot, procstat.SysRoot)
		c.Latency = PlanLatencyOn(topo)
		if len(others) > 0 {
			list, p, err := AutoPlan(topo, MaxStages(others))
			if err != nil {
				return c, fmt.Errorf("--cpus auto: %w", err)
			}
			c.CPUs, c.Plan = list, PlanLines(topo, p)
		}
		return c, nil
	}
	list, err := affinity.ParseCPUList(spec)
	if err != nil {
		return c, fmt.Errorf("--cpus: %w", err)
	}
	if need := 1 + MaxStages(families); len(list) < need {
		return c, fmt.Errorf("--cpus %s: need %d CPUs (the producer, then one per stage)", spec, need)
	}
	allowed, err := affinity.AllowedCPUs()
	if err != nil {
		return c, err
	}
	distinct := slices.Compact(slices.Sorted(slices.Values(list)))
	if err := affinity.Validate(distinct, allowed); err != nil {
		return c, fmt.Errorf("--cpus: %w", err)
	}
	c.Latency = PlanLatencyList(list, allowed)
	if len(others) > 0 {
		c.CPUs = list
	}
	return c, nil
}

// PlanLines are --print-plan's lines: one per thread, then what the plan
// gave up and the interrupts that may land on its CPUs.
func PlanLines(topo procstat.Topology, p placement.Plan) []string {
	var lines []string
	for _, t := range p.Threads {
		lines = append(lines, t.String())
	}
	if topo.Flat {
		lines = append(lines, "topology: flat ("+topo.Note+")")
	}
	for _, g := range p.GaveUp {
		lines = append(lines, "gave up: "+g)
	}
	for _, w := range placement.IRQWarnings(p.Threads, topo.NetIRQs) {
		lines = append(lines, "warning: "+w)
	}
	return lines
}
