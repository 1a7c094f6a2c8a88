package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"weaseldb/internal/affinity"

	"weaseldb/internal/stats"
)

// ResultVersion is the schema version of the gate's --json output. 2: the
// interval is benchmath's over per-round ratios (no bootstrap fields),
// adaptive rounds (rounds_plan, stop_reason, looks), unclean runs.
const ResultVersion = 2

// RunRecord is one measured load_tester run.
type RunRecord struct {
	Round          int     `json:"round"`
	Side           string  `json:"side"`
	RequestsPerSec float64 `json:"requests_per_sec"`
	Requests       int64   `json:"requests"`
	Errors         int64   `json:"errors"`
	// Unfinished and Dropped are due requests that got no answer (sent,
	// still unanswered after load_tester's drain) or were never sent: a
	// run with either is not a clean sample of the server's speed.
	Unfinished     int64   `json:"unfinished"`
	Dropped        int64   `json:"dropped"`
	ClientBound    bool    `json:"client_bound"`
	ClientBoundWhy string  `json:"client_bound_reason,omitempty"`
	ClientCPU      float64 `json:"client_cpu_fraction"`
	// ServerCPU is the cores the measured server used over the whole
	// load_tester run (warm-up included), from the kernel's accounting.
	ServerCPU float64 `json:"server_cpu"`
	// ServerCPUWindow and ServerCPUNSPerRequest are the cores it used and
	// its CPU per request over load_tester's measured window alone
	// (cpuTrace); 0 where the window could not be read.
	ServerCPUWindow       float64 `json:"server_cpu_window,omitempty"`
	ServerCPUNSPerRequest float64 `json:"server_cpu_ns_per_request,omitempty"`
	ClientCPUS            float64 `json:"client_cpu_s"`
	// ServerSaturated: the server was pinned and used at least
	// saturatedServerCPU of every CPU it had. A client-bound run of a
	// saturated server still measures the server (both ends were at their
	// limit), so it is not counted as client-bound.
	ServerSaturated bool `json:"server_saturated,omitempty"`
	// OtherServerCPU is the CPU (in cores) the server not being measured
	// used during this run: it should idle at ~0, or it stole from this one.
	OtherServerCPU float64 `json:"other_server_cpu,omitempty"`
	// The run's latency (load_tester's latency_ns; in rate mode from each
	// request's intended send time).
	P50NS int64 `json:"p50_ns,omitempty"`
	P99NS int64 `json:"p99_ns,omitempty"`
}

// Side summarises one contender (in baseline mode, A is the baseline file).
type Side struct {
	Name             string    `json:"name"`
	Binary           string    `json:"binary"`
	Target           string    `json:"target,omitempty"`
	SamplesRPS       []float64 `json:"samples_rps"`
	MedianRPS        float64   `json:"median_rps"`
	Spread           float64   `json:"spread"`
	ClientBoundRuns  int       `json:"client_bound_runs"`
	ErrorRuns        int       `json:"error_runs"`
	UncleanRuns      int       `json:"unclean_runs"`
	MaxOtherIdleCPU  float64   `json:"max_other_server_cpu,omitempty"`
	FromBaselineFile bool      `json:"from_baseline_file,omitempty"`
	// Metric is set when the samples are not req/s: "p50" or "p99", and
	// each sample is then 1e9 over that latency in ns (higher is faster,
	// so B/A reads as for req/s).
	Metric string `json:"metric,omitempty"`
}

// Mode is what a gate run compares with what (Result.Mode and
// ScenariosResult.Mode, as the JSON writes it).
type Mode string

// The modes.
const (
	ModeAB             Mode = "ab"              // two builds in one interleaved run (--a or --a-ref)
	ModeBaseline       Mode = "baseline"        // one build against a recorded baseline
	ModeUpdateBaseline Mode = "update-baseline" // one build's runs recorded as the baseline
	ModeScenarios      Mode = "scenarios"       // a scenarios file: each scenario measured as in ModeAB
)

