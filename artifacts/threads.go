package artifacts

import (
	"slices"
	"sort"
)

// ThreadsVersion is the version of a run's <name>.threads.json.
const ThreadsVersion = 1

// Threads (a run's <name>.threads.json) is where its threads were, read back from the kernel while
// the run was under load (/proc/<pid>/task/<tid>/status Cpus_allowed_list,
// and stat field 39, the CPU each last ran on), beside what the run
// planned, and how many connections and requests each of the server's
// event loops took (its /metrics). It is what a dedicated-core result would
// otherwise ask its reader to take on faith. The runner writes one per
// server run and per pinned bench_pipeline run (<name>.threads.json);
// reports.VerifyPinning and reports.VerifyLoops judge it.
type Threads struct {
	Version int     `json:"version"`
	Plan    PinPlan `json:"plan"`
	// Processes are the measured processes: weaseldb and load_tester read
	// once near the end of the measured window, or bench_pipeline read
	// every Polls × 200 ms through its run (its stage threads come and go
	// with its cases).
	Processes []ProcessThreads `json:"processes"`
	// Loops are the server's event loops by index, from /metrics right
	// after the load (cumulative since the server started).
	Loops        []LoopServed `json:"loops,omitempty"`
	MetricsError string       `json:"metrics_error,omitempty"` // why Loops is missing
	// Idle is the server's threads read as its idle window opened and as it
	// closed (nothing to do, keep-alive connections open): how often each
	// thread slept meanwhile (reports.VerifyIdleSleeps).
	Idle *IdleThreads `json:"idle,omitempty"`
}

// IdleThreads is two readings of the server's threads around its idle window.
type IdleThreads struct {
	WindowS float64        `json:"window_s"`
	Start   ProcessThreads `json:"start"`
	End     ProcessThreads `json:"end"`
}

// PinPlan is what the run asked for: the CPU of each pinned thread (the
// plan package's assignment, by internal/placement's rule).
type PinPlan struct {
	AllowedCPUs string `json:"allowed_cpus"` // every CPU the run could use; an unpinned thread may use them all
	IOThreads   int    `json:"io_threads,omitempty"`
	// The CPU of each pinned thread (none: shared cores, nothing pinned).
	IOCPUs       []int   `json:"io_cpus,omitempty"`
	PipelineCPUs [][]int `json:"pipeline_cpus,omitempty"` // sequence, resolve, persist, release threads
	LoadCPUs     []int   `json:"load_cpus,omitempty"`     // load_tester, the whole process
	ProducerCPU  *int    `json:"producer_cpu,omitempty"`  // bench_pipeline
	StageCPUs    []int   `json:"stage_cpus,omitempty"`    // bench_pipeline
}

// ProcessThreads is one process's threads as read.
type ProcessThreads struct {
	Role    string          `json:"role"` // "weaseldb", "load_tester" or "bench_pipeline"
	Pid     int             `json:"pid"`
	Polls   int             `json:"polls,omitempty"` // readings merged (bench_pipeline); 0 or 1: one reading
	Threads []ThreadReading `json:"threads,omitempty"`
	Error   string          `json:"error,omitempty"` // why Threads is missing or partial
}

// ThreadReading is one thread's affinity and last CPU, as read.
type ThreadReading struct {
	TID         int     `json:"tid"`
	AllowedCPUs string  `json:"allowed_cpus"` // Cpus_allowed_list, kernel list format
	LastCPU     int     `json:"last_cpu"`     // stat field 39
	CPUS        float64 `json:"cpu_s"`        // user+system so far
	State       string  `json:"state,omitempty"`
	// Voluntary and Nonvoluntary are its context switches so far: the
	// times it slept, and the times the kernel took its CPU.
	Voluntary    uint64 `json:"voluntary_switches"`
	Nonvoluntary uint64 `json:"nonvoluntary_switches"`
}

// LoopServed is one event loop's share of the work.
type LoopServed struct {
	Loop     int   `json:"loop"`
	Accepted int64 `json:"accepted"` // weaseldb_loop_connections_accepted_total
	Requests int64 `json:"requests"` // weaseldb_loop_requests_total
}

// Roles of ProcessThreads.
const (
	RoleServer   = "weaseldb"
	RoleClient   = "load_tester"
	RolePipeline = "bench_pipeline"
)

// Merge adds a later reading of the same process: a thread read again
// replaces its earlier reading, a new one is added. An error is kept only
// while nothing was read.
func (p *ProcessThreads) Merge(later ProcessThreads) {
	p.Polls++
	if later.Error != "" {
		if len(p.Threads) == 0 {
			p.Error = later.Error
		}
		return
	}
	p.Error = ""
	for _, th := range later.Threads {
		if i := slices.IndexFunc(p.Threads, func(x ThreadReading) bool { return x.TID == th.TID }); i >= 0 {
			p.Threads[i] = th
		} else {
			p.Threads = append(p.Threads, th)
		}
	}
	sort.Slice(p.Threads, func(i, j int) bool { return p.Threads[i].TID < p.Threads[j].TID })
}

// Process returns the reading of one role, nil if there is none.
func (pl *Threads) Process(role string) *ProcessThreads {
	for i := range pl.Processes {
		if pl.Processes[i].Role == role {
			return &pl.Processes[i]
		}
	}
	return nil
}
