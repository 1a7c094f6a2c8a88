package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"weaseldb/gate/cost"
	"weaseldb/gate/result"
	"weaseldb/gate/stats"
	"weaseldb/gate/verdict"
	"weaseldb/internal/affinity"
	"weaseldb/internal/procstat"
	istats "weaseldb/internal/stats"
)

// Run executes the gate on one workload (no --scenarios): a run of one
// scenario, ImplicitScenarioName, made of the flags' --path, --concurrency
// and --load-arg. It never returns nil, and every failure ends up in the
// decision as "could not judge" with a one-line reason.
func Run(ctx context.Context, o Options, progress io.Writer) *result.Result {
	return run(ctx, o, progress, processLab{}, time.Now)
}

// run is Run with the lab and the clock given (tests give synthetic ones).
func run(ctx context.Context, o Options, progress io.Writer, l lab, now func() time.Time) *result.Result {
	return execute(ctx, o, nil, progress, l, nil, now)
}

// RunScenarios runs the gate on every scenario of the file at path. The
// file's [gate] table sets the options whose flags were not given
// (flagSet says which were; nil: none). It never returns nil: a bad file
// or bad options give "could not judge" (bad_input) with a one-line reason.
func RunScenarios(ctx context.Context, o Options, path string, flagSet func(flag string) bool, progress io.Writer) *result.Result {
	if flagSet == nil {
		flagSet = func(string) bool { return false }
	}
	f, err := ReadScenarios(path)
	if err == nil {
		f.Defaults.Apply(&o, flagSet)
		if flagSet("path") {
			err = errors.New("--path: with --scenarios each scenario names its own")
		}
	}
	if err != nil {
		res := &result.Result{Version: result.ResultVersion, Mode: result.ModeScenarios, File: path, Command: o.Command,
			Decision: verdict.Decision{Verdict: verdict.CouldNotJudge, ReasonCode: verdict.ReasonBadInput, Reason: err.Error()}}
		res.ExitCode = res.Decision.ExitCode()
		return res
	}
	return runScenarios(ctx, o, f, progress, processLab{}, cost.ProcessLab{}, time.Now)
}

// runScenarios is RunScenarios with the file read, the lab and the clock
// given (tests give synthetic ones).
func runScenarios(ctx context.Context, o Options, f *ScenarioFile, progress io.Writer, l lab, cl cost.Lab, now func() time.Time) *result.Result {
	return execute(ctx, o, f, progress, l, cl, now)
}

// execute is every gate run: the scenarios of f, or without a file
// (f == nil) the one workload of the options, judged by the mode the
// options give (A/B, baseline, update-baseline) and the time tier alone.
func execute(ctx context.Context, o Options, f *ScenarioFile, progress io.Writer, l lab, cl cost.Lab, now func() time.Time) *result.Result {
	start := now()
	o.drawOrderSeed()
	res := &result.Result{Version: result.ResultVersion, Command: o.Command, RoundsPlan: o.roundsPlan()}
	switch {
	case f != nil:
		res.Mode, res.File = result.ModeScenarios, f.Path
	case o.UpdateBaseline:
		res.Mode = result.ModeUpdateBaseline
	case o.ABMode():
		res.Mode = result.ModeAB
	default:
		res.Mode = result.ModeBaseline
	}
	m := &measurement{o: o, mode: res.Mode, progress: progress, lab: l, now: now}
	var chosen []Scenario
	var err error
	if f != nil {
		m.mode, m.multi = result.ModeAB, true
		chosen, err = f.only(o.Only)
		for i, s := range chosen {
			s = s.resolved(o)
			s.LoadArgs = append(append([]string(nil), s.LoadArgs...), o.LoadArgs...)
			chosen[i] = s
		}
	} else {
		m.o.Tiers = []string{result.TierTime}
		chosen = []Scenario{implicitScenario(o)}
	}
	for _, s := range chosen {
		sc := &scenarioRun{sc: s, r: &result.Judgement{}}
		sc.init(o)
		m.scenarios = append(m.scenarios, sc)
	}
	var costs []*result.CostJudgement
	defer func() {
		m.fillResult(res, costs)
		res.ElapsedS = now().Sub(start).Seconds()
	}()
	switch {
	case err != nil:
	case f != nil && len(m.scenarios) == 0:
		err = errors.New("--scenarios: the file lists no scenario")
	case f != nil && !o.ABMode():
		err = errors.New("--scenarios compares two builds: give --a or --a-ref (baseline mode judges one workload)")
	default:
		err = o.Validate()
	}
	if err != nil {
		res.Decision = verdict.Decision{Verdict: verdict.CouldNotJudge, ReasonCode: verdict.ReasonBadInput, Reason: err.Error()}
		m.failEarly(verdict.ReasonBadInput, "%v", err)
		return res
	}
	costs = runTiers(ctx, m, l, cl, &res.Settings, &res.Machine, progress)
	return res
}

