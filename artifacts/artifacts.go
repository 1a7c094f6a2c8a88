package artifacts

import "encoding/json"

// The file names of a run directory. scripts/reproduce_threading_report.sh
// writes them; docs/report.md documents them.
const (
	ManifestFile       = "manifest.json"
	LoadFile           = "load.json"
	HdrLogFile         = "load.hlog"
	CPUWorkFile        = "cpu_work.json"
	CPUWorkTargetFile  = "cpu_work_target.json"
	ServerCPULoaded    = "server_cpu_loaded.json"
	ServerCPUIdle      = "server_cpu_idle.json"
	PipelineBenchFile  = "bench_pipeline.json"
	WaitStrategiesFile = "wait_strategies.json"
)

// Manifest describes the run: the machine, the server's config and every
// command the script ran with its exit status.
type Manifest struct {
	Version        int          `json:"version"`
	StartedAt      string       `json:"started_at"`
	FinishedAt     string       `json:"finished_at,omitempty"`
	DurationS      float64      `json:"duration_s"`
	Quick          bool         `json:"quick"`
	Machine        Machine      `json:"machine"`
	Config         ConfigRecord `json:"config"`
	Steps          []Step       `json:"steps"`
	ServerExitCode *int         `json:"server_exit_code,omitempty"`
	// ServerGOMAXPROCS is what the server reported at start ("" if it did not).
	ServerGOMAXPROCS string         `json:"server_gomaxprocs,omitempty"`
	NofileLimit      string         `json:"nofile_limit,omitempty"`
	Env              map[string]any `json:"env,omitempty"`
	// Virtual is set when the run's CPUs were a virtual machine's
	// (scripts/manycore.sh): such a run is a functional check, never a
	// measurement of speed, and the report renders it as one.
	Virtual *VirtualMachine `json:"virtual,omitempty"`
	// Source is the revision the binaries were built from and how (absent
	// from runs recorded before it was).
	Source *SourceRecord `json:"source,omitempty"`
	// RunDir and Root are the run directory and the repository root as
	// absolute paths when the run was recorded: the config path and the
	// steps' commands hold them, and a report rendered after the run moved
	// (reports/runs/ to reports/published/) shows those paths relative to
	// where the run is now instead.
	RunDir string `json:"run_dir,omitempty"`
	Root   string `json:"root,omitempty"`
}

// SourceRecord is the source behind a run's binaries.
type SourceRecord struct {
	Revision string `json:"revision"`           // git rev-parse HEAD
	Describe string `json:"describe,omitempty"` // git describe --always --dirty
	// Dirty: the work tree had changes git did not commit, so Revision
	// alone does not reproduce the binaries.
	Dirty        bool   `json:"dirty"`
	BuildCommand string `json:"build_command"` // the step that built them, or why none ran
}

// VirtualMachine records that a run's CPUs were virtual, and how.
type VirtualMachine struct {
	Hypervisor string `json:"hypervisor"` // "qemu"
	// Accel is "tcg" (every guest instruction translated in software: the
	// CPUs were emulated) or "kvm" (hardware virtualization).
	Accel        string `json:"accel"`
	Emulated     bool   `json:"emulated"`
	GuestCPUs    int    `json:"guest_cpus"`
	HostCPUs     int    `json:"host_cpus"`
	HostCPUModel string `json:"host_cpu_model,omitempty"`
	// StealS is the guest's /proc/stat steal time since boot, read when the
	// manifest was written: what the hypervisor said it took from the
	// virtual CPUs. StealNote says what the figure can and cannot show.
	StealS    float64 `json:"steal_s"`
	StealNote string  `json:"steal_note,omitempty"`
	Note      string  `json:"note"`
}

// Machine is what the run was measured on.
type Machine struct {
	CPUModel      string `json:"cpu_model"`
	Cores         int    `json:"cores"`
	Kernel        string `json:"kernel"`
	GoVersion     string `json:"go_version"`
	GOMAXPROCS    int    `json:"gomaxprocs"`
	GOMAXPROCSEnv string `json:"gomaxprocs_env,omitempty"`
	OS            string `json:"os"`
	Arch          string `json:"arch"`
	Hostname      string `json:"hostname,omitempty"`
}

// ConfigRecord is the server config file of the run, decoded from TOML as is.
type ConfigRecord struct {
	Path   string         `json:"path"`             // the file the server read
	Source string         `json:"source,omitempty"` // the file it was adjusted from, if any
	Values map[string]any `json:"values"`
}

// Step is one command the script ran.
type Step struct {
	Name     string  `json:"name"`
	Command  string  `json:"command"`
	ExitCode int     `json:"exit_code"`
	WallS    float64 `json:"wall_s"`
}

// CPUWork is build/bench_cpu_work's --json output.
type CPUWork struct {
	Iterations      int             `json:"iterations"`
	TargetNs        float64         `json:"target_ns,omitempty"`
	NsPerCallMedian float64         `json:"ns_per_call_median"`
	NsPerCallMin    float64         `json:"ns_per_call_min"`
	NsPerCallMax    float64         `json:"ns_per_call_max"`
	Runs            json.RawMessage `json:"runs"`
	// WallNsPerCallMedian is the wall-clock median (0 when absent);
	// NsPerCallMedian is the measuring thread's CPU time, which preemption on
	// a busy machine does not inflate (docs/bench_cpu_work.md).
	WallNsPerCallMedian float64 `json:"wall_ns_per_call_median"`
	// With --target: the calibration's passes, whether two agreed within
	// 5%, and the largest pass's count over the smallest, minus one (absent
	// from results of a bench_cpu_work that searched only once).
	TargetPasses []CalibrationPass `json:"target_passes,omitempty"`
	TargetAgreed *bool             `json:"target_agreed,omitempty"`
	TargetSpread *float64          `json:"target_spread,omitempty"`
}

// CalibrationPass is one pass of bench_cpu_work's calibration search.
type CalibrationPass struct {
	Iterations      int     `json:"iterations"`
	NsPerCallMedian float64 `json:"ns_per_call_median"`
}

// CPUSample is a process's CPU over a window (bench.SampleCPU), with the
// whole machine's beside it.
type CPUSample struct {
	Version      int     `json:"version"`
	Pid          int     `json:"pid"`
	Phase        string  `json:"phase"`
	DelayS       float64 `json:"delay_s"`
	WindowS      float64 `json:"window_s"`
	CPUS         float64 `json:"cpu_s"`
	CoreFraction float64 `json:"core_fraction"`
	ResolutionS  float64 `json:"resolution_s"`
	// MachineBusyCores is the whole machine's busy CPU over the same window
	// (/proc/stat; 0 when unavailable): on a shared machine, the server and
	// the load tester are not the only users.
	MachineBusyCores float64 `json:"machine_busy_cores"`
	// MachineCPUs is how many CPUs that busy time is shared among (the
	// per-CPU lines of /proc/stat; 0 when unavailable).
	MachineCPUs int         `json:"machine_cpus,omitempty"`
	Samples     []CPUSeries `json:"samples,omitempty"`
}

// CPUSeries is one point of a CPU sample: cumulative process CPU at t_s.
type CPUSeries struct {
	TS   float64 `json:"t_s"`
	CPUS float64 `json:"cpu_s"`
}
