package procstat

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"weaseldb/internal/affinity"
)

// The CPU topology comes from sysfs, read here by hand: procfs's sysfs
// package gives a CPU's core, package and thread siblings but neither its
// die, its cluster nor its NUMA node, and placement needs the node. Every
// file read is a one-line value or CPU list.

// SysRoot is where sysfs is mounted; tests read recorded trees instead.
const SysRoot = "/sys"

// CPUPlace is where one CPU sits in the machine.
type CPUPlace struct {
	CPU int
	// Core names the CPU's physical core machine-wide: the lowest CPU of
	// its hyper-threads (Siblings), whatever the process may use.
	Core     int
	Siblings []int // the core's hyper-threads, this CPU included, sorted
	// CoreID is core_id, the core's number within its package (and die):
	// packages repeat it, which is why Core is not it.
	CoreID  int
	Package int // physical_package_id (-1: unknown)
	Die     int // die_id (-1: unknown)
	Cluster int // cluster_id (-1: unknown or none)
	Node    int // NUMA node (0 where the kernel shows no nodes)
	// Capacity is cpu_capacity, the scheduler's measure of the core's
	// speed (1024 the fastest) on machines with cores of unequal speed
	// (big.LITTLE, hybrid); 0 where the kernel shows none.
	Capacity int
}

// Topology is where the CPUs a process may use sit.
type Topology struct {
	CPUs []CPUPlace // the allowed CPUs, by number
	// Flat: sysfs said nothing of the topology, and every CPU is taken for
	// a core of its own on node 0 (Note says what was missing).
	Flat bool
	Note string
	// NetIRQs are the network devices' interrupts, where the caller read
	// them (NetworkIRQs), so that a plan can say which may land on a CPU
	// it dedicates.
	NetIRQs []IRQ
}

// ReadTopology reads the topology of the allowed CPUs under sysRoot
// (SysRoot, or a recorded tree). A CPU without a topology directory makes
// the whole view flat, with a Note saying so: half a topology would plan
// worse than none.
func ReadTopology(sysRoot string, allowed []int) Topology {
	cpus := slices.Compact(slices.Sorted(slices.Values(allowed)))
	nodes, err := readNodes(sysRoot)
	if err != nil {
		return FlatTopology(cpus, err.Error())
	}
	t := Topology{}
	for _, cpu := range cpus {
		p, err := readCPUPlace(sysRoot, cpu)
		if err != nil {
			return FlatTopology(cpus, err.Error())
		}
		p.Node = nodes[cpu]
		t.CPUs = append(t.CPUs, p)
	}
	return t
}

// FlatTopology is the view without topology: each CPU its own core on
// node 0.
func FlatTopology(allowed []int, note string) Topology {
	t := Topology{Flat: true, Note: note}
	for _, cpu := range slices.Compact(slices.Sorted(slices.Values(allowed))) {
		t.CPUs = append(t.CPUs, CPUPlace{CPU: cpu, Core: cpu, Siblings: []int{cpu}, CoreID: -1, Package: -1, Die: -1, Cluster: -1})
	}
	return t
}

func readCPUPlace(sysRoot string, cpu int) (CPUPlace, error) {
	dir := filepath.Join(sysRoot, "devices/system/cpu", "cpu"+strconv.Itoa(cpu), "topology")
	siblings, err := readCPUList(filepath.Join(dir, "core_cpus_list"))
	if os.IsNotExist(err) { // kernels before 5.5 name it thread_siblings_list
		siblings, err = readCPUList(filepath.Join(dir, "thread_siblings_list"))
	}
	if err != nil {
		return CPUPlace{}, fmt.Errorf("no CPU topology in sysfs for CPU %d (%w): every CPU is taken for a core of its own, on one node", cpu, err)
	}
	if !slices.Contains(siblings, cpu) {
		siblings = slices.Sorted(slices.Values(append(siblings, cpu)))
	}
	return CPUPlace{CPU: cpu, Core: siblings[0], Siblings: siblings, CoreID: readID(filepath.Join(dir, "core_id")),
		Package: readID(filepath.Join(dir, "physical_package_id")), Die: readID(filepath.Join(dir, "die_id")),
		Cluster: readID(filepath.Join(dir, "cluster_id")), Capacity: max(0, readID(filepath.Join(dir, "..", "cpu_capacity")))}, nil
}

// readNodes maps each CPU to its NUMA node from node*/cpulist; a machine
// whose kernel shows no nodes has every CPU on node 0.
func readNodes(sysRoot string) (map[int]int, error) {
	paths, _ := filepath.Glob(filepath.Join(sysRoot, "devices/system/node/node*/cpulist"))
	nodes := map[int]int{}
	for _, path := range paths {
		n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(filepath.Dir(path)), "node"))
		if err != nil {
			continue
		}
		cpus, err := readCPUList(path)
		if err != nil {
			return nil, fmt.Errorf("NUMA node %d: %w", n, err)
		}
		for _, c := range cpus {
			nodes[c] = n
		}
	}
	return nodes, nil
}

func readCPUList(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return nil, nil
	}
	cpus, err := affinity.ParseCPUList(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cpus, nil
}

// readID reads a one-number file; -1 when it is missing or not a number
// (cluster_id is 65535 on machines without clusters, kept as it is: every
// CPU then has the same one).
func readID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return n
}

// Cores groups the allowed CPUs by physical core, cores in order of their
// number, each core's CPUs sorted.
func (t Topology) Cores() [][]int {
	byCore := map[int][]int{}
	var order []int
	for _, p := range t.CPUs {
		if _, ok := byCore[p.Core]; !ok {
			order = append(order, p.Core)
		}
		byCore[p.Core] = append(byCore[p.Core], p.CPU)
	}
	slices.Sort(order)
	out := make([][]int, len(order))
	for i, c := range order {
		out[i] = byCore[c]
	}
	return out
}

// Place is cpu's place (ok false for a CPU not in t).
func (t Topology) Place(cpu int) (CPUPlace, bool) {
	i, ok := slices.BinarySearchFunc(t.CPUs, cpu, func(p CPUPlace, c int) int { return p.CPU - c })
	if !ok {
		return CPUPlace{}, false
	}
	return t.CPUs[i], true
}

// SMT tells whether any allowed CPU shares its physical core with
// another CPU of the machine.
func (t Topology) SMT() bool {
	for _, p := range t.CPUs {
		if len(p.Siblings) > 1 {
			return true
		}
	}
	return false
}

// Nodes lists the NUMA nodes of the allowed CPUs, in order.
func (t Topology) Nodes() []int {
	var nodes []int
	for _, p := range t.CPUs {
		nodes = append(nodes, p.Node)
	}
	return slices.Compact(slices.Sorted(slices.Values(nodes)))
}
