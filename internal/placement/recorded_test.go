package placement

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"weaseldb/internal/procstat"
)

// The planner on the recorded sysfs trees of internal/procstat/testdata
// (its README says what each is), read as a process allowed on all their
// online CPUs would read them.
func TestPlaceOnRecordedTrees(t *testing.T) {
	bench := Need{Producer: true, StageThreads: []int{1, 1, 1}}
	latency := Need{Producer: true, StageThreads: []int{1}}
	fitted := Need{IOThreads: 1, StageThreads: []int{1, 1, 1, 1}, LoadThreads: 2}
	cases := []struct {
		tree      string
		allowed   []int
		need      Need
		dedicated bool
		threads   string // "CPU:core:node:idle" per thread, in the rule's order
		gaveUp    string // a part of Plan.GaveUp ("": none)
	}{
		{"dev-vm-2cpu", seq(2), latency, false, "", ""},
		{"server-2s-smt", seq(32), bench, true, "12:12:1:28 13:13:1:29 14:14:1:30 15:15:1:31", ""},
		{"server-2s-smt", seq(32), Need{IOThreads: 2, StageThreads: []int{1, 1, 1, 1}, LoadThreads: 2}, true,
			"10:10:1:26 11:11:1:27 12:12:1:28 13:13:1:29 14:14:1:30 15:15:1:31 8:8:1:24 9:9:1:25", ""},
		// 9 server threads: no node of 8 cores holds them
		{"server-2s-smt", seq(32), Need{IOThreads: 5, StageThreads: []int{1, 1, 1, 1}, LoadThreads: 6}, true, "", "no NUMA node has 9 free physical cores"},
		{"desktop-smt", seq(16), fitted, true, "2:2:0:3 4:4:0:5 6:6:0:7 8:8:0:9 10:10:0:11 12:12:0:13 14:14:0:15", ""},
		{"desktop-smt", seq(16), Need{IOThreads: 4, StageThreads: []int{1, 1, 1, 1}, LoadThreads: 2}, false, "", "not dedicated: 8 physical cores for 10 threads"},
		{"vm-nosmt", seq(4), latency, true, "2:2:0: 3:3:0:", ""},
		{"vm-nosmt", seq(4), bench, false, "", ""},
		{"offline-old-kernel", []int{0, 1, 2, 4, 5}, latency, true, "1:1:0:5 2:2:0:", ""},
		{"biglittle", seq(8), bench, true, "4:4:0: 5:5:0: 6:6:0: 7:7:0:", ""},
		// 5 server threads, 4 big cores: the highest little core joins them
		{"biglittle", seq(8), fitted, true, "3:3:0: 4:4:0: 5:5:0: 6:6:0: 7:7:0: 1:1:0: 2:2:0:",
			"so io 0 on CPU 3 (446), load 0 on CPU 1 (446), load 1 on CPU 2 (446) run on slower ones"},
		{"no-topology", seq(4), latency, true, "2:2:0: 3:3:0:", ""},
	}
	for _, c := range cases {
		t.Run(c.tree, func(t *testing.T) {
			topo := procstat.ReadTopology(filepath.Join("..", "procstat", "testdata", "sysfs", c.tree), c.allowed)
			p := PlaceOn(topo, c.need)
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
			checkOneCorePerThread(t, topo, p)
			checkServerOnOneNode(t, topo, p)
			if c.threads != "" {
				if got := threadPlaces(p); got != c.threads {
					t.Errorf("threads %q, want %q (%s)", got, c.threads, p.Why)
				}
			}
		})
	}
}

// checkServerOnOneNode: the server's threads (producer, loops, stages) sit
// on one node unless the plan gave that up.
func checkServerOnOneNode(t *testing.T, topo procstat.Topology, p Plan) {
	t.Helper()
	if slices.ContainsFunc(p.GaveUp, func(s string) bool { return strings.Contains(s, "node") }) {
		return
	}
	nodes := map[int]bool{}
	for _, th := range p.Threads {
		if !strings.HasPrefix(th.Name, "load") {
			nodes[th.Node] = true
		}
	}
	if len(nodes) > 1 {
		t.Errorf("the server's threads span nodes %v and the plan gave up nothing: %s", nodes, p.Why)
	}
}

func threadPlaces(p Plan) string {
	var parts []string
	for _, th := range p.Threads {
		idle := ""
		for i, s := range th.Idle {
			if i > 0 {
				idle += ","
			}
			idle += itoa(s)
		}
		parts = append(parts, itoa(th.CPU)+":"+itoa(th.Core)+":"+itoa(th.Node)+":"+idle)
	}
	return strings.Join(parts, " ")
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
