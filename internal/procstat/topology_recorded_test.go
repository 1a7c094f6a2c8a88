package procstat

import (
	"path/filepath"
	"slices"
	"testing"
)

// recordedSysfs is a sysfs tree under testdata/sysfs (testdata/sysfs/README.md
// says where each comes from).
func recordedSysfs(name string) string { return filepath.Join("testdata", "sysfs", name) }

// TestReadRecordedTopology reads each recorded tree as a process allowed on
// its online CPUs (or on part of them) would.
func TestReadRecordedTopology(t *testing.T) {
	cases := []struct {
		tree    string
		allowed []int
		cores   int   // physical cores among the allowed CPUs
		nodes   []int // their NUMA nodes
		smt     bool
		flat    bool
		place   CPUPlace // one CPU's place, checked field by field (CPU -1: none)
	}{
		{"dev-vm-2cpu", seq(2), 2, []int{0}, false, false,
			CPUPlace{CPU: 1, Core: 1, Siblings: []int{1}, CoreID: 1, Package: 0, Die: 0, Cluster: 65535, Node: 0}},
		{"server-2s-smt", seq(32), 16, []int{0, 1}, true, false,
			// core_id 8 is the sixth core of package 1: CPU 13 and its sibling 29
			CPUPlace{CPU: 29, Core: 13, Siblings: []int{13, 29}, CoreID: 8, Package: 1, Die: 0, Cluster: 65535, Node: 1}},
		{"server-2s-smt", []int{8, 9, 10, 24, 25}, 3, []int{1}, true, false,
			CPUPlace{CPU: 10, Core: 10, Siblings: []int{10, 26}, CoreID: 2, Package: 1, Die: 0, Cluster: 65535, Node: 1}},
		{"desktop-smt", seq(16), 8, []int{0}, true, false,
			CPUPlace{CPU: 7, Core: 6, Siblings: []int{6, 7}, CoreID: 3, Package: 0, Die: 0, Cluster: 65535, Node: 0}},
		{"vm-nosmt", seq(4), 4, []int{0}, false, false,
			CPUPlace{CPU: 3, Core: 3, Siblings: []int{3}, CoreID: 3, Package: 0, Die: 0, Cluster: 65535, Node: 0}},
		{"offline-old-kernel", []int{0, 1, 2, 4, 5}, 3, []int{0}, true, false,
			// CPU 6 is offline: CPU 2's core has one thread left; no die_id
			// or cluster_id before 5.x
			CPUPlace{CPU: 2, Core: 2, Siblings: []int{2}, CoreID: 2, Package: 0, Die: -1, Cluster: -1, Node: 0}},
		{"biglittle", seq(8), 8, []int{0}, false, false,
			CPUPlace{CPU: 5, Core: 5, Siblings: []int{5}, CoreID: 1, Package: 0, Die: 0, Cluster: 1, Node: 0, Capacity: 1024}},
		{"no-topology", seq(4), 4, []int{0}, false, true, CPUPlace{CPU: -1}},
	}
	for _, c := range cases {
		t.Run(c.tree, func(t *testing.T) {
			topo := ReadTopology(recordedSysfs(c.tree), c.allowed)
			if topo.Flat != c.flat || (c.flat && topo.Note == "") {
				t.Fatalf("flat %v (note %q), want %v with a note", topo.Flat, topo.Note, c.flat)
			}
			if len(topo.CPUs) != len(c.allowed) {
				t.Errorf("%d CPUs read, want the %d allowed", len(topo.CPUs), len(c.allowed))
			}
			if got := len(topo.Cores()); got != c.cores {
				t.Errorf("%d physical cores, want %d (%v)", got, c.cores, topo.Cores())
			}
			if got := topo.Nodes(); !slices.Equal(got, c.nodes) {
				t.Errorf("nodes %v, want %v", got, c.nodes)
			}
			if topo.SMT() != c.smt {
				t.Errorf("SMT %v, want %v", topo.SMT(), c.smt)
			}
			if c.place.CPU < 0 {
				return
			}
			got, ok := topo.Place(c.place.CPU)
			if !ok || !equalPlace(got, c.place) {
				t.Errorf("CPU %d: %+v (ok %v), want %+v", c.place.CPU, got, ok, c.place)
			}
		})
	}
}

func equalPlace(a, b CPUPlace) bool {
	return a.CPU == b.CPU && a.Core == b.Core && slices.Equal(a.Siblings, b.Siblings) && a.CoreID == b.CoreID &&
		a.Package == b.Package && a.Die == b.Die && a.Cluster == b.Cluster && a.Node == b.Node && a.Capacity == b.Capacity
}
