package placement

import (
	"fmt"
	"slices"
	"strings"

	"weaseldb/internal/affinity"
	"weaseldb/internal/procstat"
)

// PlaceHot is the rule for machines too small for the full plan, used where
// a measurement is about the hot threads themselves (bench_pipeline's
// latency family): it gives each hot thread a CPU of its own as far as the
// CPUs go, instead of falling back to shared halves.
//
//   - Where step 2 fits (a CPU per thread and Reserve kept), that plan.
//   - With exactly one CPU per thread, each thread gets its own and none is
//     kept: on 2 CPUs the producer and one stage each own a CPU.
//   - With fewer CPUs than threads (but at least 2), the threads first in
//     the rule's order (producer, I/O loops, stages, load generator) get the
//     highest CPUs, one each, and the rest share the lowest (Plan.Partial).
//
// In every case the process's other threads (the Go runtime's GC workers,
// sysmon, timers, every unpinned goroutine) are not pinned: they float over
// the whole allowed set, and where no CPU is kept they share the hot
// threads' CPUs. "Owns a CPU" therefore means that no other pinned thread of
// this process is placed there, not that nothing else runs there; Plan.Why
// says which threads shared what. With fewer than 2 CPUs nothing can be
// dedicated, and it is an error saying so.
func PlaceHot(allowed []int, need Need) (Plan, error) {
	cpus := slices.Compact(slices.Sorted(slices.Values(allowed)))
	if p, err := PlaceDedicated(cpus, need); err == nil {
		p.Why += "; the Go runtime's other threads float over " + affinity.FormatCPUList(cpus) +
			" (kept: " + affinity.FormatCPUList(p.Kept) + ")"
		return p, nil
	}
	want := need.threads()
	if want < 1 {
		return Plan{}, fmt.Errorf("placement: nothing asks for a CPU")
	}
	if len(cpus) < 2 {
		return Plan{}, fmt.Errorf("needs at least 2 CPUs to give a hot thread a CPU of its own (%d threads), this process may use %d (%s)",
			want, len(cpus), listOrNone(cpus))
	}
	// One CPU per thread in the rule's order: all of them when they fit,
	// else the highest len-1 to the first threads and the lowest shared.
	names := need.threadNames()
	assign := make([]int, want)
	owned := want
	if want > len(cpus) {
		owned = len(cpus) - 1
	}
	own := cpus[len(cpus)-owned:]
	for i := range assign {
		if i < owned {
			assign[i] = own[i]
		} else {
			assign[i] = cpus[0]
		}
	}
	p := Plan{Dedicated: owned == want, ProducerCPU: -1, Partial: owned < want}
	next := 0
	take := func(n int) []int {
		got := slices.Clone(assign[next : next+n])
		next += n
		return got
	}
	if need.Producer {
		p.ProducerCPU = take(1)[0]
	}
	p.IOCPUs = take(need.IOThreads)
	server := slices.Clone(p.IOCPUs)
	for _, n := range need.StageThreads {
		s := take(n)
		p.StageCPUs = append(p.StageCPUs, s)
		server = append(server, s...)
	}
	p.ServerCPUs = slices.Compact(slices.Sorted(slices.Values(server)))
	p.LoadCPUs = slices.Compact(slices.Sorted(slices.Values(take(need.LoadThreads))))
	var parts []string
	for i := range owned {
		parts = append(parts, fmt.Sprintf("%s on %d", names[i], assign[i]))
	}
	if p.Partial {
		p.Shared = slices.Clone(names[owned:])
		p.Why = fmt.Sprintf("partly dedicated cores (%d CPUs for %d threads): %s, each alone; %s share %d",
			len(cpus), want, strings.Join(parts, ", "), strings.Join(p.Shared, ", "), cpus[0])
	} else {
		p.Why = fmt.Sprintf("dedicated cores, none kept (%d CPUs for %d threads): %s, each alone",
			len(cpus), want, strings.Join(parts, ", "))
	}
	p.Why += "; the Go runtime's other threads float over " + affinity.FormatCPUList(cpus) + ", sharing the hot threads' CPUs"
	return p, nil
}

// PlaceHotOn is PlaceHot on a topology: where the full plan fits by
// physical cores, that plan (placement.PlaceDedicatedOn); otherwise
// PlaceHot over one hyper-thread of each core, so hot threads never share
// a core while there are cores to give; on a single core, its hyper-threads,
// and GaveUp says so.
func PlaceHotOn(topo procstat.Topology, need Need) (Plan, error) {
	if p, err := PlaceDedicatedOn(topo, need); err == nil {
		p.Why += "; the Go runtime's other threads float over the rest"
		return p, nil
	}
	cores := topo.Cores()
	if len(cores) >= 2 {
		reps := make([]int, len(cores))
		for i, c := range cores {
			reps[i] = c[0]
		}
		p, err := PlaceHot(reps, need)
		if err == nil {
			p.Threads = threadsOf(topo, blockOf(p, need), need)
		}
		return p, err
	}
	p, err := PlaceHot(coreOrder(topo), need)
	if err == nil {
		p.Threads = threadsOf(topo, blockOf(p, need), need)
		if topo.SMT() {
			p.GaveUp = append(p.GaveUp, "one physical core: the hot threads run on its sibling hyper-threads")
		}
	}
	return p, err
}

// blockOf lists a plan's thread CPUs in the rule's order (producer, I/O
// loops, stages, load generator; the load generator's only where each of
// its threads has one).
func blockOf(p Plan, need Need) []int {
	var block []int
	if p.ProducerCPU >= 0 {
		block = append(block, p.ProducerCPU)
	}
	block = append(block, p.IOCPUs...)
	for _, s := range p.StageCPUs {
		block = append(block, s...)
	}
	if len(p.LoadCPUs) == need.LoadThreads {
		block = append(block, p.LoadCPUs...)
	}
	return block
}

// threadNames names need's threads in the rule's order, for Plan.Why.
func (n Need) threadNames() []string {
	var names []string
	if n.Producer {
		names = append(names, "producer")
	}
	for i := range n.IOThreads {
		names = append(names, fmt.Sprintf("io %d", i))
	}
	for s, k := range n.StageThreads {
		for t := range k {
			if k == 1 {
				names = append(names, fmt.Sprintf("stage %d", s))
			} else {
				names = append(names, fmt.Sprintf("stage %d thread %d", s, t))
			}
		}
	}
	for i := range n.LoadThreads {
		names = append(names, fmt.Sprintf("load %d", i))
	}
	return names
}

func listOrNone(cpus []int) string {
	if len(cpus) == 0 {
		return "none"
	}
	return affinity.FormatCPUList(cpus)
}
