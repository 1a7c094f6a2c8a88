package artifacts

import "slices"

// SetupsFile is the run directory's record of the two setups and their
// rounds, written by `report setups` (package bench).
const SetupsFile = "setups.json"

// SetupsVersion is the version of setups.json.
const SetupsVersion = 1

// The setups' names, the prefix of every artifact of theirs.
const (
	SetupSeed   = "seed"
	SetupFitted = "fitted"
)

// Setups is setups.json: what ran, in which order, and where each run's
// artifacts are. Figures are not copied here: the report reads them from the
// artifacts each run names.
type Setups struct {
	Version     int    `json:"version"`
	AllowedCPUs string `json:"allowed_cpus"` // sched_getaffinity at the start, kernel list format
	// Topology is where the allowed CPUs sat (nil: not recorded).
	Topology  *CPUTopology `json:"topology,omitempty"`
	Rounds    int          `json:"rounds"`
	DurationS float64      `json:"duration_s"` // measured load per run
	WarmupS   float64      `json:"warmup_s"`   // load before it, excluded from every figure
	IdleS     float64      `json:"idle_s"`     // idle CPU window after the last round's load
	IdleConns int          `json:"idle_conns"` // keep-alive connections held open while idle
	// The spin work: bench_cpu_work times WorkIterations (the server's
	// ok_resolve_iterations) and calibrates WorkTargetNs, once a round.
	WorkIterations int     `json:"work_iterations"`
	WorkTargetNs   float64 `json:"work_target_ns"`
	Setups         []Setup `json:"setups"` // the seed's, then the fitted one
	// Runs are in the order they ran; Calibrations one per round.
	Runs         []SetupRun       `json:"runs"`
	Calibrations []CalibrationRun `json:"calibrations"`
}

// Setup is one way of running the server and the load tester.
type Setup struct {
	Name           string `json:"name"`  // SetupSeed or SetupFitted
	Title          string `json:"title"` // how the report names it
	IOThreads      int    `json:"io_threads"`
	ReleaseThreads int    `json:"release_threads"`
	WaitStrategy   string `json:"wait_strategy"`
	OkIterations   int    `json:"ok_resolve_iterations"`
	// The load tester's side: network threads, connect threads, connections
	// and requests per connection before it reconnects (0: never).
	LoadThreads     int `json:"load_threads"`
	ConnectThreads  int `json:"connect_threads"`
	Connections     int `json:"connections"`
	RequestsPerConn int `json:"requests_per_conn"`
	// Cores is CoresShared (nothing pinned) or CoresDedicated (every hot
	// thread on a CPU of its own, as CPUPlan says).
	Cores        string  `json:"cores"`
	IOCPUs       []int   `json:"io_cpus,omitempty"`
	PipelineCPUs [][]int `json:"pipeline_cpus,omitempty"`
	LoadCPUs     []int   `json:"load_cpus,omitempty"`
	CPUPlan      string  `json:"cpu_plan,omitempty"`
	// Placement and PlacementGaveUp: as WaitRun's, for a dedicated setup.
	Placement       []string `json:"placement,omitempty"`
	PlacementGaveUp []string `json:"placement_gave_up,omitempty"`
	// IRQWarnings: network interrupts that may land on a dedicated CPU.
	IRQWarnings []string `json:"irq_warnings,omitempty"`
	Config      string   `json:"config"` // the server's config file in the run directory
	Why         string   `json:"why"`    // the rule that chose it, as applied
}

// SetupRun is one run of one setup: a fresh server, the load, the samples.
type SetupRun struct {
	Setup  string `json:"setup"`
	Round  int    `json:"round"` // from 1
	Order  int    `json:"order"` // 1: first in its round, 2: second
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	Load   string `json:"load,omitempty"`    // load_tester --json
	HdrLog string `json:"hdr_log,omitempty"` // load_tester --hdr-log
	Sample string `json:"sample,omitempty"`  // what the runner measured of the server (ServerSample)
	// Threads names the run's Threads file (<name>.threads.json): its threads read back from the
	// kernel under load, and the server's loops.
	Threads string `json:"threads,omitempty"`
}

// CalibrationRun is one round's bench_cpu_work pair: the timed count and the
// calibration for the target.
type CalibrationRun struct {
	Round  int    `json:"round"`
	Status string `json:"status"` // StatusMeasured, or StatusFailed with Reason
	Reason string `json:"reason,omitempty"`
	Timed  string `json:"timed,omitempty"`  // bench_cpu_work WorkIterations --json
	Target string `json:"target,omitempty"` // bench_cpu_work --target --json
}

// ServerSample is what the runner measured of the server during one run
// (rounds/<setup>-r<round>.sample.json).
type ServerSample struct {
	Version int `json:"version"`
	// Loaded is the server's CPU over the measured window less half a
	// second at each end, with the whole machine's beside it.
	Loaded CPUSample `json:"loaded"`
	// StageBusy is each commit stage's busy share of the window (its
	// weaseldb_pipeline_stage_busy_seconds_total over the wall time
	// between two /metrics scrapes around the window): 1 is busy all the
	// time. Busy is wall time spent processing, preemption included.
	StageBusy        map[string]float64 `json:"stage_busy,omitempty"`
	StageBusyWindowS float64            `json:"stage_busy_window_s,omitempty"`
	// StageWait is each commit stage's wait histogram over the same
	// window, by stage name (absent from a server without
	// weaseldb_pipeline_stage_wait_seconds).
	StageWait    map[string]StageWait `json:"stage_wait,omitempty"`
	MetricsError string               `json:"metrics_error,omitempty"` // why StageBusy is missing
	// Idle is the server's CPU with IdleConns keep-alive connections open
	// after the load (the last round of each setup only).
	Idle       *CPUSample `json:"idle,omitempty"`
	IdleConns  int        `json:"idle_conns,omitempty"`
	IdleNote   string     `json:"idle_note,omitempty"`
	GOMAXPROCS int        `json:"gomaxprocs,omitempty"` // from the server's log
	ExitCode   int        `json:"exit_code"`            // after SIGTERM: 0 is a clean stop
}

// spinningStrategies are the wait strategies that keep a CPU busy while a
// stage waits: never chosen for shared cores.
var spinningStrategies = []string{"WaitIfUpstreamIdle", "Never"}

// Spins tells whether a wait strategy spins while it waits.
func Spins(strategy string) bool { return slices.Contains(spinningStrategies, strategy) }
