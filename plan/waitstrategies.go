package plan

import (
	"fmt"
	"slices"
	"strings"

	"weaseldb/artifacts"
	"weaseldb/internal/affinity"
	"weaseldb/internal/placement"
	"weaseldb/internal/procstat"
)

// WaitParams sizes the runs the plan assigns CPUs for.
type WaitParams struct {
	Strategies     []string // default artifacts.WaitStrategyNames
	PipelineStages int      // bench_pipeline's wait_strategy family: 2
	IOThreads      int      // server event loops
	ReleaseThreads int      // server release-stage threads
	LoadThreads    int      // load_tester network threads, each on its own CPU
	Dedicated      bool     // plan dedicated runs (false: shared only)
}

// PlannedRun is one run of the comparison with its CPU assignment.
type PlannedRun struct {
	artifacts.WaitRun
	// Dedicated CPU assignment (empty for shared runs).
	ProducerCPU  int     // bench_pipeline: the producer
	StageCPUs    []int   // bench_pipeline: one per stage
	IOCPUs       []int   // server: one per event loop
	PipelineCPUs [][]int // server: sequence, resolve, persist, release threads
	LoadCPUs     []int   // load_tester, the whole process (taskset)
}

// ServerStageThreads is how many threads the server's four commit stages run.
func ServerStageThreads(releaseThreads int) int { return 3 + releaseThreads }

// WaitStrategies lists every run of the comparison, in execution order:
// bench_pipeline then the server, shared cores then dedicated, each strategy
// in turn. Dedicated runs get CPUs from placement.PlaceDedicated; where allowed
// is too small they are planned as skipped, with the count they need.
func WaitStrategies(allowed []int, p WaitParams) []PlannedRun {
	return WaitStrategiesOn(procstat.FlatTopology(allowed, ""), p)
}

// WaitStrategiesOn is WaitStrategies on a machine's topology: a dedicated
// thread gets a physical core, a pipeline one NUMA node where one has room
// (placement.PlaceDedicatedOn), and each run records where each thread is.
func WaitStrategiesOn(topo procstat.Topology, p WaitParams) []PlannedRun {
	strategies := p.Strategies
	if len(strategies) == 0 {
		strategies = artifacts.WaitStrategyNames
	}
	modes := []string{artifacts.CoresShared}
	if p.Dedicated {
		modes = append(modes, artifacts.CoresDedicated)
	}
	var runs []PlannedRun
	for _, bench := range []string{artifacts.BenchPipeline, artifacts.BenchServer} {
		for _, cores := range modes {
			for _, s := range strategies {
				run := PlannedRun{WaitRun: artifacts.WaitRun{Bench: bench, Strategy: s, Cores: cores, Status: artifacts.StatusMeasured}}
				if cores == artifacts.CoresDedicated {
					planDedicated(&run, topo, p)
				}
				runs = append(runs, run)
			}
		}
	}
	return runs
}

// planDedicated assigns CPUs to one dedicated run, or marks it skipped.
func planDedicated(run *PlannedRun, topo procstat.Topology, p WaitParams) {
	var need placement.Need
	if run.Bench == artifacts.BenchPipeline {
		need = placement.Need{Producer: true, StageThreads: slices.Repeat([]int{1}, p.PipelineStages)}
	} else {
		need = placement.Need{IOThreads: p.IOThreads, StageThreads: []int{1, 1, 1, p.ReleaseThreads}, LoadThreads: p.LoadThreads}
	}
	run.CPUsNeeded = need.DedicatedCPUs()
	plan, err := placement.PlaceDedicatedOn(topo, need)
	if err != nil {
		run.Status, run.Reason = artifacts.StatusSkipped, err.Error()
		return
	}
	run.Placement, run.PlacementGaveUp = placementLines(plan), plan.GaveUp
	run.IRQWarnings = placement.IRQWarnings(plan.Threads, topo.NetIRQs)
	if run.Bench == artifacts.BenchPipeline {
		run.ProducerCPU = plan.ProducerCPU
		for _, s := range plan.StageCPUs {
			run.StageCPUs = append(run.StageCPUs, s...)
		}
		run.CPUPlan = fmt.Sprintf("producer %d; stages %s", run.ProducerCPU, joinInts(run.StageCPUs, ","))
		return
	}
	run.IOCPUs, run.PipelineCPUs, run.LoadCPUs = plan.IOCPUs, plan.StageCPUs, plan.LoadCPUs
	stages := make([]string, len(run.PipelineCPUs))
	for i, s := range run.PipelineCPUs {
		stages[i] = affinity.FormatCPUList(s)
	}
	run.CPUPlan = fmt.Sprintf("io %s; stages %s; load_tester %s",
		affinity.FormatCPUList(run.IOCPUs), strings.Join(stages, " "), affinity.FormatCPUList(run.LoadCPUs))
}

// placementLines is the plan's line per thread (placement.Thread).
func placementLines(p placement.Plan) []string {
	lines := make([]string, len(p.Threads))
	for i, t := range p.Threads {
		lines[i] = t.String()
	}
	return lines
}

// joinInts is v's numbers joined by sep.
func joinInts(v []int, sep string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, sep)
}

// PipelineCPUsFlag is the run's bench_pipeline --cpus value (producer first).
func (r PlannedRun) PipelineCPUsFlag() string {
	return joinInts(append([]int{r.ProducerCPU}, r.StageCPUs...), ",")
}

// FormatWaitPlan shows each planned run and its CPUs, or why it would be skipped.
func FormatWaitPlan(ws *artifacts.WaitStrategies, runs []PlannedRun) string {
	var b strings.Builder
	simulated := ""
	if ws.Simulated {
		simulated = " (simulated)"
	}
	fmt.Fprintf(&b, "plan for allowed CPUs %s%s:\n", ws.AllowedCPUs, simulated)
	for _, r := range runs {
		what := "run"
		switch {
		case r.Status == artifacts.StatusSkipped:
			what = "skip: " + r.Reason
		case r.CPUPlan != "":
			what = fmt.Sprintf("run on %d CPUs: %s", r.CPUsNeeded, r.CPUPlan)
		}
		fmt.Fprintf(&b, "  %-8s  %-18s  %-9s  %s\n", r.Bench, r.Strategy, r.Cores, what)
		b.WriteString(FormatPlacement("      ", r.Placement, r.PlacementGaveUp, r.IRQWarnings))
	}
	return b.String()
}

// FormatPlacement is a dedicated plan's lines, each after indent: a line a
// thread (cpu= core= node= idle=), then what it gave up and the network
// interrupts that may land on its CPUs.
func FormatPlacement(indent string, placement, gaveUp, irqWarnings []string) string {
	var b strings.Builder
	for _, l := range placement {
		b.WriteString(indent + l + "\n")
	}
	for _, g := range gaveUp {
		b.WriteString(indent + "gave up: " + g + "\n")
	}
	for _, w := range irqWarnings {
		b.WriteString(indent + "warning: " + w + "\n")
	}
	return b.String()
}
