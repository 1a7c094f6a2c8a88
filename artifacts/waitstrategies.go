package artifacts

// The three pipeline wait strategies, in the order every table lists them.
var WaitStrategyNames = []string{"WaitIfStageEmpty", "WaitIfUpstreamIdle", "Never"}

// Values of WaitRun's enumerated fields.
const (
	BenchPipeline = "pipeline" // bench_pipeline's wait_strategy family
	BenchServer   = "server"   // weaseldb under load_tester

	CoresShared    = "shared"    // nothing pinned: every thread competes for every CPU
	CoresDedicated = "dedicated" // each hot thread pinned to a CPU of its own

	StatusMeasured = "measured"
	StatusSkipped  = "skipped" // the machine has too few CPUs (Reason says how many are needed)
	StatusFailed   = "failed"  // a command failed (Reason says which and why)
	// StatusUnreadable: the run was measured, but an artifact it left
	// cannot be read now (Reason names it and why); set by reports.LoadRun.
	StatusUnreadable = "unreadable"
)

// WaitStrategiesVersion is the version of wait_strategies.json.
const WaitStrategiesVersion = 1

// WaitStrategies is wait_strategies.json: `report wait-strategies` (run by
// scripts/compare_wait_strategies.sh) writes it; docs/wait_strategies.md
// documents every field.
type WaitStrategies struct {
	Version     int    `json:"version"`
	Note        string `json:"note,omitempty"`
	AllowedCPUs string `json:"allowed_cpus"` // the set the runs were planned from (kernel list format)
	// Topology is where the allowed CPUs sat (nil: not recorded).
	Topology *CPUTopology `json:"topology,omitempty"`
	// Simulated is true when AllowedCPUs was given on the command line
	// instead of read from sched_getaffinity (planning only, nothing runs).
	Simulated   bool    `json:"simulated,omitempty"`
	DurationS   float64 `json:"duration_s"`  // measured load per server run
	WarmupS     float64 `json:"warmup_s"`    // load before it, excluded from every figure
	IdleS       float64 `json:"idle_s"`      // idle CPU window after the load
	IdleConns   int     `json:"idle_conns"`  // keep-alive connections held open while idle
	Concurrency int     `json:"concurrency"` // load_tester connections
	// The sizes the runs were planned with (absent from files written
	// before they were recorded): the server's loops and release threads,
	// load_tester's network threads.
	IOThreads      int `json:"io_threads,omitempty"`
	ReleaseThreads int `json:"release_threads,omitempty"`
	LoadThreads    int `json:"load_threads,omitempty"`
	// RequestsPerConn: load_tester reconnected after that many requests
	// (absent: keep-alive for the whole run).
	RequestsPerConn int       `json:"requests_per_conn,omitempty"`
	Runs            []WaitRun `json:"runs"`
	// RateFractions: each measured server run is also loaded open-loop at
	// these fractions of its own closed-loop req/s (WaitRun.RateSteps).
	RateFractions []float64 `json:"rate_fractions,omitempty"`
	// PipelineLatency is bench_pipeline's latency family (`--families
	// latency`, LatencyArtifact in the run directory): hand-off latency per
	// strategy on dedicated and shared cores. LatencyReason says why it is
	// absent or partial (a failed run, dedicated cores not asked for).
	PipelineLatency []WaitLatency `json:"pipeline_latency,omitempty"`
	LatencyArtifact string        `json:"latency_artifact,omitempty"`
	LatencyReason   string        `json:"latency_reason,omitempty"`
	// LatencyClockReadNs is what one clock read cost in that run: it bounds
	// the resolution of every PipelineLatency figure.
	LatencyClockReadNs float64 `json:"latency_clock_read_ns,omitempty"`
}

// WaitLatency is one latency case of bench_pipeline on one kind of cores.
type WaitLatency struct {
	Impl     string `json:"impl"`     // "pipeline" or "channel"
	Strategy string `json:"strategy"` // a WaitStrategyNames entry, "-" for a channel
	Cores    string `json:"cores"`
	Kind     string `json:"kind"` // "one_way" (publish to pickup) or "round_trip" (ping-pong)
	Rate     string `json:"rate"` // "low" (the stage idle between items) or "saturation"
	Skipped  bool   `json:"skipped"`
	Reason   string `json:"reason,omitempty"`
	CPUPlan  string `json:"cpu_plan,omitempty"`
	// Measured cases: the percentiles in ns, and the process's CPU per item
	// (or round trip) over the case.
	Samples      int64   `json:"samples,omitempty"`
	P50Ns        int64   `json:"p50_ns,omitempty"`
	P99Ns        int64   `json:"p99_ns,omitempty"`
	P999Ns       int64   `json:"p999_ns,omitempty"`
	MaxNs        int64   `json:"max_ns,omitempty"`
	CPUNsPerItem float64 `json:"cpu_ns_per_item,omitempty"`
	Field        string  `json:"field,omitempty"` // the case in LatencyArtifact, e.g. "cases[3]"
}

