// Package placement is the one rule that puts a measured server, its
// pipeline stages and the load generator on CPUs: the gate, the report's
// setups and wait-strategy comparison, and bench_pipeline all plan with it,
// so on one machine they measure the same placement of the same threads.
//
// The rule, over the CPUs this process may use (sorted):
//
//  1. Keep one CPU for everything unpinned (the Go runtime's GC and timers,
//     other goroutines, the system): the lowest, which often takes the most
//     interrupts. With fewer than 3 CPUs nothing is kept.
//  2. Dedicated cores, when what is left holds a CPU for every thread that
//     asks for one: each gets its own, in the order producer (a benchmark's),
//     I/O loops, pipeline stages, load generator, from the lowest of the
//     CPUs kept for the plan upwards; the plan takes the highest CPUs, so
//     surplus low CPUs join the one kept in 1.
//  3. Otherwise shared cores: the server and the load generator get
//     disjoint halves of what is left (the server the lower half, rounded
//     up), each process on its whole set, its threads placed by the
//     kernel; with fewer than 2 CPUs left nothing is pinned.
//
// On a machine with hyper-threads or several NUMA nodes (topology.go,
// PlaceOn), "a CPU" in 2 is a physical core, its other hyper-threads left
// idle, and the server's threads share one node where one has room.
//
// PlaceHot (hot.go) is the variant for small machines that keeps giving hot
// threads CPUs of their own where this rule would share: bench_pipeline's
// latency family uses it; the gate and the report keep this rule.
package placement

import (
	"fmt"
	"slices"

	"weaseldb/internal/affinity"
	"weaseldb/internal/procstat"
)

// Reserve is how many CPUs a plan keeps for everything unpinned.
const Reserve = 1

// Need is what asks for CPUs.
type Need struct {
	Producer     bool  // a benchmark's producer thread (bench_pipeline)
	IOThreads    int   // the server's event loops
	StageThreads []int // threads per pipeline stage, in stage order
	LoadThreads  int   // the load generator's network threads
}

// DedicatedCPUs is how many CPUs a dedicated plan for n needs: one per
// thread and Reserve.
func (n Need) DedicatedCPUs() int { return n.threads() + Reserve }

func (n Need) threads() int {
	t := n.IOThreads + n.LoadThreads
	if n.Producer {
		t++
	}
	for _, s := range n.StageThreads {
		t += s
	}
	return t
}

// Plan is where everything goes. In a dedicated plan every thread has a
// CPU of its own; in a shared plan only the processes' sets are given.
type Plan struct {
	Dedicated bool
	// Dedicated: each thread's CPU.
	ProducerCPU int     // -1: none
	IOCPUs      []int   // one per I/O loop
	StageCPUs   [][]int // per stage, one per thread
	// Both: each process's whole set (a dedicated plan's server set is its
	// loops' and stages' CPUs). Empty: not pinned.
	ServerCPUs []int
	LoadCPUs   []int
	// Kept are the CPUs left for everything unpinned.
	Kept []int
	// Partial (PlaceHot only): there were fewer CPUs than threads, and the
	// threads named in Shared share the lowest CPU; the others own theirs.
	Partial bool
	Shared  []string
	// Threads (dedicated plans) is where each thread runs: its CPU, its
	// physical core and node, and the core's other hyper-threads, which
	// the run leaves idle (Idle lists them all).
	Threads []Thread
	Idle    []int
	// GaveUp says what the machine could not give the plan and why (a
	// pipeline across nodes, threads on sibling hyper-threads).
	GaveUp []string
	// Why says what the rule did, for a report or a log.
	Why string
}

// Pinned tells whether the plan pins anything.
func (p Plan) Pinned() bool {
	return len(p.ServerCPUs) > 0 || len(p.LoadCPUs) > 0 || p.ProducerCPU >= 0
}

// Place applies the rule to allowed for need, each CPU taken for a core of
// its own (PlaceOn knows hyper-threads and nodes).
func Place(allowed []int, need Need) Plan {
	return PlaceOn(procstat.FlatTopology(allowed, ""), need)
}

// PlaceDedicated is step 2 of the rule alone: an error (saying how many
// CPUs it needs) when allowed cannot give every thread a CPU of its own
// and keep Reserve. It takes each CPU for a core of its own (PlaceDedicatedOn
// knows hyper-threads and nodes).
func PlaceDedicated(allowed []int, need Need) (Plan, error) {
	return PlaceDedicatedOn(procstat.FlatTopology(allowed, ""), need)
}

// assign gives need's threads the CPUs of block in the rule's order
// (producer, I/O loops, stages, load generator); kept is left for the rest.
func assign(kept, block []int, need Need) Plan {
	p := Plan{Dedicated: true, ProducerCPU: -1, Kept: slices.Clone(kept)}
	free := slices.Clone(block)
	take := func(n int) []int {
		got := free[:n:n]
		free = free[n:]
		return got
	}
	if need.Producer {
		p.ProducerCPU = take(1)[0]
	}
	p.IOCPUs = take(need.IOThreads)
	p.ServerCPUs = slices.Clone(p.IOCPUs)
	for _, n := range need.StageThreads {
		s := take(n)
		p.StageCPUs = append(p.StageCPUs, s)
		p.ServerCPUs = append(p.ServerCPUs, s...)
	}
	p.LoadCPUs = take(need.LoadThreads)
	return p
}

func placeShared(cpus []int, need Need) Plan {
	p := Plan{ProducerCPU: -1}
	rest := cpus
	if len(cpus) >= 3 {
		p.Kept, rest = slices.Clone(cpus[:Reserve]), cpus[Reserve:]
	}
	if len(rest) < 2 || need.LoadThreads == 0 {
		p.Kept = slices.Clone(cpus)
		p.Why = fmt.Sprintf("shared cores, nothing pinned (%s)", affinity.FormatCPUList(cpus))
		return p
	}
	half := (len(rest) + 1) / 2
	p.ServerCPUs, p.LoadCPUs = slices.Clone(rest[:half]), slices.Clone(rest[half:])
	p.Why = fmt.Sprintf("shared cores: server on %s, load generator on %s", affinity.FormatCPUList(p.ServerCPUs), affinity.FormatCPUList(p.LoadCPUs))
	if len(p.Kept) > 0 {
		p.Why += ", " + affinity.FormatCPUList(p.Kept) + " kept for the rest"
	}
	return p
}

// Fit is the thread counts fitted to a machine's CPUs, the report's
// "fitted setup" rule (docs/report.md): with 7 or more CPUs, one kept, the
// pipeline's 4 threads a CPU each, and of the rest half (rounded down, at
// least 1) to I/O loops and the others to load-generator threads, each
// thread then on a CPU of its own; with fewer, one I/O loop and one load
// thread per 4 CPUs (at least one each), on shared cores. The gate's
// "auto" pinning places its processes where this puts the fitted setup's
// threads, so the two measure the same placement on one machine.
func Fit(allowed []int) Need {
	return fitCores(len(slices.Compact(slices.Sorted(slices.Values(allowed)))))
}

// FitOn is Fit by physical cores: a hyper-thread is not a core of its own
// for a thread that is to have one.
func FitOn(topo procstat.Topology) Need { return fitCores(len(topo.Cores())) }

func fitCores(n int) Need {
	stages := []int{1, 1, 1, 1}
	rest := n - Reserve - 4
	if rest >= 2 {
		io := max(1, rest/2)
		return Need{IOThreads: io, StageThreads: stages, LoadThreads: rest - io}
	}
	return Need{IOThreads: max(1, n/4), StageThreads: stages, LoadThreads: max(1, n/4)}
}
