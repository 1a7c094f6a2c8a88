package placement

import (
	"fmt"
	"slices"
	"strings"

	"weaseldb/internal/affinity"
	"weaseldb/internal/procstat"
)

// The rule on a machine's topology (procstat.ReadTopology):
//
//   - A dedicated thread gets a physical core of its own: the core's first
//     allowed hyper-thread, its siblings left idle (Plan.Idle), so no two
//     dedicated threads share a core's execution units. Step 2 counts
//     cores, not CPUs; Reserve keeps the lowest core, all its threads.
//   - Where the machine has several NUMA nodes, the server's threads (a
//     benchmark's producer, the I/O loops and the pipeline stages, which
//     hand every request to each other through shared memory) go on one
//     node, the highest with room, its highest cores; the load generator
//     takes the highest cores left, on any node (it talks to the server
//     through the kernel's sockets, not shared rings). Where no node has
//     room, the server spans nodes and Plan.GaveUp says so.
//   - Where the cores differ in speed (cpu_capacity: big.LITTLE, hybrid
//     parts), the fastest count as the highest: the kept core is a slow
//     one, the server's threads take the fastest, the load generator the
//     fastest left; where the fastest cannot hold every thread, GaveUp
//     says which threads run on slower cores.
//   - Where there are too few cores but enough hyper-threads, no plan is
//     dedicated: threads on sibling hyper-threads would measure each
//     other. Shared plans split the CPUs core by core, so a core's
//     hyper-threads serve one process.
//
// On a flat topology (every CPU its own core, one node) this is the rule
// of placement.go, CPU for CPU.

// Thread is where one thread of a dedicated plan runs.
type Thread struct {
	Name      string // "producer", "io 0", "stage 1", "load 2"
	CPU, Core int
	Node      int
	Idle      []int // its core's other allowed hyper-threads, unused by the run
}

// String is the plan's line for the thread: "io 0 cpu=5 core=5 node=1 idle=13".
func (t Thread) String() string {
	idle := "none"
	if len(t.Idle) > 0 {
		idle = affinity.FormatCPUList(t.Idle)
	}
	return fmt.Sprintf("%s cpu=%d core=%d node=%d idle=%s", t.Name, t.CPU, t.Core, t.Node, idle)
}

// PlaceOn is Place on a topology.
func PlaceOn(topo procstat.Topology, need Need) Plan {
	if p, err := PlaceDedicatedOn(topo, need); err == nil {
		return p
	}
	p := placeShared(coreOrder(topo), need)
	if topo.SMT() && need.threads() > 0 && len(topo.CPUs) >= need.DedicatedCPUs() {
		p.GaveUp = append(p.GaveUp, fmt.Sprintf("not dedicated: %d physical cores for %d threads and %d kept; their %d hyper-threads would have put threads on sibling hyper-threads",
			len(topo.Cores()), need.threads(), Reserve, len(topo.CPUs)))
	}
	return p
}

// PlaceDedicatedOn is step 2 on a topology: each thread a physical core,
// the server's threads on one node where one has room. The error says how
// many cores it needs.
func PlaceDedicatedOn(topo procstat.Topology, need Need) (Plan, error) {
	want := need.threads()
	if want < 1 {
		return Plan{}, fmt.Errorf("placement: nothing asks for a CPU")
	}
	cores := topo.Cores()
	if len(cores) < want+Reserve {
		cpus := coreOrder(topo)
		if topo.SMT() {
			return Plan{}, fmt.Errorf("needs %d physical cores (%d dedicated + %d for the rest), this process may use %d (%d hyper-threads: %s)",
				want+Reserve, want, Reserve, len(cores), len(cpus), affinity.FormatCPUList(slices.Sorted(slices.Values(cpus))))
		}
		return Plan{}, fmt.Errorf("needs %d CPUs (%d dedicated + %d for the rest), this process may use %d (%s)",
			want+Reserve, want, Reserve, len(cpus), listOrNone(slices.Sorted(slices.Values(cpus))))
	}
	block, gaveUp := chooseCores(topo, coreRank(topo), want-need.LoadThreads, need.LoadThreads)
	var kept []int
	for _, c := range cores {
		if !slices.Contains(block, c[0]) {
			kept = append(kept, c...)
		}
	}
	p := assign(slices.Sorted(slices.Values(kept)), block, need)
	p.GaveUp = gaveUp
	p.Threads = threadsOf(topo, block, need)
	p.GaveUp = append(p.GaveUp, slowerCores(topo, p.Threads)...)
	for _, t := range p.Threads {
		p.Idle = append(p.Idle, t.Idle...)
	}
	p.Why = dedicatedWhy(topo, p, block)
	return p, nil
}