// fillResult puts every scenario's judgement (and cost, where the cost
// tier ran) in the result, and the run's verdict: a file's worst, or the
// one workload's own.
func (m *measurement) fillResult(res *result.Result, costs []*result.CostJudgement) {
	res.Scenarios = make([]result.ScenarioResult, len(m.scenarios))
	for i, sc := range m.scenarios {
		if sc.r.Verdict != "" {
			sc.r.ExitCode = sc.r.Decision.ExitCode()
		}
		res.Scenarios[i] = result.ScenarioResult{Name: sc.sc.Name, Description: sc.sc.Description, Metric: sc.sc.Metric,
			Load: sc.sc.LoadShape, Setup: sc.sc.Setup, Judgement: *sc.r, Tiers: m.o.tierNames()}
		if i < len(costs) {
			res.Scenarios[i].Cost = costs[i]
		}
		res.Rounds = max(res.Rounds, sc.r.Rounds)
		for _, s := range sc.sides {
			if s.name == "A" {
				res.A = s.label
			} else {
				res.B = s.label
			}
		}
		if sc.r.A.FromBaselineFile {
			res.A = sc.r.A.Binary
		}
	}
	res.Baseline = m.baselineFile
	res.Warnings = append(res.Warnings, m.plan.IRQWarnings...)
	switch {
	case len(res.Scenarios) == 0: // the input was bad, and said so
	case res.Mode == result.ModeScenarios:
		res.Decision, res.DecidedBy = combineVerdicts(res.Scenarios)
	default:
		res.Decision = scenarioDecision(&res.Scenarios[0])
	}
	res.ExitCode = res.Decision.ExitCode()
}

// measurement is one gate run: the servers, the load runs and the rounds
// of every scenario (one, without --scenarios).
type measurement struct {
	o            Options
	mode         result.Mode // ModeAB (a scenarios run too), ModeBaseline or ModeUpdateBaseline
	multi        bool        // a scenarios file: scenario names in the progress lines and the servers' files
	progress     io.Writer
	lab          lab
	now          func() time.Time
	dir          string
	seq          int     // load_tester result file counter
	plan         CPUPlan // where the servers and the load tester run
	threads      int     // load_tester network threads (o.Threads resolved)
	baseline     *Baseline
	baselineFile string // the baseline read or written
	scenarios    []*scenarioRun
}

// scenarioRun is one scenario's part of a run: its servers, samples and
// judgement.
type scenarioRun struct {
	sc    Scenario
	r     *result.Judgement
	sides []*sideRun
	// warm: its servers were started, set up and warmed up (round 1 runs
	// on them); done: its rounds are over (decided, or stopped).
	warm, done bool
	// spent is what its measured rounds took (server starts, setup loads
	// and runs; not the warm-up): the budget projects the next rounds
	// from it.
	spent time.Duration
}

// init sets the judgement's policy and plan from the options and the
// scenario's own tolerance.
func (sc *scenarioRun) init(o Options) {
	sc.r.RoundsPlan = o.roundsPlan()
	sc.r.Policy = result.PolicyJSON{Tolerance: sc.sc.Tolerance, Floor: 1 - sc.sc.Tolerance, PassFloor: 1 - verdict.PassFloorFactor*sc.sc.Tolerance,
		NoiseOK: o.NoiseOK, InterimLevel: InterimLevel, MaxClientBound: o.MaxClientBoundFraction}
	if o.AllowClientBound {
		sc.r.Policy.MaxClientBound = 0
	}
}

// saturatedServerCPU is the share of its pinned CPUs a server must use over
// a run (warm-up and the load tester's start included) to count as
// saturated.
const saturatedServerCPU = 0.85

