package artifacts

// CPUTopology is where a run's allowed CPUs sat (procstat.ReadTopology),
// recorded beside the plans made from it, so that a check or a re-plan
// reads the run, not the machine it is read on. Absent from files of runs
// before it was recorded: those plans took every CPU for a core.
type CPUTopology struct {
	Flat bool          `json:"flat,omitempty"` // sysfs said nothing: every CPU its own core, one node
	Note string        `json:"note,omitempty"` // why it is flat
	CPUs []TopologyCPU `json:"cpus"`
}

// TopologyCPU is one allowed CPU's place.
type TopologyCPU struct {
	CPU      int   `json:"cpu"`
	Core     int   `json:"core"` // the lowest CPU of its hyper-threads: a physical core's name
	Node     int   `json:"node"`
	Siblings []int `json:"siblings"` // its core's hyper-threads, itself included
	// Capacity is cpu_capacity where cores differ in speed (omitted: none
	// shown); a re-plan from the record needs it to choose as the run did.
	Capacity int `json:"capacity,omitempty"`
}
