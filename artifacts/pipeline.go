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
}

// PipelineIdle is the CPU a pipeline used while it had nothing to do.
type PipelineIdle struct {
	Strategy     string  `json:"strategy"`
	CoreFraction float64 `json:"core_fraction"`
	Seconds      float64 `json:"seconds"`
}
