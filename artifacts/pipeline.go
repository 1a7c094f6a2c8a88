package artifacts

// PipelineBench (with PipelineCase and PipelineIdle) is bench_pipeline's
// --json schema (docs/CONTRACTS.md), PipelineBenchFile in a report's run
// directory. It lives here, not in the command, so the writer
// (cmd/bench_pipeline) and the readers (reports, bench) share one definition
// and a schema change breaks their build instead of their parsing. Fields
// beyond the contract's are extra.
type PipelineBench struct {
	Version    int            `json:"version"`
	Quick      bool           `json:"quick"`
	GOMAXPROCS int            `json:"gomaxprocs"`
	NumCPU     int            `json:"num_cpu"`
	GoVersion  string         `json:"go_version"`
	CPUs       []int          `json:"cpus"`
	Cases      []PipelineCase `json:"cases"`
	Idle       []PipelineIdle `json:"idle"`
	// Clock: the latency family's clock cost (absent without that family).
	Clock *PipelineClock `json:"clock,omitempty"`
}

// PipelineCase is one measured case.
type PipelineCase struct {
	Family       string  `json:"family"`
	Name         string  `json:"name"`
	Impl         string  `json:"impl"`
	Strategy     string  `json:"strategy"`
	Stages       int     `json:"stages"`
	Batch        int     `json:"batch"`
	SpinIters    int     `json:"spin_iters"`
	NsPerItem    float64 `json:"ns_per_item"`
	ItemsPerSec  float64 `json:"items_per_sec"`
	CPUNsPerItem float64 `json:"cpu_ns_per_item"`
	NsPerItemMin float64 `json:"ns_per_item_min"`
	NsPerItemMax float64 `json:"ns_per_item_max"`
	RatioToFirst float64 `json:"ratio_to_first"`
	Items        int     `json:"items"`
	Runs         int     `json:"runs"`
	SlotCount    int     `json:"slot_count"`
	// Cores is "dedicated" (each hot thread pinned to a CPU of its own) or
	// "shared" (nothing pinned); Skipped is true for a case not measured
	// (SkipReason says why; no figures then). CPUPlan says what ran where
	// and what shared what; CaseGOMAXPROCS is the case's own GOMAXPROCS
	// where the run sets one per case (the latency family).
	Cores          string `json:"cores"`
	Skipped        bool   `json:"skipped"`
	SkipReason     string `json:"skip_reason,omitempty"`
	CPUPlan        string `json:"cpu_plan,omitempty"`
	CaseGOMAXPROCS int    `json:"case_gomaxprocs,omitempty"`
	// The latency family's: Kind "one_way" or "round_trip", Rate "low" (an
	// item every IntervalNs, the stage idle between) or "saturation";
	// Truncated when the case's time limit ended it before its samples.
	Kind             string           `json:"kind,omitempty"`
	Rate             string           `json:"rate,omitempty"`
	IntervalNs       int64            `json:"interval_ns,omitempty"`
	Truncated        bool             `json:"truncated,omitempty"`
	HandoffLatencyNs *PipelineLatency `json:"handoff_latency_ns,omitempty"`
}

// PipelineIdle is the CPU a pipeline used while it had nothing to do.
type PipelineIdle struct {
	Strategy     string  `json:"strategy"`
	CoreFraction float64 `json:"core_fraction"`
	Seconds      float64 `json:"seconds"`
}