// planCPUs resolves --pin and --threads.
func (m *measurement) planCPUs() error {
	allowed, err := affinity.AllowedCPUs()
	if err != nil && m.o.Pin != "off" {
		return fmt.Errorf("--pin %s: %w", m.o.Pin, err)
	}
	topo := procstat.ReadTopology(procstat.SysRoot, allowed)
	topo.NetIRQs = procstat.NetworkIRQs(procstat.ProcRoot, procstat.SysRoot)
	if m.plan, err = PlanCPUsOn(m.o.Pin, topo); err != nil {
		return err
	}
	m.threads = m.o.Threads
	if m.threads == 0 {
		m.threads = 2
		if m.plan.Pinned() {
			m.threads = min(len(m.plan.Client), 4)
		}
	}
	return nil
}

// logf writes a progress line; in scenario mode, lines about one scenario
// name it.
func (m *measurement) logf(sc *scenarioRun, format string, args ...any) {
	if m.progress == nil {
		return
	}
	prefix := "gate: "
	if m.multi && sc != nil {
		prefix += sc.sc.Name + ": "
	}
	fmt.Fprintf(m.progress, prefix+format+"\n", args...)
}

// fail records a problem that stops the scenario's measurement.
func (m *measurement) fail(sc *scenarioRun, code, format string, args ...any) {
	sc.r.Problems = append(sc.r.Problems, verdict.Problem{Code: code, Detail: fmt.Sprintf(format, args...)})
}

// failEarly records a problem found before any round: every scenario
// stops on it and decides.
func (m *measurement) failEarly(code, format string, args ...any) {
	for _, sc := range m.scenarios {
		m.fail(sc, code, format, args...)
		sc.r.StopReason, sc.r.StopDetail = StopProblem, sc.r.Problems[0].Detail
		sc.r.Decision = m.judge(sc, true, m.o.Level)
		sc.done = true
	}
}

func (m *measurement) run(ctx context.Context, settings *result.Settings, machine *result.Machine) {
	o := m.o
	dir, err := os.MkdirTemp("", "gate-")
	if err != nil {
		m.failEarly(verdict.ReasonBadInput, "temp dir: %v", err)
		return
	}
	defer os.RemoveAll(dir)
	m.dir = dir

	cfgA, cfgB, err := m.configs()
	if err != nil {
		m.failEarly(verdict.ReasonBadInput, "%v", err)
		return
	}
	if err := m.planCPUs(); err != nil {
		m.failEarly(verdict.ReasonBadInput, "%v", err)
		return
	}
	m.logf(nil, "%s, %d load tester thread(s)", m.plan, m.threads)
	*settings = m.settingsFor(cfgB)
	*machine = ThisMachine(o.B)
	if _, err := os.Stat(o.LoadTester); err != nil {
		m.failEarly(verdict.ReasonBadInput, "load tester %s: %v", o.LoadTester, err)
		return
	}
	if !o.RestartEachRound {
		for _, sc := range m.scenarios {
			sc.r.Warnings = append(sc.r.Warnings, "--restart=false: one server process per side for the whole run, so the interval "+
				"does not cover how two processes of one binary differ (docs/gate.md)")
		}
	}
	if m.mode == result.ModeBaseline {
		if m.baseline = m.loadBaseline(*settings, *machine); m.baseline == nil {
			sc := m.scenarios[0]
			sc.r.StopReason, sc.r.StopDetail = StopProblem, sc.r.Problems[0].Detail
			sc.r.Decision = m.judge(sc, true, o.Level)
			return
		}
	}

	binA, labelA := o.A, o.A
	if o.aLabel != "" {
		labelA = o.aLabel
	}
	if o.ARef != "" {
		binA = filepath.Join(dir, "weaseldb-"+sanitize(o.ARef))
		m.logf(nil, "building %s at %s", o.RefPackage, o.ARef)
		commit, err := BuildRef(ctx, o.ARef, o.RefPackage, binA)
		if err != nil {
			m.failEarly(verdict.ReasonBadInput, "%v", err)
			return
		}
		// The binary goes with the temp dir: name what it was built from.
		labelA = fmt.Sprintf("%s at %s (%s)", o.RefPackage, o.ARef, result.ShortHash(commit))
	}
	for _, sc := range m.scenarios {
		b := &sideRun{name: "B", binary: o.B, label: o.B, config: cfgB}
		sc.sides = []*sideRun{b}
		if m.mode == result.ModeAB {
			sc.sides = []*sideRun{{name: "A", binary: binA, label: labelA, config: cfgA}, b}
		}
	}
	defer func() {
		for _, sc := range m.scenarios {
			m.stopAll(sc, "shutdown")
		}
	}()
	m.measureRounds(ctx)
	for _, sc := range m.scenarios {
		m.summarise(sc)
	}
	if m.mode == result.ModeUpdateBaseline {
		sc := m.scenarios[0]
		sc.r.Problems = append(sc.r.Problems, m.clientBoundProblems(sc)...)
		m.writeBaseline(sc, *settings, *machine)
		return
	}
	for _, sc := range m.scenarios {
		sc.r.Decision = m.judge(sc, true, finalLevel(sc.r, o.Level))
	}
}