// Result is everything a gate run of one workload found; cmd/gate prints it
// and writes it as JSON and markdown. (A run of a scenarios file gives a
// ScenariosResult, with a Judgement per scenario.)
type Result struct {
	Version int  `json:"version"`
	Mode    Mode `json:"mode"` // ModeAB, ModeBaseline or ModeUpdateBaseline
	Judgement
	Settings Settings `json:"settings"`
	Machine  Machine  `json:"machine"`
	Command  string   `json:"command,omitempty"`
	ElapsedS float64  `json:"elapsed_s"`
	Baseline string   `json:"baseline_file,omitempty"`
}

// Judgement is what the gate measured and decided about one workload: the
// whole result of a single-workload run, and each scenario's part of a
// scenarios run.
type Judgement struct {
	Decision `json:"decision"`
	ExitCode int      `json:"exit_code"`
	A        Side     `json:"a"`
	B        Side     `json:"b"`
	CI       RatioCI  `json:"ratio"`
	Rank     RankTest `json:"mann_whitney"`
	// RoundRatios are B/A per round (A/B mode), the sample the interval is
	// built from; RatioSpread is their median absolute deviation over
	// their median, the round-to-round noise of the pair.
	RoundRatios []float64  `json:"round_ratios,omitempty"`
	RatioSpread float64    `json:"round_ratio_spread,omitempty"`
	Policy      PolicyJSON `json:"policy"`
	Rounds      int        `json:"rounds"` // rounds measured
	RoundsPlan  RoundsPlan `json:"rounds_plan"`
	StopReason  string     `json:"stop_reason"` // one of the Stop* constants
	StopDetail  string     `json:"stop_detail"`
	// Looks are the interim verdicts the rounds were stopped or extended on.
	Looks []Look `json:"looks,omitempty"`
	// CPU is the server's CPU per request over the measured windows,
	// judged beside req/s (A/B mode; nil when fewer than 3 rounds had it).
	CPU      *CPUJudgement `json:"server_cpu_per_request,omitempty"`
	Runs     []RunRecord   `json:"runs"`
	Problems []Problem     `json:"problems,omitempty"`
	Warnings []string      `json:"warnings,omitempty"`
}

// PolicyJSON records the thresholds a verdict was judged against.
type PolicyJSON struct {
	Tolerance float64 `json:"tolerance"`
	Floor     float64 `json:"fail_below_ratio"`
	PassFloor float64 `json:"pass_needs_ci_low_at_least"`
	NoiseOK   bool    `json:"noise_ok"`
	// InterimLevel is the interval's level at looks after which more
	// rounds could follow; the last look uses the ratio's ci_level.
	InterimLevel float64 `json:"interim_ci_level"`
	// MaxClientBound is the share of a side's runs that may be client-bound
	// before it is not judged (0 when --allow-client-bound).
	MaxClientBound float64 `json:"max_client_bound_fraction"`
}

// RoundsPlan is what the options allowed: rounds before the first look, the
// cap, and the measuring time budget.
type RoundsPlan struct {
	Initial int     `json:"initial"`
	Max     int     `json:"max"`
	BudgetS float64 `json:"budget_s,omitempty"`
	// Order and OrderSeed say how A and B took turns (Options.Order); the
	// seed reproduces a random order.
	Order     string `json:"order,omitempty"`
	OrderSeed uint64 `json:"order_seed,omitempty"`
}

// Look is one interim verdict: after Rounds rounds, the ratio and interval
// and what the rule said.
type Look struct {
	Rounds int     `json:"rounds"`
	Level  float64 `json:"ci_level"`
	Ratio  float64 `json:"ratio"`
	Low    float64 `json:"ci_low"`
	High   float64 `json:"ci_high"`
	Reason string  `json:"reason_code"`
}

// Run executes the gate on one workload (no --scenarios): it never returns
// nil, and every failure ends up in the decision as "could not judge" with
// a one-line reason.
func Run(ctx context.Context, o Options, progress io.Writer) *Result {
	return run(ctx, o, progress, processLab{}, time.Now)
}