// WaitRateStep is one open-loop step of a server run: load_tester at a
// fixed rate, a fraction of the run's closed-loop req/s, latency corrected
// for coordinated omission.
type WaitRateStep struct {
	Fraction     float64 `json:"fraction"`
	RateAsked    float64 `json:"rate_asked"`
	RateAchieved float64 `json:"rate_achieved"`
	P50Ns        int64   `json:"p50_ns"`
	P99Ns        int64   `json:"p99_ns"`
	P999Ns       int64   `json:"p999_ns"`
	MaxNs        int64   `json:"max_ns"`
	Unfinished   int64   `json:"unfinished,omitempty"`
	Dropped      int64   `json:"dropped,omitempty"`
	Errors       int64   `json:"errors,omitempty"`
	ClientBound  bool    `json:"client_bound,omitempty"`
}

// WaitRun is one strategy on one kind of cores, measured, skipped or failed.
// Optional figures are pointers: absent means not measured (bench_pipeline's
// wait_strategy family records no per-item latency, for instance: its
// latency family is WaitStrategies.PipelineLatency), never zero.
type WaitRun struct {
	Bench      string `json:"bench"`    // BenchPipeline or BenchServer
	Strategy   string `json:"strategy"` // one of WaitStrategyNames
	Cores      string `json:"cores"`    // CoresShared or CoresDedicated
	Status     string `json:"status"`
	Reason     string `json:"reason,omitempty"`
	CPUsNeeded int    `json:"cpus_needed,omitempty"` // allowed CPUs a dedicated run needs
	CPUPlan    string `json:"cpu_plan,omitempty"`    // which thread got which CPU
	// Placement is where each dedicated thread runs, a line a thread
	// ("io 0 cpu=5 core=5 node=1 idle=13": its CPU, physical core, NUMA
	// node and the core's hyper-threads left idle); PlacementGaveUp what
	// the machine could not give (a pipeline on one node).
	Placement       []string `json:"placement,omitempty"`
	PlacementGaveUp []string `json:"placement_gave_up,omitempty"`
	// IRQWarnings: network interrupts that may land on a dedicated CPU.
	IRQWarnings []string `json:"irq_warnings,omitempty"`
	Artifact    string   `json:"artifact,omitempty"` // the raw result in the run directory
	// Threads is the run's Placement (<name>.threads.json): its threads
	// read back from the kernel under load, and the server's loops.
	Threads string `json:"threads,omitempty"`

	Unit       string   `json:"unit,omitempty"`       // "req/s" or "items/s"
	Throughput *float64 `json:"throughput,omitempty"` // in Unit
	P50Ns      *float64 `json:"p50_ns,omitempty"`
	P99Ns      *float64 `json:"p99_ns,omitempty"`
	// CPUNsPerOp is the measured process's CPU (user+system, all threads)
	// per request (the server) or per item (bench_pipeline).
	CPUNsPerOp *float64 `json:"cpu_ns_per_op,omitempty"`
	// ClientCPUNsPerRequest is load_tester's own CPU per request.
	ClientCPUNsPerRequest *float64 `json:"client_cpu_ns_per_request,omitempty"`
	// IdleCoreFraction is the process's CPU while idle, in cores.
	IdleCoreFraction *float64 `json:"idle_core_fraction,omitempty"`
	Errors           int64    `json:"errors,omitempty"`
	// Unfinished and Dropped are the load result's requests that were due
	// and never answered: a run with either is not a clean sample.
	Unfinished  int64 `json:"unfinished,omitempty"`
	Dropped     int64 `json:"dropped,omitempty"`
	ClientBound bool  `json:"client_bound,omitempty"`
	GOMAXPROCS  int   `json:"gomaxprocs,omitempty"` // the server's, from its log
	// RateSteps: the server at fixed open-loop rates after the closed-loop
	// load (load_tester --rate-steps, RateStepsArtifact); RateStepsCPUNsPerRequest
	// is the server's CPU over all the steps (connecting, warm-up and drain
	// included, so a spinning strategy's waiting counts) per answered
	// request. RateStepsReason says why they are missing.
	RateSteps                []WaitRateStep `json:"rate_steps,omitempty"`
	RateStepsArtifact        string         `json:"rate_steps_artifact,omitempty"`
	RateStepsCPUNsPerRequest *float64       `json:"rate_steps_cpu_ns_per_request,omitempty"`
	RateStepsReason          string         `json:"rate_steps_reason,omitempty"`
}

// SkippedRuns lists the runs planned as skipped.
func (ws *WaitStrategies) SkippedRuns() []WaitRun {
	var out []WaitRun
	for _, r := range ws.Runs {
		if r.Status == StatusSkipped {
			out = append(out, r)
		}
	}
	return out
}
