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
	"slices"
	"strings"

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
	// Virtual is set when the run's CPUs were a virtual machine's
	// (scripts/manycore.sh): such a run is a functional check, never a
	// measurement of speed, and the report renders it as one.
	Virtual *VirtualMachine `json:"virtual,omitempty"`
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

// Run is every artifact of one run directory, arranged as setups with their
// rounds. A run of `report setups` has two setups of several rounds each
// (setups.json); a run without setups.json (a single load result, as from
// an older script or a merged distributed run) is one setup of one round,
// read from load.json and the files beside it.
type Run struct {
	Dir            string
	Manifest       Manifest
	Setups         *Setups // nil for a single-result run
	Views          []*SetupView
	Calibrations   []*Calibration
	Pipeline       *pipebench.JSONOutput
	WaitStrategies *WaitStrategies
	// Unreadable lists the artifacts that exist but could not be read, each
	// as its error (which names it). What they held is left out: a damaged
	// file costs its own figures, not the whole report.
	Unreadable []string
	// raw keeps each JSON artifact decoded generically, by its name in the
	// run directory, so figures can be looked up by field path (the tests
	// do the same).
	raw map[string]any
}

// SetupView is one setup and its rounds, in round order.
type SetupView struct {
	Setup  Setup
	Rounds []*Round
}

// Round is one run of a setup and the artifacts it left. A failed run has
// only Status and Reason.
type Round struct {
	Number, Order  int
	Status, Reason string
	LoadName       string
	Load           *loadtester.Result
	HdrName        string
	Hdr            *HdrLog
	// Loaded and Idle are the server's CPU under load and idle, each with
	// the artifact and the field prefix it was read from ("loaded." in a
	// sample, "" in a legacy server_cpu_*.json).
	Loaded                   *CPUSample
	LoadedName, LoadedPrefix string
	Idle                     *CPUSample
	IdleName, IdlePrefix     string
	Sample                   *ServerSample // nil for a legacy round
}

// Calibration is one round's bench_cpu_work pair.
type Calibration struct {
	Round                 int
	Status, Reason        string
	TimedName, TargetName string
	Timed, Target         *CPUWork
}

// optionalArtifact is a file that may be missing from a run directory; set
// records it in the Run once it decoded.
type optionalArtifact struct {
	name string
	dst  any
	set  func()
}

// LoadRun reads a run directory. The manifest and either setups.json or
// load.json are required: without them there is nothing to report. Any
// other artifact that exists but cannot be read (truncated, not JSON) is
// recorded in Unreadable and what it held is left out: a round whose load
// result or sample is damaged gets StatusUnreadable, a calibration the same.
func LoadRun(dir string) (*Run, error) {
	r := &Run{Dir: dir, raw: map[string]any{}}
	if err := r.readJSON(ManifestFile, &r.Manifest, true); err != nil {
		return nil, err
	}
	var ss Setups
	switch err := r.readJSON(SetupsFile, &ss, false); {
	case err == nil:
		r.Setups = &ss
		if err := r.loadSetups(); err != nil {
			return nil, err
		}
	case errors.Is(err, fs.ErrNotExist):
		if err := r.loadSingle(); err != nil {
			return nil, err
		}
	default:
		return nil, err
	}
	var pb pipebench.JSONOutput
	var ws WaitStrategies
	r.readOptional([]optionalArtifact{
		{PipelineBenchFile, &pb, func() { r.Pipeline = &pb }},
		{WaitStrategiesFile, &ws, func() { r.WaitStrategies = &ws }},
	})
	return r, nil
}

// readOptional reads each artifact that exists. One that exists but cannot
// be read is recorded in r.Unreadable and left unset; the errors come back
// joined, for a caller that marks what they belong to.
func (r *Run) readOptional(optional []optionalArtifact) error {
	var errs []error
	for _, o := range optional {
		switch err := r.readJSON(o.name, o.dst, false); {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			r.unreadable(err)
			errs = append(errs, err)
		default:
			o.set()
		}
	}
	return errors.Join(errs...)
}

func (r *Run) unreadable(err error) { r.Unreadable = append(r.Unreadable, err.Error()) }

// loadSetups reads every artifact setups.json names.
func (r *Run) loadSetups() error {
	ss := r.Setups
	if ss.Version != SetupsVersion {
		return fmt.Errorf("artifact %s: version %d, want %d", SetupsFile, ss.Version, SetupsVersion)
	}
	views := map[string]*SetupView{}
	for _, s := range ss.Setups {
		v := &SetupView{Setup: s}
		views[s.Name] = v
		r.Views = append(r.Views, v)
	}
	for _, run := range ss.Runs {
		v, ok := views[run.Setup]
		if !ok {
			return fmt.Errorf("artifact %s: a run of setup %q, which it does not list", SetupsFile, run.Setup)
		}
		rd := &Round{Number: run.Round, Order: run.Order, Status: run.Status, Reason: run.Reason}
		if run.Status == StatusMeasured {
			if err := r.loadRound(rd, run); err != nil {
				r.unreadable(err)
				rd.Status, rd.Reason = StatusUnreadable, err.Error()
			}
		}
		v.Rounds = append(v.Rounds, rd)
	}
	for _, v := range r.Views {
		slices.SortStableFunc(v.Rounds, func(a, b *Round) int { return a.Number - b.Number })
	}
	for _, c := range ss.Calibrations {
		cal := &Calibration{Round: c.Round, Status: c.Status, Reason: c.Reason, TimedName: c.Timed, TargetName: c.Target}
		var timed, target CPUWork
		if err := r.readOptional([]optionalArtifact{
			{c.Timed, &timed, func() { cal.Timed = &timed }},
			{c.Target, &target, func() { cal.Target = &target }},
		}); err != nil {
			cal.Reason = strings.TrimPrefix(cal.Reason+"; "+err.Error(), "; ")
			if cal.Status == StatusMeasured {
				cal.Status = StatusUnreadable
			}
		}
		r.Calibrations = append(r.Calibrations, cal)
	}
	return nil
}

