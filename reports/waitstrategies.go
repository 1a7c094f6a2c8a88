package reports

import (
	"fmt"
	"slices"
	"strings"

	"weaseldb/internal/affinity"
	"weaseldb/internal/placement"
)

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
	// cannot be read now (Reason names it and why); set by LoadRun.
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
}

// WaitRun is one strategy on one kind of cores, measured, skipped or failed.
// Optional figures are pointers: absent means not measured (bench_pipeline
// records no per-item latency, for instance), never zero.
type WaitRun struct {
	Bench      string `json:"bench"`    // BenchPipeline or BenchServer
	Strategy   string `json:"strategy"` // one of WaitStrategyNames
	Cores      string `json:"cores"`    // CoresShared or CoresDedicated
	Status     string `json:"status"`
	Reason     string `json:"reason,omitempty"`
	CPUsNeeded int    `json:"cpus_needed,omitempty"` // allowed CPUs a dedicated run needs
	CPUPlan    string `json:"cpu_plan,omitempty"`    // which thread got which CPU
	Artifact   string `json:"artifact,omitempty"`    // the raw result in the run directory
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
}

// WaitPlanParams sizes the runs the plan assigns CPUs for.
type WaitPlanParams struct {
	Strategies     []string // default WaitStrategyNames
	PipelineStages int      // bench_pipeline's wait_strategy family: 2
	IOThreads      int      // server event loops
	ReleaseThreads int      // server release-stage threads
	LoadThreads    int      // load_tester network threads, each on its own CPU
	Dedicated      bool     // plan dedicated runs (false: shared only)
}

// PlannedRun is one run of the comparison with its CPU assignment.
type PlannedRun struct {
	WaitRun
	// Dedicated CPU assignment (empty for shared runs).
	ProducerCPU  int     // bench_pipeline: the producer
	StageCPUs    []int   // bench_pipeline: one per stage
	IOCPUs       []int   // server: one per event loop
	PipelineCPUs [][]int // server: sequence, resolve, persist, release threads
	LoadCPUs     []int   // load_tester, the whole process (taskset)
}

// ServerStageThreads is how many threads the server's four commit stages run.
func ServerStageThreads(releaseThreads int) int { return 3 + releaseThreads }

// PlanWaitStrategies lists every run of the comparison, in execution order:
// bench_pipeline then the server, shared cores then dedicated, each strategy
// in turn. Dedicated runs get CPUs from placement.PlaceDedicated; where allowed
// is too small they are planned as skipped, with the count they need.
func PlanWaitStrategies(allowed []int, p WaitPlanParams) []PlannedRun {
	strategies := p.Strategies
	if len(strategies) == 0 {
		strategies = WaitStrategyNames
	}
	modes := []string{CoresShared}
	if p.Dedicated {
		modes = append(modes, CoresDedicated)
	}
	var runs []PlannedRun
	for _, bench := range []string{BenchPipeline, BenchServer} {
		for _, cores := range modes {
			for _, s := range strategies {
				run := PlannedRun{WaitRun: WaitRun{Bench: bench, Strategy: s, Cores: cores, Status: StatusMeasured}}
				if cores == CoresDedicated {
					planDedicated(&run, allowed, p)
				}
				runs = append(runs, run)
			}
		}
	}
	return runs
}

// planDedicated assigns CPUs to one dedicated run, or marks it skipped.
func planDedicated(run *PlannedRun, allowed []int, p WaitPlanParams) {
	var need placement.Need
	if run.Bench == BenchPipeline {
		need = placement.Need{Producer: true, StageThreads: slices.Repeat([]int{1}, p.PipelineStages)}
	} else {
		need = placement.Need{IOThreads: p.IOThreads, StageThreads: []int{1, 1, 1, p.ReleaseThreads}, LoadThreads: p.LoadThreads}
	}
	run.CPUsNeeded = need.DedicatedCPUs()
	plan, err := placement.PlaceDedicated(allowed, need)
	if err != nil {
		run.Status, run.Reason = StatusSkipped, err.Error()
		return
	}
	if run.Bench == BenchPipeline {
		run.ProducerCPU = plan.ProducerCPU
		for _, s := range plan.StageCPUs {
			run.StageCPUs = append(run.StageCPUs, s...)
		}
		run.CPUPlan = fmt.Sprintf("producer %d; stages %s", run.ProducerCPU, joinInts(run.StageCPUs, ","))
		return
	}
	run.IOCPUs, run.PipelineCPUs, run.LoadCPUs = plan.IOCPUs, plan.StageCPUs, plan.LoadCPUs
	stages := make([]string, len(run.PipelineCPUs))
	for i, s := range run.PipelineCPUs {
		stages[i] = affinity.FormatCPUList(s)
	}
	run.CPUPlan = fmt.Sprintf("io %s; stages %s; load_tester %s",
		affinity.FormatCPUList(run.IOCPUs), strings.Join(stages, " "), affinity.FormatCPUList(run.LoadCPUs))
}

