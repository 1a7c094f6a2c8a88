package reports

import (
	"fmt"
	"slices"
	"strings"

	"weaseldb/internal/affinity"
	"weaseldb/internal/placement"
)

// SetupsFile is the run directory's record of the two setups and their
// rounds, written by `report setups` (reports/runner).
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
	Version     int     `json:"version"`
	AllowedCPUs string  `json:"allowed_cpus"` // sched_getaffinity at the start, kernel list format
	Rounds      int     `json:"rounds"`
	DurationS   float64 `json:"duration_s"` // measured load per run
	WarmupS     float64 `json:"warmup_s"`   // load before it, excluded from every figure
	IdleS       float64 `json:"idle_s"`     // idle CPU window after the last round's load
	IdleConns   int     `json:"idle_conns"` // keep-alive connections held open while idle
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
	Config       string  `json:"config"` // the server's config file in the run directory
	Why          string  `json:"why"`    // the rule that chose it, as applied
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
	// Threads is the run's Placement: its threads read back from the
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
	MetricsError     string             `json:"metrics_error,omitempty"` // why StageBusy is missing
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

// fittedStageThreads is the pipeline's threads in a fitted setup: sequence,
// resolve, persist and one release thread.
const fittedStageThreads = 4

// connectionsPerLoadThread is the fitted setup's closed loop: enough
// connections in flight per load-tester thread to keep the pipeline's
// batches full, few enough that each thread's epoll loop stays cheap.
const connectionsPerLoadThread = 100

// FitSetup chooses the setup fitted to the allowed CPUs; the rule is
// docs/report.md's "The fitted setup". Only the thread counts, the
// connections, the wait strategy and the pinning change: the work per
// request, the requests per connection and the connect threads are the
// seed's, so both setups serve the same load.
//
//   - 7 or more CPUs: dedicated cores. One CPU is left for everything
//     unpinned; the 4 pipeline threads get a CPU each; of the rest, half
//     (rounded down, at least 1) go to I/O loops and the others to
//     load-tester threads, each pinned. On cores of their own the pipeline
//     may spin while upstream is busy: WaitIfUpstreamIdle.
//   - Fewer: shared cores, nothing pinned. Every busy thread beyond the
//     cores time-shares instead of adding capacity, so one I/O loop and one
//     load-tester thread per 4 CPUs (at least one each), and a wait strategy
//     that never spins: WaitIfStageEmpty.
func FitSetup(allowed []int, seed Setup) Setup {
	f := Setup{Name: SetupFitted, Title: "fitted setup", ReleaseThreads: 1, OkIterations: seed.OkIterations,
		ConnectThreads: seed.ConnectThreads, RequestsPerConn: seed.RequestsPerConn}
	n := len(allowed)
	need := placement.Fit(allowed) // the thread counts; the one placement rule places them
	f.IOThreads, f.LoadThreads = need.IOThreads, need.LoadThreads
	if p, err := placement.PlaceDedicated(allowed, need); err == nil {
		f.Cores, f.WaitStrategy = CoresDedicated, "WaitIfUpstreamIdle"
		f.IOCPUs, f.PipelineCPUs, f.LoadCPUs = p.IOCPUs, p.StageCPUs, p.LoadCPUs
		f.CPUPlan = dedicatedPlan(f)
		f.Connections = connectionsPerLoadThread * f.LoadThreads
		f.Why = fmt.Sprintf("%d allowed CPUs (%s), 7 or more: dedicated cores; %d for the pipeline's 4 threads, %d I/O loops, %d load-tester threads, 1 left for the rest (%s); WaitIfUpstreamIdle, which may spin on cores of its own",
			n, affinity.FormatCPUList(allowed), fittedStageThreads, f.IOThreads, f.LoadThreads, f.CPUPlan)
		return f
	}
	f.Cores, f.WaitStrategy = CoresShared, "WaitIfStageEmpty"
	f.Connections = connectionsPerLoadThread * f.LoadThreads
	f.Why = fmt.Sprintf("%d allowed CPUs (%s), fewer than 7: shared cores, nothing pinned; one I/O loop and one load-tester thread per 4 CPUs (%d and %d); WaitIfStageEmpty, which never spins",
		n, affinity.FormatCPUList(allowed), f.IOThreads, f.LoadThreads)
	return f
}

// dedicatedPlan names each thread's CPUs, as the wait-strategy plans do.
func dedicatedPlan(s Setup) string {
	stages := make([]string, len(s.PipelineCPUs))
	for i, c := range s.PipelineCPUs {
		stages[i] = affinity.FormatCPUList(c)
	}
	return fmt.Sprintf("io %s; stages %s; load_tester %s",
		affinity.FormatCPUList(s.IOCPUs), strings.Join(stages, " "), affinity.FormatCPUList(s.LoadCPUs))
}

// Describe is the setup in one line, for tables.
func (s Setup) Describe() string {
	cores := "shared cores"
	if s.Cores == CoresDedicated {
		cores = "dedicated cores (" + s.CPUPlan + ")"
	}
	return fmt.Sprintf("%s, %s, %s; load tester: %s; %s",
		plural(s.IOThreads, "I/O thread"), plural(s.ReleaseThreads, "release thread"), s.WaitStrategy, s.DescribeLoad(), cores)
}

// DescribeLoad is the load tester's side: the connections in all first,
// then the threads they are spread over. "10 threads × 2000 connections"
// read as 20,000 connections where there were 2,000.
func (s Setup) DescribeLoad() string {
	return fmt.Sprintf("%s connections in all, over %s and %s",
		FormatNumber(float64(s.Connections), 0), plural(s.LoadThreads, "network thread"), plural(s.ConnectThreads, "connect thread"))
}

// plural is "1 thread", "2 threads".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