// stopAll stops the scenario's servers that are running.
func (m *measurement) stopAll(sc *scenarioRun, why string) {
	for _, s := range sc.sides {
		if s.server != nil {
			if err := s.server.stop(5 * time.Second); err != nil && !s.diedEarly {
				sc.r.Warnings = append(sc.r.Warnings, fmt.Sprintf("server %s %s: %v", s.name, why, err))
			}
			s.server = nil
		}
	}
}

// summarise fills in the sides and the statistics of what was measured.
func (m *measurement) summarise(sc *scenarioRun) {
	r := sc.r
	for _, s := range sc.sides {
		side := m.side(sc, s)
		if s.name == "A" {
			r.A = side
		} else {
			r.B = side
		}
	}
	if b := m.baseline; b != nil {
		r.A = result.Side{Name: "baseline", Binary: b.Binary, SamplesRPS: b.SamplesRPS,
			MedianRPS: b.MedianRPS, Spread: stats.RelativeSpread(b.SamplesRPS), FromBaselineFile: true}
	}
	if m.mode == result.ModeAB {
		r.RoundRatios = stats.RoundRatios(r.A.SamplesRPS, r.B.SamplesRPS)
		r.RatioSpread = stats.RelativeSpread(r.RoundRatios)
	}
}

func (m *measurement) side(sc *scenarioRun, s *sideRun) result.Side {
	side := result.Side{Name: s.name, Binary: s.label, SamplesRPS: s.samples, ClientBoundRuns: s.clientBound,
		ErrorRuns: s.errorRuns, UncleanRuns: s.uncleanRuns, MaxOtherIdleCPU: s.maxOtherCPU, Target: s.target}
	side.MedianRPS, side.Spread = istats.Median(s.samples), stats.RelativeSpread(s.samples)
	if sc.sc.Metric != result.MetricRPS {
		side.Metric = sc.sc.Metric
	}
	return side
}

// configs returns the config text for A and B.
func (m *measurement) configs() (a, b []byte, err error) {
	read := func(path string, fallback []byte) ([]byte, error) {
		if path == "" {
			return fallback, nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		return data, nil
	}
	base, err := read(m.o.Config, DefaultConfig())
	if err != nil {
		return nil, nil, err
	}
	if a, err = read(m.o.AConfig, base); err != nil {
		return nil, nil, err
	}
	if b, err = read(m.o.BConfig, base); err != nil {
		return nil, nil, err
	}
	return a, b, nil
}

// settingsFor records what the measurement depends on. In scenario mode
// the load shapes are each scenario's (ScenarioResult.Load), not one path.
func (m *measurement) settingsFor(cfg []byte) result.Settings {
	sum := sha256.Sum256(cfg)
	s := result.Settings{Network: m.o.Network, DurationS: m.o.Duration.Seconds(), WarmupS: m.o.Warmup.Seconds(),
		Concurrency: m.o.Concurrency, Threads: m.threads, Path: m.o.Path, LoadArgs: m.o.LoadArgs,
		ConfigSHA256: hex.EncodeToString(sum[:])}
	if m.multi {
		s.Path, s.LoadArgs = "", nil
	}
	if m.plan.Pinned() {
		s.ServerCPUs, s.ClientCPUs = affinity.FormatCPUList(m.plan.Server), affinity.FormatCPUList(m.plan.Client)
	}
	return s
}

func sanitize(ref string) string {
	return strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' {
			return c
		}
		return '_'
	}, ref)
}