// loadRound reads a measured run's load result, HDR log and sample, all or
// none: rd is filled only when every one of them reads.
func (r *Run) loadRound(rd *Round, run SetupRun) error {
	var lf loadtester.Result
	var sample ServerSample
	if err := r.readJSON(run.Load, &lf, true); err != nil {
		return err
	}
	if err := r.readJSON(run.Sample, &sample, true); err != nil {
		return err
	}
	var log *HdrLog
	if run.HdrLog != "" {
		var err error
		if log, err = r.readHdrLog(run.HdrLog); err != nil {
			return err
		}
		rd.HdrName, rd.Hdr = run.HdrLog, log
	}
	rd.LoadName, rd.Load, rd.Sample = run.Load, &lf, &sample
	rd.Loaded, rd.LoadedName, rd.LoadedPrefix = &sample.Loaded, run.Sample, "loaded."
	if sample.Idle != nil {
		rd.Idle, rd.IdleName, rd.IdlePrefix = sample.Idle, run.Sample, "idle."
	}
	return nil
}

// loadSingle reads a run of one load result: load.json with, optionally,
// load.hlog, the server's CPU samples and the two bench_cpu_work results.
func (r *Run) loadSingle() error {
	var lf loadtester.Result
	if err := r.readJSON(LoadFile, &lf, true); err != nil {
		return err
	}
	rd := &Round{Number: 1, Order: 1, Status: StatusMeasured, LoadName: LoadFile, Load: &lf}
	cal := &Calibration{Round: 1, Status: StatusMeasured}
	var cw, cwt CPUWork
	var sl, si CPUSample
	r.readOptional([]optionalArtifact{
		{CPUWorkFile, &cw, func() { cal.Timed, cal.TimedName = &cw, CPUWorkFile }},
		{CPUWorkTargetFile, &cwt, func() { cal.Target, cal.TargetName = &cwt, CPUWorkTargetFile }},
		{ServerCPULoaded, &sl, func() { rd.Loaded, rd.LoadedName = &sl, ServerCPULoaded }},
		{ServerCPUIdle, &si, func() { rd.Idle, rd.IdleName = &si, ServerCPUIdle }},
	})
	log, err := r.readHdrLog(HdrLogFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		r.unreadable(err)
	default:
		rd.HdrName, rd.Hdr = HdrLogFile, log
	}
	r.Views = []*SetupView{{Setup: r.singleSetup(&lf), Rounds: []*Round{rd}}}
	if cal.Timed != nil || cal.Target != nil {
		r.Calibrations = []*Calibration{cal}
	}
	return nil
}

// singleSetup describes a single-result run's setup from its server config
// (in the manifest) and its load tester's flags (in load.json).
func (r *Run) singleSetup(lf *loadtester.Result) Setup {
	num := func(doc any, path string, def int) int {
		if v, err := LookupNumber(doc, path); err == nil {
			return int(v)
		}
		return def
	}
	values := r.raw[ManifestFile]
	s := Setup{Name: "run", Title: "this run", Cores: CoresShared,
		IOThreads:      num(values, "config.values.server.io_threads", 0),
		ReleaseThreads: num(values, "config.values.commit.pipeline_release_threads", 1),
		OkIterations:   num(values, "config.values.benchmark.ok_resolve_iterations", 0),
		WaitStrategy:   "(server default)", Config: r.Manifest.Config.Path}
	if v, err := LookupField(values, "config.values.commit.pipeline_wait_strategy"); err == nil {
		if str, ok := v.(string); ok {
			s.WaitStrategy = str
		}
	}
	cfg, _ := lf.Config.(map[string]any)
	s.LoadThreads = num(cfg, "network_threads", 1)
	s.ConnectThreads = num(cfg, "connect_threads", 1)
	s.Connections = num(cfg, "concurrency", 0)
	s.RequestsPerConn = num(cfg, "requests_per_conn", 0)
	if n := num(cfg, "instances", 0); n > 1 {
		// A merged result: each instance ran the flags, concurrency included.
		s.Connections *= n
	}
	return s
}

// readHdrLog reads an HdrHistogram interval log of the run directory.
func (r *Run) readHdrLog(name string) (*HdrLog, error) {
	return ReadHdrLog(filepath.Join(r.Dir, name))
}

// readJSON decodes one artifact into dst and keeps a generic copy in r.raw.
func (r *Run) readJSON(name string, dst any, required bool) error {
	if name == "" {
		if required {
			return errors.New("read artifact: no name given")
		}
		return fs.ErrNotExist
	}
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
