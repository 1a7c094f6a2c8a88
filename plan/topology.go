package plan

import (
	"weaseldb/artifacts"
	"weaseldb/internal/procstat"
)

// RecordTopology is the artifacts' record of a topology.
func RecordTopology(t procstat.Topology) *artifacts.CPUTopology {
	rec := &artifacts.CPUTopology{Flat: t.Flat, Note: t.Note}
	for _, c := range t.CPUs {
		rec.CPUs = append(rec.CPUs, artifacts.TopologyCPU{CPU: c.CPU, Core: c.Core, Node: c.Node, Siblings: c.Siblings, Capacity: c.Capacity})
	}
	return rec
}

// TopologyOf is the topology a run recorded; a run that recorded none
// planned every CPU as a core of its own (flat, over allowed).
func TopologyOf(rec *artifacts.CPUTopology, allowed []int) procstat.Topology {
	if rec == nil {
		return procstat.FlatTopology(allowed, "no topology recorded")
	}
	t := procstat.Topology{Flat: rec.Flat, Note: rec.Note}
	for _, c := range rec.CPUs {
		t.CPUs = append(t.CPUs, procstat.CPUPlace{CPU: c.CPU, Core: c.Core, Node: c.Node, Siblings: c.Siblings, CoreID: -1,
			Package: -1, Die: -1, Cluster: -1, Capacity: c.Capacity})
	}
	return t
}
