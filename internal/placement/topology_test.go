package placement

import (
	"slices"
	"strings"
	"testing"

	"weaseldb/internal/procstat"
)

// machine builds a topology: coresPerNode[i] cores on node i, threads
// hyper-threads a core, numbered as Linux does on Intel (the first threads
// of every core, then their siblings).
func machine(threads int, coresPerNode ...int) procstat.Topology {
	total := 0
	for _, n := range coresPerNode {
		total += n
	}
	var t procstat.Topology
	core := 0
	for node, n := range coresPerNode {
		for range n {
			var sibs []int
			for h := range threads {
				sibs = append(sibs, core+h*total)
			}
			for _, cpu := range sibs {
				t.CPUs = append(t.CPUs, procstat.CPUPlace{CPU: cpu, Core: core, Siblings: sibs, Node: node})
			}
			core++
		}
	}
	slices.SortFunc(t.CPUs, func(a, b procstat.CPUPlace) int { return a.CPU - b.CPU })
	return t
}

func TestPlaceOnTopology(t *testing.T) {
	fitted := Need{IOThreads: 1, StageThreads: []int{1, 1, 1, 1}, LoadThreads: 2}
	bench := Need{Producer: true, StageThreads: []int{1, 1, 1}}
	cases := []struct {
		name      string
		topo      procstat.Topology
		need      Need
		dedicated bool
		server    []int // the server's threads' CPUs (producer, loops, stages)
		node      int   // every server thread's node (-1: they may span)
		gaveUp    string
	}{
		{"2 sockets, SMT: a benchmark's 4 threads on node 1", machine(2, 4, 4), bench, true, []int{4, 5, 6, 7}, 1, ""},
		{"2 sockets, SMT: 5 server threads, 4 cores a node", machine(2, 4, 4), fitted, true, nil, -1, "no NUMA node has 5 free physical cores"},
		{"uneven nodes: the server on the one with room", machine(2, 2, 6), fitted, true, []int{3, 4, 5, 6, 7}, 1, ""},
		{"room only on node 0", machine(2, 7, 2), Need{IOThreads: 1, StageThreads: []int{1, 1, 1, 1}, LoadThreads: 1}, true, []int{2, 3, 4, 5, 6}, 0, ""},
		{"SMT desktop: 4 cores, 8 threads, too few cores", machine(2, 4), fitted, false, nil, -1, "not dedicated: 4 physical cores for 7 threads"},
		{"no SMT, one node: the flat rule", machine(1, 8), fitted, true, []int{1, 2, 3, 4, 5}, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := PlaceOn(c.topo, c.need)
			if p.Dedicated != c.dedicated {
				t.Fatalf("dedicated %v, want %v (%s)", p.Dedicated, c.dedicated, p.Why)
			}
			gave := strings.Join(p.GaveUp, "; ")
			if (c.gaveUp == "") != (gave == "") || !strings.Contains(gave, c.gaveUp) {
				t.Errorf("gave up %q, want %q", gave, c.gaveUp)
			}
			if !p.Dedicated {
				return
			}
			checkOneCorePerThread(t, c.topo, p)
			server := p.ServerCPUs
			if p.ProducerCPU >= 0 {
				server = append([]int{p.ProducerCPU}, server...)
			}
			if c.server != nil && !slices.Equal(server, c.server) {
				t.Errorf("server threads on %v, want %v (%s)", server, c.server, p.Why)
			}
			if c.node >= 0 {
				for _, cpu := range server {
					if pl, _ := c.topo.Place(cpu); pl.Node != c.node {
						t.Errorf("server thread on CPU %d, node %d; want node %d", cpu, pl.Node, c.node)
					}
				}
			}
		})
	}
}

// checkOneCorePerThread: no two threads of p share a physical core, each
// thread's siblings are idle and nothing else of the plan uses them.
func checkOneCorePerThread(t *testing.T, topo procstat.Topology, p Plan) {
	t.Helper()
	cores := map[int]string{}
	for _, th := range p.Threads {
		pl, _ := topo.Place(th.CPU)
		if other, ok := cores[pl.Core]; ok {
			t.Errorf("%s and %s share physical core %d", th.Name, other, pl.Core)
		}
		cores[pl.Core] = th.Name
		for _, s := range th.Idle {
			if slices.Contains(p.Kept, s) {
				t.Errorf("%s's sibling %d is also kept for the rest", th.Name, s)
			}
		}
	}
	if len(p.Threads) != p.threadsPlaced() {
		t.Errorf("%d thread lines for %d threads placed", len(p.Threads), p.threadsPlaced())
	}
}

func (p Plan) threadsPlaced() int {
	n := len(p.IOCPUs) + len(p.LoadCPUs)
	if p.ProducerCPU >= 0 {
		n++
	}
	for _, s := range p.StageCPUs {
		n += len(s)
	}
	return n
}

// A flat topology plans as Place always has, CPU for CPU.
func TestPlaceOnFlatIsPlace(t *testing.T) {
	for _, n := range []int{2, 3, 7, 8, 16, 64} {
		allowed := make([]int, n)
		for i := range allowed {
			allowed[i] = i
		}
		need := Fit(allowed)
		flat := PlaceOn(procstat.FlatTopology(allowed, ""), need)
		if flat.Dedicated != (n >= 7) {
			t.Errorf("%d CPUs: dedicated %v", n, flat.Dedicated)
		}
		if flat.Dedicated && len(flat.Idle) != 0 {
			t.Errorf("%d CPUs: flat plan leaves %v idle", n, flat.Idle)
		}
	}
}

// Threads print as bench_pipeline --print-plan's lines.
func TestThreadString(t *testing.T) {
	p := PlaceOn(machine(2, 4, 4), Need{Producer: true, StageThreads: []int{1, 1, 1}})
	var lines []string
	for _, th := range p.Threads {
		lines = append(lines, th.String())
	}
	want := "producer cpu=4 core=4 node=1 idle=12"
	if len(lines) != 4 || lines[0] != want {
		t.Errorf("lines %q, want 4, the first %q", lines, want)
	}
}

func TestFitOnCountsCores(t *testing.T) {
	if got, want := FitOn(machine(2, 4, 4)), fitCores(8); got.IOThreads != want.IOThreads || got.LoadThreads != want.LoadThreads {
		t.Errorf("FitOn of 8 cores, 16 threads: %+v, want %+v", got, want)
	}
}
