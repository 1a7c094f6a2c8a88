package procstat

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// sysCPU is one CPU of a recorded sysfs tree.
type sysCPU struct {
	siblings                string // core_cpus_list
	pkg, die, cluster, node int
	oldKernel               bool // thread_siblings_list only (before 5.5)
	noTopology              bool
}

// writeSysfs records a sysfs tree: cpu/cpuN/topology/* and
// node/nodeN/cpulist (nodes only when withNodes).
func writeSysfs(t *testing.T, cpus map[int]sysCPU, withNodes bool) string {
	t.Helper()
	root := t.TempDir()
	write := func(path, value string) {
		t.Helper()
		full := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(value+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	nodes := map[int][]string{}
	for n, c := range cpus {
		dir := "devices/system/cpu/cpu" + strconv.Itoa(n) + "/"
		if c.noTopology {
			write(dir+"online", "1")
			continue
		}
		dir += "topology/"
		if c.oldKernel {
			write(dir+"thread_siblings_list", c.siblings)
		} else {
			write(dir+"core_cpus_list", c.siblings)
			write(dir+"thread_siblings_list", c.siblings)
			write(dir+"die_id", strconv.Itoa(c.die))
			write(dir+"cluster_id", strconv.Itoa(c.cluster))
		}
		write(dir+"physical_package_id", strconv.Itoa(c.pkg))
		nodes[c.node] = append(nodes[c.node], strconv.Itoa(n))
	}
	if withNodes {
		for n, list := range nodes {
			write("devices/system/node/node"+strconv.Itoa(n)+"/cpulist", strings.Join(list, ","))
		}
	}
	return root
}

// TwoSocketSMT is a 2-socket server, 4 cores a socket, 2 threads a core,
// numbered as Linux does on Intel: the first threads of every core, then
// their siblings (CPU 8 is CPU 0's); a node per socket.
func twoSocketSMT() map[int]sysCPU {
	cpus := map[int]sysCPU{}
	for c := range 8 {
		pkg := c / 4
		sib := strconv.Itoa(c) + "," + strconv.Itoa(c+8)
		cpus[c] = sysCPU{siblings: sib, pkg: pkg, cluster: c, node: pkg}
		cpus[c+8] = sysCPU{siblings: sib, pkg: pkg, cluster: c, node: pkg}
	}
	return cpus
}

func TestReadTopology(t *testing.T) {
	desktop := map[int]sysCPU{} // one socket, 4 cores, adjacent siblings (AMD's numbering)
	for c := range 8 {
		first := c - c%2
		desktop[c] = sysCPU{siblings: strconv.Itoa(first) + "-" + strconv.Itoa(first+1), cluster: 65535}
	}
	vm := map[int]sysCPU{0: {siblings: "0"}, 1: {siblings: "1"}, 2: {siblings: "2"}, 3: {siblings: "3"}}
	offline := map[int]sysCPU{0: {siblings: "0,4", oldKernel: true}, 1: {siblings: "1,5", oldKernel: true},
		2: {siblings: "2,6", oldKernel: true}, 4: {siblings: "0,4", oldKernel: true}, 5: {siblings: "1,5", oldKernel: true},
		6: {siblings: "2,6", oldKernel: true}}
	bigLittle := map[int]sysCPU{}
	for c := range 8 {
		bigLittle[c] = sysCPU{siblings: strconv.Itoa(c), cluster: c / 4}
	}
	noTopology := map[int]sysCPU{0: {siblings: "0"}, 1: {noTopology: true}}

	cases := []struct {
		name      string
		cpus      map[int]sysCPU
		nodes     bool
		allowed   []int
		cores     [][]int
		nodesWant []int
		smt, flat bool
	}{
		{"2-socket SMT server", twoSocketSMT(), true, seq(16),
			[][]int{{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14}, {7, 15}}, []int{0, 1}, true, false},
		{"2-socket SMT server, half allowed", twoSocketSMT(), true, []int{4, 5, 6, 7, 12, 13},
			[][]int{{4, 12}, {5, 13}, {6}, {7}}, []int{1}, true, false},
		{"SMT desktop", desktop, false, seq(8), [][]int{{0, 1}, {2, 3}, {4, 5}, {6, 7}}, []int{0}, true, false},
		{"VM without SMT or nodes", vm, false, seq(4), [][]int{{0}, {1}, {2}, {3}}, []int{0}, false, false},
		{"offline CPUs, an old kernel", offline, true, []int{0, 1, 2, 4, 5, 6}, [][]int{{0, 4}, {1, 5}, {2, 6}}, []int{0}, true, false},
		{"big.LITTLE clusters", bigLittle, false, seq(8), [][]int{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}, []int{0}, false, false},
		{"no topology: flat", noTopology, false, seq(2), [][]int{{0}, {1}}, []int{0}, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			topo := ReadTopology(writeSysfs(t, c.cpus, c.nodes), c.allowed)
			if topo.Flat != c.flat || (c.flat && topo.Note == "") {
				t.Fatalf("flat %v (note %q), want %v with a note", topo.Flat, topo.Note, c.flat)
			}
			if got := topo.Cores(); !equalNested(got, c.cores) {
				t.Errorf("cores %v, want %v", got, c.cores)
			}
			if got := topo.Nodes(); !slices.Equal(got, c.nodesWant) {
				t.Errorf("nodes %v, want %v", got, c.nodesWant)
			}
			if topo.SMT() != c.smt {
				t.Errorf("SMT %v, want %v", topo.SMT(), c.smt)
			}
		})
	}
}

func TestTopologyPlaceFields(t *testing.T) {
	bigLittle := map[int]sysCPU{}
	for c := range 8 {
		bigLittle[c] = sysCPU{siblings: strconv.Itoa(c), cluster: c / 4, die: 0, pkg: 0}
	}
	topo := ReadTopology(writeSysfs(t, bigLittle, false), seq(8))
	p, ok := topo.Place(5)
	if !ok || p.Cluster != 1 || p.Package != 0 || p.Die != 0 || p.Core != 5 {
		t.Errorf("CPU 5: %+v (ok %v), want cluster 1, package 0, die 0, core 5", p, ok)
	}
	if _, ok := topo.Place(9); ok {
		t.Error("CPU 9 is not allowed, yet placed")
	}
	server := ReadTopology(writeSysfs(t, twoSocketSMT(), true), seq(16))
	if p, _ := server.Place(13); p.Node != 1 || p.Core != 5 || !slices.Equal(p.Siblings, []int{5, 13}) {
		t.Errorf("CPU 13: %+v, want node 1, core 5, siblings 5,13", p)
	}
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func equalNested(a, b [][]int) bool {
	return slices.EqualFunc(a, b, func(x, y []int) bool { return slices.Equal(x, y) })
}
