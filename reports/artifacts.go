// Package reports turns the artifacts of one benchmark run (JSON results and
// an HdrHistogram interval log, all in one run directory) into the markdown
// threading performance report with PNG plots. It reads nothing else: every
// number it prints comes from a file of the run, and the report's Sources
// table says which file and which field.
package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"weaseldb/loadtester"
	"weaseldb/server/pipeline/pipebench"
)

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
}

// CPUSample is what `report cpu-sample` measured of the server process.
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
	MachineBusyCores float64     `json:"machine_busy_cores"`
	Samples          []CPUSeries `json:"samples,omitempty"`
}

// CPUSeries is one point of a CPU sample: cumulative process CPU at t_s.
type CPUSeries struct {
	TS   float64 `json:"t_s"`
	CPUS float64 `json:"cpu_s"`
}

// Run is every artifact of one run directory. Optional artifacts are nil when
// their file is absent; the report then says the step was not measured.
type Run struct {
	Dir            string
	Manifest       Manifest
	Load           loadtester.Result
	HdrLog         *HdrLog
	CPUWork        *CPUWork
	CPUWorkTarget  *CPUWork
	ServerLoaded   *CPUSample
	ServerIdle     *CPUSample
	Pipeline       *pipebench.JSONOutput
	WaitStrategies *WaitStrategies
	// raw keeps each JSON artifact decoded generically, so figures can be
	// looked up by field path (the golden test does the same).
	raw map[string]any
}

// optionalArtifact is a file that may be missing from a run directory; set
// records it in the Run once it decoded.
type optionalArtifact struct {
	name string
	dst  any
	set  func()
}

// LoadRun reads a run directory. The manifest and the load result are
// required; every other artifact is optional.
func LoadRun(dir string) (*Run, error) {
	r := &Run{Dir: dir, raw: map[string]any{}}
	if err := r.readJSON(ManifestFile, &r.Manifest, true); err != nil {
		return nil, err
	}
	if err := r.readJSON(LoadFile, &r.Load, true); err != nil {
		return nil, err
	}
	var cw, cwt CPUWork
	var sl, si CPUSample
	var pb pipebench.JSONOutput
	var ws WaitStrategies
	optional := []optionalArtifact{
		{CPUWorkFile, &cw, func() { r.CPUWork = &cw }},
		{CPUWorkTargetFile, &cwt, func() { r.CPUWorkTarget = &cwt }},
		{ServerCPULoaded, &sl, func() { r.ServerLoaded = &sl }},
		{ServerCPUIdle, &si, func() { r.ServerIdle = &si }},
		{PipelineBenchFile, &pb, func() { r.Pipeline = &pb }},
		{WaitStrategiesFile, &ws, func() { r.WaitStrategies = &ws }},
	}
	for _, o := range optional {
		err := r.readJSON(o.name, o.dst, false)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		o.set()
	}
	log, err := ReadHdrLog(filepath.Join(dir, HdrLogFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		r.HdrLog = log
	}
	return r, nil
}

// loadConfig is load.json's config object, the load tester's flags;
// loadtester.Result leaves it untyped because the writer fills it from a struct.
func (r *Run) loadConfig() map[string]any {
	m, _ := r.Load.Config.(map[string]any)
	return m
}

// readJSON decodes one artifact into dst and keeps a generic copy in r.raw.
func (r *Run) readJSON(name string, dst any, required bool) error {
	data, err := os.ReadFile(filepath.Join(r.Dir, name))
	if err != nil {
		if !required && errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return fmt.Errorf("read artifact %s: %w", name, err)
	}
	if err := json.Unmarshal(data, dst); err != nil {
		return fmt.Errorf("decode artifact %s: %w", name, err)
	}
	var generic any
	if err := json.Unmarshal(data, &generic); err != nil {
		return fmt.Errorf("decode artifact %s: %w", name, err)
	}
	r.raw[name] = generic
	return nil
}
