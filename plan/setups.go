package plan

import (
	"fmt"
	"strings"

	"weaseldb/artifacts"
	"weaseldb/internal/affinity"
	"weaseldb/internal/placement"
	"weaseldb/internal/procstat"
)

// fittedStageThreads is the pipeline's threads in a fitted setup: sequence,
// resolve, persist and one release thread.
const fittedStageThreads = 4

// connectionsPerLoadThread is the fitted setup's closed loop: enough
// connections in flight per load-tester thread to keep the pipeline's
// batches full, few enough that each thread's epoll loop stays cheap.
const connectionsPerLoadThread = 100

// FitSetup chooses the setup fitted to the allowed CPUs; the rule is
// docs/report.md's "The fitted setup". Only the thread counts, the
// connections, the wait strategy and the pinning change: the work per
// request, the requests per connection and the connect threads are the
// seed's, so both setups serve the same load.
//
//   - 7 or more CPUs: dedicated cores. One CPU is left for everything
//     unpinned; the 4 pipeline threads get a CPU each; of the rest, half
//     (rounded down, at least 1) go to I/O loops and the others to
//     load-tester threads, each pinned. On cores of their own the pipeline
//     may spin while upstream is busy: WaitIfUpstreamIdle.
//   - Fewer: shared cores, nothing pinned. Every busy thread beyond the
//     cores time-shares instead of adding capacity, so one I/O loop and one
//     load-tester thread per 4 CPUs (at least one each), and a wait strategy
//     that never spins: WaitIfStageEmpty.
func FitSetup(allowed []int, seed artifacts.Setup) artifacts.Setup {
	return FitSetupOn(procstat.FlatTopology(allowed, ""), seed)
}

// FitSetupOn is FitSetup on a machine's topology: the thread counts from
// its physical cores, each dedicated thread on a core of its own, the
// server on one NUMA node where one has room.
func FitSetupOn(topo procstat.Topology, seed artifacts.Setup) artifacts.Setup {
	var allowed []int
	for _, c := range topo.CPUs {
		allowed = append(allowed, c.CPU)
	}
	f := artifacts.Setup{Name: artifacts.SetupFitted, Title: "fitted setup", ReleaseThreads: 1, OkIterations: seed.OkIterations,
		ConnectThreads: seed.ConnectThreads, RequestsPerConn: seed.RequestsPerConn}
	n := len(allowed)
	need := placement.FitOn(topo) // the thread counts; the one placement rule places them
	f.IOThreads, f.LoadThreads = need.IOThreads, need.LoadThreads
	if p, err := placement.PlaceDedicatedOn(topo, need); err == nil {
		f.Placement, f.PlacementGaveUp = placementLines(p), p.GaveUp
		f.IRQWarnings = placement.IRQWarnings(p.Threads, topo.NetIRQs)
		f.Cores, f.WaitStrategy = artifacts.CoresDedicated, "WaitIfUpstreamIdle"
		f.IOCPUs, f.PipelineCPUs, f.LoadCPUs = p.IOCPUs, p.StageCPUs, p.LoadCPUs
		f.CPUPlan = dedicatedPlan(f)
		f.Connections = connectionsPerLoadThread * f.LoadThreads
		f.Why = fmt.Sprintf("%d allowed CPUs (%s), 7 or more: dedicated cores; %d for the pipeline's 4 threads, %d I/O loops, %d load-tester threads, 1 left for the rest (%s); WaitIfUpstreamIdle, which may spin on cores of its own",
			n, affinity.FormatCPUList(allowed), fittedStageThreads, f.IOThreads, f.LoadThreads, f.CPUPlan)
		return f
	}
	f.Cores, f.WaitStrategy = artifacts.CoresShared, "WaitIfStageEmpty"
	f.Connections = connectionsPerLoadThread * f.LoadThreads
	f.Why = fmt.Sprintf("%d allowed CPUs (%s), fewer than 7: shared cores, nothing pinned; one I/O loop and one load-tester thread per 4 CPUs (%d and %d); WaitIfStageEmpty, which never spins; nothing pinned, so the server's thread_names (auto) runs the stages as goroutines on the loop's thread instead of paying an OS thread switch per hand-off",
		n, affinity.FormatCPUList(allowed), f.IOThreads, f.LoadThreads)
	return f
}

// dedicatedPlan names each thread's CPUs, as the wait-strategy plans do.
func dedicatedPlan(s artifacts.Setup) string {
	stages := make([]string, len(s.PipelineCPUs))
	for i, c := range s.PipelineCPUs {
		stages[i] = affinity.FormatCPUList(c)
	}
	return fmt.Sprintf("io %s; stages %s; load_tester %s",
		affinity.FormatCPUList(s.IOCPUs), strings.Join(stages, " "), affinity.FormatCPUList(s.LoadCPUs))
}
