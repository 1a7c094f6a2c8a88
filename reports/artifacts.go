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

	"weaseldb/artifacts"
	"weaseldb/loadtester/result"
)

// Run is every artifact of one run directory, arranged as setups with their
// rounds. A run of `report setups` has two setups of several rounds each
// (setups.json); a run without setups.json (a single load result, as from
// an older script or a merged distributed run) is one setup of one round,
// read from load.json and the files beside it.
type Run struct {
	Dir string
	// ShownDir is the run directory as the report names it in paths
	// (default Dir): a test renders from another working directory.
	ShownDir       string
	Manifest       artifacts.Manifest
	Setups         *artifacts.Setups // nil for a single-result run
	Views          []*SetupView
	Calibrations   []*Calibration
	Pipeline       *artifacts.PipelineBench
	WaitStrategies *artifacts.WaitStrategies
	Sustained      *artifacts.Sustained // nil when no sustained run was asked for
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
	Setup  artifacts.Setup
	Rounds []*Round
}

// Round is one run of a setup and the artifacts it left. A failed run has
// only Status and Reason.
type Round struct {
	Number, Order  int
	Status, Reason string
	LoadName       string
	Load           *result.Result
	HdrName        string
	Hdr            *HdrLog
	// Loaded and Idle are the server's CPU under load and idle, each with
	// the artifact and the field prefix it was read from ("loaded." in a
	// sample, "" in a legacy server_cpu_*.json).
	Loaded                   *artifacts.CPUSample
	LoadedName, LoadedPrefix string
	Idle                     *artifacts.CPUSample
	IdleName, IdlePrefix     string
	Sample                   *artifacts.ServerSample // nil for a legacy round
}

// Calibration is one round's bench_cpu_work pair.
type Calibration struct {
	Round                 int
	Status, Reason        string
	TimedName, TargetName string
	Timed, Target         *artifacts.CPUWork
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
	if err := r.readJSON(artifacts.ManifestFile, &r.Manifest, true); err != nil {
		return nil, err
	}
	var ss artifacts.Setups
	switch err := r.readJSON(artifacts.SetupsFile, &ss, false); {
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
	var pb artifacts.PipelineBench
	var ws artifacts.WaitStrategies
	var sus artifacts.Sustained
	r.readOptional([]optionalArtifact{
		{artifacts.SustainedFile, &sus, func() { r.Sustained = &sus }},
		{artifacts.PipelineBenchFile, &pb, func() { r.Pipeline = &pb }},
		{artifacts.WaitStrategiesFile, &ws, func() { r.WaitStrategies = &ws }},
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
	if ss.Version != artifacts.SetupsVersion {
		return fmt.Errorf("artifact %s: version %d, want %d", artifacts.SetupsFile, ss.Version, artifacts.SetupsVersion)
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
			return fmt.Errorf("artifact %s: a run of setup %q, which it does not list", artifacts.SetupsFile, run.Setup)
		}
		rd := &Round{Number: run.Round, Order: run.Order, Status: run.Status, Reason: run.Reason}
		if run.Status == artifacts.StatusMeasured {
			if err := r.loadRound(rd, run); err != nil {
				r.unreadable(err)
				rd.Status, rd.Reason = artifacts.StatusUnreadable, err.Error()
			}
		}
		v.Rounds = append(v.Rounds, rd)
	}
	for _, v := range r.Views {
		slices.SortStableFunc(v.Rounds, func(a, b *Round) int { return a.Number - b.Number })
	}
	for _, c := range ss.Calibrations {
		cal := &Calibration{Round: c.Round, Status: c.Status, Reason: c.Reason, TimedName: c.Timed, TargetName: c.Target}
		var timed, target artifacts.CPUWork
		if err := r.readOptional([]optionalArtifact{
			{c.Timed, &timed, func() { cal.Timed = &timed }},
			{c.Target, &target, func() { cal.Target = &target }},
		}); err != nil {
			cal.Reason = strings.TrimPrefix(cal.Reason+"; "+err.Error(), "; ")
			if cal.Status == artifacts.StatusMeasured {
				cal.Status = artifacts.StatusUnreadable
			}
		}
		r.Calibrations = append(r.Calibrations, cal)
	}
	return nil
}

// loadRound reads a measured run's load result, HDR log and sample, all or
// none: rd is filled only when every one of them reads.
func (r *Run) loadRound(rd *Round, run artifacts.SetupRun) error {
	var lf result.Result
	var sample artifacts.ServerSample
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
	var lf result.Result
	if err := r.readJSON(artifacts.LoadFile, &lf, true); err != nil {
		return err
	}
	rd := &Round{Number: 1, Order: 1, Status: artifacts.StatusMeasured, LoadName: artifacts.LoadFile, Load: &lf}
	cal := &Calibration{Round: 1, Status: artifacts.StatusMeasured}
	var cw, cwt artifacts.CPUWork
	var sl, si artifacts.CPUSample
	r.readOptional([]optionalArtifact{
		{artifacts.CPUWorkFile, &cw, func() { cal.Timed, cal.TimedName = &cw, artifacts.CPUWorkFile }},
		{artifacts.CPUWorkTargetFile, &cwt, func() { cal.Target, cal.TargetName = &cwt, artifacts.CPUWorkTargetFile }},
		{artifacts.ServerCPULoaded, &sl, func() { rd.Loaded, rd.LoadedName = &sl, artifacts.ServerCPULoaded }},
		{artifacts.ServerCPUIdle, &si, func() { rd.Idle, rd.IdleName = &si, artifacts.ServerCPUIdle }},
	})
	log, err := r.readHdrLog(artifacts.HdrLogFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		r.unreadable(err)
	default:
		rd.HdrName, rd.Hdr = artifacts.HdrLogFile, log
	}
	r.Views = []*SetupView{{Setup: r.singleSetup(&lf), Rounds: []*Round{rd}}}
	if cal.Timed != nil || cal.Target != nil {
		r.Calibrations = []*Calibration{cal}
	}
	return nil
}

// singleSetup describes a single-result run's setup from its server config
// (in the manifest) and its load tester's flags (in load.json).
func (r *Run) singleSetup(lf *result.Result) artifacts.Setup {
	num := func(doc any, path string, def int) int {
		if v, err := LookupNumber(doc, path); err == nil {
			return int(v)
		}
		return def
	}
	values := r.raw[artifacts.ManifestFile]
	s := artifacts.Setup{Name: "run", Title: "this run", Cores: artifacts.CoresShared,
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