func joinInts(v []int, sep string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, sep)
}

// PipelineCPUsFlag is the run's bench_pipeline --cpus value (producer first).
func (r PlannedRun) PipelineCPUsFlag() string {
	return joinInts(append([]int{r.ProducerCPU}, r.StageCPUs...), ",")
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

// FormatWaitTable renders the runs as the plain-text table the comparison
// prints: one line per run; skipped and failed runs say why.
func FormatWaitTable(ws *WaitStrategies) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s  %-18s  %-9s  %18s  %9s  %9s  %12s  %14s  %10s\n",
		"bench", "strategy", "cores", "throughput", "p50", "p99", "CPU/op", "client CPU/req", "idle CPU")
	for _, r := range ws.Runs {
		fmt.Fprintf(&b, "%-8s  %-18s  %-9s  ", r.Bench, r.Strategy, r.Cores)
		if r.Status != StatusMeasured {
			fmt.Fprintf(&b, "%s: %s\n", r.Status, r.Reason)
			continue
		}
		tp := "-"
		if r.Throughput != nil {
			tp = FormatNumber(*r.Throughput, 0) + " " + r.Unit
		}
		flag := ""
		if r.Unfinished > 0 || r.Dropped > 0 {
			flag = fmt.Sprintf("  NOT CLEAN: %d unfinished, %d dropped", r.Unfinished, r.Dropped)
		}
		fmt.Fprintf(&b, "%18s  %9s  %9s  %12s  %14s  %10s%s\n", tp,
			fmtDuration(r.P50Ns), fmtDuration(r.P99Ns), fmtDuration(r.CPUNsPerOp),
			fmtDuration(r.ClientCPUNsPerRequest), fmtCores(r.IdleCoreFraction), flag)
	}
	return b.String()
}

// FormatWaitPlan shows each planned run and its CPUs, or why it would be skipped.
func FormatWaitPlan(ws *WaitStrategies, plan []PlannedRun) string {
	var b strings.Builder
	simulated := ""
	if ws.Simulated {
		simulated = " (simulated)"
	}
	fmt.Fprintf(&b, "plan for allowed CPUs %s%s:\n", ws.AllowedCPUs, simulated)
	for _, r := range plan {
		what := "run"
		switch {
		case r.Status == StatusSkipped:
			what = "skip: " + r.Reason
		case r.CPUPlan != "":
			what = fmt.Sprintf("run on %d CPUs: %s", r.CPUsNeeded, r.CPUPlan)
		}
		fmt.Fprintf(&b, "  %-8s  %-18s  %-9s  %s\n", r.Bench, r.Strategy, r.Cores, what)
	}
	return b.String()
}

// FormatWaitSkipped summarises the skipped runs ("" when none was skipped).
func FormatWaitSkipped(ws *WaitStrategies) string {
	skipped := ws.SkippedRuns()
	if len(skipped) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nskipped %d runs for want of CPUs (this process may use %s):\n", len(skipped), ws.AllowedCPUs)
	for _, r := range skipped {
		fmt.Fprintf(&b, "  %s %s on dedicated cores needs %d CPUs\n", r.Bench, r.Strategy, r.CPUsNeeded)
	}
	return b.String()
}

// fmtDuration prints nanoseconds in a readable unit, "-" when not measured.
func fmtDuration(ns *float64) string {
	switch {
	case ns == nil:
		return "-"
	case *ns >= 1e6:
		return FormatNumber(*ns/1e6, 2) + "ms"
	case *ns >= 1e3:
		return FormatNumber(*ns/1e3, 2) + "µs"
	}
	return FormatNumber(*ns, 1) + "ns"
}

// fmtCores prints a core fraction as % of one core, "-" when not measured.
func fmtCores(f *float64) string {
	if f == nil {
		return "-"
	}
	return FormatNumber(*f*100, 2) + "%"
}

// measuredRuns returns the indexes of the measured runs of one bench.
func (ws *WaitStrategies) measuredRuns(bench string) []int {
	var idx []int
	for i, r := range ws.Runs {
		if r.Bench == bench && r.Status == StatusMeasured {
			idx = append(idx, i)
		}
	}
	return idx
}

// strategyOrder sorts strategy names in WaitStrategyNames order, others last.
func strategyOrder(s string) int {
	if i := slices.Index(WaitStrategyNames, s); i >= 0 {
		return i
	}
	return len(WaitStrategyNames)
}

// hasMeasured reports whether any run on the given kind of cores was measured.
func (ws *WaitStrategies) hasMeasured(cores string) bool {
	for _, r := range ws.Runs {
		if r.Cores == cores && r.Status == StatusMeasured {
			return true
		}
	}
	return false
}