// run is Run with the lab and the clock given (tests give synthetic ones).
func run(ctx context.Context, o Options, progress io.Writer, l lab, now func() time.Time) *Result {
	start := now()
	o.drawOrderSeed()
	r := &Result{Version: ResultVersion, Command: o.Command}
	switch {
	case o.UpdateBaseline:
		r.Mode = ModeUpdateBaseline
	case o.ABMode():
		r.Mode = ModeAB
	default:
		r.Mode = ModeBaseline
	}
	sc := &scenarioRun{sc: implicitScenario(o), r: &r.Judgement}
	sc.init(o)
	defer func() {
		r.ExitCode = r.Decision.ExitCode()
		r.ElapsedS = now().Sub(start).Seconds()
	}()
	if err := o.Validate(); err != nil {
		sc.r.Decision = Decision{Verdict: CouldNotJudge, ReasonCode: ReasonBadInput, Reason: err.Error()}
		sc.r.StopReason = StopProblem
		return r
	}
	m := &measurement{o: o, mode: r.Mode, progress: progress, lab: l, now: now, scenarios: []*scenarioRun{sc}}
	m.run(ctx, &r.Settings, &r.Machine)
	r.Baseline = m.baselineFile
	return r
}

// measurement is one gate run: the servers, the load runs and the rounds
// of every scenario (one, without --scenarios).
type measurement struct {
	o            Options
	mode         Mode // ModeAB (a scenarios run too), ModeBaseline or ModeUpdateBaseline
	multi        bool // a scenarios file: scenario names in the progress lines and the servers' files
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
	r     *Judgement
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
	sc.r.Policy = PolicyJSON{Tolerance: sc.sc.Tolerance, Floor: 1 - sc.sc.Tolerance, PassFloor: 1 - PassFloorFactor*sc.sc.Tolerance,
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
	if m.plan, err = PlanCPUs(m.o.Pin, allowed); err != nil {
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
	sc.r.Problems = append(sc.r.Problems, Problem{Code: code, Detail: fmt.Sprintf(format, args...)})
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

func (m *measurement) run(ctx context.Context, settings *Settings, machine *Machine) {
	o := m.o
	dir, err := os.MkdirTemp("", "gate-")
	if err != nil {
		m.failEarly(ReasonBadInput, "temp dir: %v", err)
		return
	}
	defer os.RemoveAll(dir)
	m.dir = dir

	cfgA, cfgB, err := m.configs()
	if err != nil {
		m.failEarly(ReasonBadInput, "%v", err)
		return
	}
	if err := m.planCPUs(); err != nil {
		m.failEarly(ReasonBadInput, "%v", err)
		return
	}
	m.logf(nil, "%s, %d load tester thread(s)", m.plan, m.threads)
	*settings = m.settingsFor(cfgB)
	*machine = ThisMachine(o.B)
	if _, err := os.Stat(o.LoadTester); err != nil {
		m.failEarly(ReasonBadInput, "load tester %s: %v", o.LoadTester, err)
		return
	}
	if !o.RestartEachRound {
		for _, sc := range m.scenarios {
			sc.r.Warnings = append(sc.r.Warnings, "--restart=false: one server process per side for the whole run, so the interval "+
				"does not cover how two processes of one binary differ (docs/gate.md)")
		}
	}
	if m.mode == ModeBaseline {
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
			m.failEarly(ReasonBadInput, "%v", err)
			return
		}
		// The binary goes with the temp dir: name what it was built from.
		labelA = fmt.Sprintf("%s at %s (%s)", o.RefPackage, o.ARef, short(commit))
	}
	for _, sc := range m.scenarios {
		b := &sideRun{name: "B", binary: o.B, label: o.B, config: cfgB}
		sc.sides = []*sideRun{b}
		if m.mode == ModeAB {
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
	if m.mode == ModeUpdateBaseline {
		sc := m.scenarios[0]
		sc.r.Problems = append(sc.r.Problems, m.clientBoundProblems(sc)...)
		m.writeBaseline(sc, *settings, *machine)
		return
	}
	for _, sc := range m.scenarios {
		sc.r.Decision = m.judge(sc, true, finalLevel(sc.r, o.Level))
	}
}

// finalLevel is the level of the look the rounds stopped at (level when
// there was none).
func finalLevel(r *Judgement, level float64) float64 {
	if n := len(r.Looks); n > 0 {
		return r.Looks[n-1].Level
	}
	return level
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
		r.A = Side{Name: "baseline", Binary: b.Binary, SamplesRPS: b.SamplesRPS,
			MedianRPS: b.MedianRPS, Spread: RelativeSpread(b.SamplesRPS), FromBaselineFile: true}
	}
	if m.mode == ModeAB {
		r.RoundRatios = RoundRatios(r.A.SamplesRPS, r.B.SamplesRPS)
		r.RatioSpread = RelativeSpread(r.RoundRatios)
	}
}

func (m *measurement) side(sc *scenarioRun, s *sideRun) Side {
	side := Side{Name: s.name, Binary: s.label, SamplesRPS: s.samples, ClientBoundRuns: s.clientBound,
		ErrorRuns: s.errorRuns, UncleanRuns: s.uncleanRuns, MaxOtherIdleCPU: s.maxOtherCPU, Target: s.target}
	side.MedianRPS, side.Spread = stats.Median(s.samples), RelativeSpread(s.samples)
	if sc.sc.Metric != MetricRPS {
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
func (m *measurement) settingsFor(cfg []byte) Settings {
	sum := sha256.Sum256(cfg)
	s := Settings{Network: m.o.Network, DurationS: m.o.Duration.Seconds(), WarmupS: m.o.Warmup.Seconds(),
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

// loadBaseline reads the baseline and checks that it is comparable; nil
// means a problem was recorded.
func (m *measurement) loadBaseline(settings Settings, machine Machine) *Baseline {
	sc := m.scenarios[0]
	b, err := ReadBaseline(m.o.BaselineFile)
	if err != nil {
		m.fail(sc, ReasonBadInput, "%v", err)
		return nil
	}
	m.baselineFile = m.o.BaselineFile
	different, warnings := b.Machine.Compare(machine)
	sc.r.Warnings = append(sc.r.Warnings, warnings...)
	if len(different) > 0 {
		msg := "baseline is from another machine: " + strings.Join(different, "; ")
		if !m.o.AllowOtherMachine {
			m.fail(sc, ReasonOtherMachine, "%s (--allow-other-machine to compare anyway)", msg)
			return nil
		}
		sc.r.Warnings = append(sc.r.Warnings, msg)
	}
	if diff := b.Settings.Differences(settings); len(diff) > 0 {
		m.fail(sc, ReasonOtherSettings, "baseline was measured with other settings: %s", strings.Join(diff, "; "))
		return nil
	}
	return &b
}

func (m *measurement) writeBaseline(sc *scenarioRun, settings Settings, machine Machine) {
	r := sc.r
	for _, p := range r.Problems {
		if !(m.o.NoiseOK && noiseReasons[p.Code]) {
			r.Decision = Decision{Verdict: CouldNotJudge, ReasonCode: p.Code, Reason: "baseline not written: " + p.Detail}
			return
		}
	}
	b := Baseline{Created: m.now().UTC().Truncate(time.Second), Command: m.o.Command, Binary: m.o.B,
		Machine: machine, Settings: settings, SamplesRPS: r.B.SamplesRPS}
	if err := WriteBaseline(m.o.BaselineFile, b); err != nil {
		r.Decision = Decision{Verdict: CouldNotJudge, ReasonCode: ReasonBadInput, Reason: err.Error()}
		return
	}
	m.baselineFile = m.o.BaselineFile
	r.Decision = Decision{Verdict: Pass, ReasonCode: "baseline_written",
		Reason: fmt.Sprintf("baseline written to %s: median %s req/s over %d runs (±%.1f%%)",
			m.o.BaselineFile, formatRPS(r.B.MedianRPS), len(r.B.SamplesRPS), r.B.Spread*100)}
}

func sanitize(ref string) string {
	return strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' {
			return c
		}
		return '_'
	}, ref)
}