// chooseCores picks the cores of a dedicated plan from reps (one CPU per
// core, ascending; reps[0] is kept), the server's first: on one node, the
// highest cores in order, as on a flat machine; on several, the server's on
// the highest node with room.
func chooseCores(topo procstat.Topology, reps []int, server, load int) (block []int, gaveUp []string) {
	want := server + load
	nodes := topo.Nodes()
	candidates := reps[Reserve:]
	if len(nodes) <= 1 {
		if !unequalCapacity(topo) {
			return slices.Clone(reps[len(reps)-want:]), nil
		}
		return serverFirst(candidates, candidates, server, load), nil
	}
	var counts []string
	for i := len(nodes) - 1; i >= 0; i-- {
		on := onNode(topo, candidates, nodes[i])
		counts = append(counts, fmt.Sprintf("node %d: %d", nodes[i], len(on)))
		if len(on) >= server {
			return serverFirst(candidates, on, server, load), nil
		}
	}
	slices.Reverse(counts)
	return slices.Clone(reps[len(reps)-want:]), []string{fmt.Sprintf(
		"one node for the server: no NUMA node has %d free physical cores for its threads (%s), so they span nodes", server, strings.Join(counts, ", "))}
}

// serverFirst gives the server's threads the highest of on (a subset of
// candidates, in their order) and the load generator the highest of
// candidates left.
func serverFirst(candidates, on []int, server, load int) []int {
	serverCores := on[len(on)-server:]
	var rest []int
	for _, r := range candidates {
		if !slices.Contains(serverCores, r) {
			rest = append(rest, r)
		}
	}
	return append(slices.Clone(serverCores), rest[len(rest)-load:]...)
}

// coreRank lists each core's first allowed hyper-thread, the order the rule
// takes "highest" in: by speed (cpu_capacity), then by number.
func coreRank(topo procstat.Topology) []int {
	cores := topo.Cores()
	reps := make([]int, len(cores))
	for i, c := range cores {
		reps[i] = c[0]
	}
	capacity := func(cpu int) int { p, _ := topo.Place(cpu); return p.Capacity }
	slices.SortStableFunc(reps, func(a, b int) int { return capacity(a) - capacity(b) })
	return reps
}

// unequalCapacity tells whether the allowed cores differ in speed.
func unequalCapacity(topo procstat.Topology) bool {
	for _, p := range topo.CPUs {
		if p.Capacity != topo.CPUs[0].Capacity {
			return true
		}
	}
	return false
}

// slowerCores says which threads run on cores slower than the plan's
// fastest: a comparison of them would measure the cores, not the threads.
func slowerCores(topo procstat.Topology, threads []Thread) []string {
	if !unequalCapacity(topo) || len(threads) == 0 {
		return nil
	}
	capacity := func(cpu int) int { p, _ := topo.Place(cpu); return p.Capacity }
	fastest := 0
	for _, t := range threads {
		fastest = max(fastest, capacity(t.CPU))
	}
	var slow []string
	for _, t := range threads {
		if c := capacity(t.CPU); c < fastest {
			slow = append(slow, fmt.Sprintf("%s on CPU %d (%d)", t.Name, t.CPU, c))
		}
	}
	if len(slow) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("cores of one speed: too few of the fastest (cpu_capacity %d) for every thread, so %s run on slower ones",
		fastest, strings.Join(slow, ", "))}
}

func onNode(topo procstat.Topology, cpus []int, node int) []int {
	var out []int
	for _, c := range cpus {
		if p, _ := topo.Place(c); p.Node == node {
			out = append(out, c)
		}
	}
	return out
}

// threadsOf names each thread of block (in the rule's order) with its place.
func threadsOf(topo procstat.Topology, block []int, need Need) []Thread {
	names := need.threadNames()
	block = block[:min(len(block), len(names))]
	out := make([]Thread, len(block))
	for i, cpu := range block {
		p, _ := topo.Place(cpu)
		t := Thread{Name: names[i], CPU: cpu, Core: p.Core, Node: p.Node}
		for _, s := range p.Siblings {
			if _, allowed := topo.Place(s); allowed && s != cpu {
				t.Idle = append(t.Idle, s)
			}
		}
		out[i] = t
	}
	return out
}

func dedicatedWhy(topo procstat.Topology, p Plan, block []int) string {
	sorted := slices.Sorted(slices.Values(block))
	if !topo.SMT() && len(topo.Nodes()) <= 1 {
		return fmt.Sprintf("dedicated cores: %d threads on a CPU each (%s), %s kept for the rest",
			len(block), affinity.FormatCPUList(sorted), affinity.FormatCPUList(p.Kept))
	}
	why := fmt.Sprintf("dedicated cores: %d threads on a physical core each (%s)", len(block), affinity.FormatCPUList(sorted))
	if len(p.Idle) > 0 {
		why += fmt.Sprintf(", their hyper-threads %s left idle", affinity.FormatCPUList(slices.Sorted(slices.Values(p.Idle))))
	}
	if nodes := topo.Nodes(); len(nodes) > 1 && len(p.GaveUp) == 0 {
		server := p.ServerCPUs
		if p.ProducerCPU >= 0 {
			server = append([]int{p.ProducerCPU}, server...)
		}
		if len(server) > 0 {
			first, _ := topo.Place(server[0])
			why += fmt.Sprintf(", the server's %d threads on node %d", len(server), first.Node)
		}
	}
	return why + fmt.Sprintf(", %s kept for the rest", listOrNone(p.Kept))
}

// coreOrder lists the allowed CPUs core by core (a core's hyper-threads
// together), cores ascending.
func coreOrder(topo procstat.Topology) []int {
	var out []int
	for _, c := range topo.Cores() {
		out = append(out, c...)
	}
	return out
}
