package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"weaseldb/internal/procstat"
	"weaseldb/server/affinity"
)

// ResultVersion is the schema version of the gate's --json output.
const ResultVersion = 1

// Run is one measured load_tester run.
type RunRecord struct {
	Round          int     `json:"round"`
	Side           string  `json:"side"`
	RequestsPerSec float64 `json:"requests_per_sec"`
	Requests       int64   `json:"requests"`
	Errors         int64   `json:"errors"`
	ClientBound    bool    `json:"client_bound"`
	ClientBoundWhy string  `json:"client_bound_reason,omitempty"`
	ClientCPU      float64 `json:"client_cpu_fraction"`
	// ServerCPU is the cores the measured server used over the whole
	// load_tester run (warm-up included), from the kernel's accounting.
	ServerCPU  float64 `json:"server_cpu"`
	ClientCPUS float64 `json:"client_cpu_s"`
	// ServerSaturated: the server was pinned and used at least
	// saturatedServerCPU of every CPU it had. A client-bound run of a
	// saturated server still measures the server (both ends were at their
	// limit), so it is not counted as client-bound.
	ServerSaturated bool `json:"server_saturated,omitempty"`
	// OtherServerCPU is the CPU (in cores) the server not being measured
	// used during this run: it should idle at ~0, or it stole from this one.
	OtherServerCPU float64 `json:"other_server_cpu,omitempty"`
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
	MaxOtherIdleCPU  float64   `json:"max_other_server_cpu,omitempty"`
	FromBaselineFile bool      `json:"from_baseline_file,omitempty"`
}

// Result is everything a gate run found; cmd/gate prints it and writes it
// as JSON.
type Result struct {
	Version  int    `json:"version"`
	Mode     string `json:"mode"` // "ab", "baseline" or "update-baseline"
	Decision `json:"decision"`
	ExitCode int         `json:"exit_code"`
	A        Side        `json:"a"`
	B        Side        `json:"b"`
	CI       RatioCI     `json:"ratio"`
	Rank     RankTest    `json:"mann_whitney"`
	Policy   PolicyJSON  `json:"policy"`
	Rounds   int         `json:"rounds"`
	Runs     []RunRecord `json:"runs"`
	Settings Settings    `json:"settings"`
	Machine  Machine     `json:"machine"`
	Problems []Problem   `json:"problems,omitempty"`
	Warnings []string    `json:"warnings,omitempty"`
	Command  string      `json:"command,omitempty"`
	ElapsedS float64     `json:"elapsed_s"`
	Baseline string      `json:"baseline_file,omitempty"`
}

// PolicyJSON records the thresholds a verdict was judged against.
type PolicyJSON struct {
	Tolerance float64 `json:"tolerance"`
	Floor     float64 `json:"fail_below_ratio"`
	PassFloor float64 `json:"pass_needs_ci_low_at_least"`
	NoiseOK   bool    `json:"noise_ok"`
}

// Run executes the gate: it never returns nil, and every failure ends up in
// the decision as "could not judge" with a one-line reason.
func Run(ctx context.Context, o Options, progress io.Writer) *Result {
	start := time.Now()
	r := &Result{Version: ResultVersion, Rounds: o.Rounds, Command: o.Command,
		Policy: PolicyJSON{Tolerance: o.Tolerance, Floor: 1 - o.Tolerance, PassFloor: 1 - PassFloorFactor*o.Tolerance, NoiseOK: o.NoiseOK}}
	switch {
	case o.UpdateBaseline:
		r.Mode = "update-baseline"
	case o.ABMode():
		r.Mode = "ab"
	default:
		r.Mode = "baseline"
	}
	defer func() {
		r.ExitCode = r.Decision.ExitCode()
		r.ElapsedS = time.Since(start).Seconds()
	}()
	if err := o.Validate(); err != nil {
		r.Decision = Decision{Verdict: CouldNotJudge, ReasonCode: ReasonBadInput, Reason: err.Error()}
		return r
	}
	m := &measurement{o: o, r: r, progress: progress}
	m.run(ctx)
	return r
}

type measurement struct {
	o        Options
	r        *Result
	progress io.Writer
	dir      string
	seq      int     // load_tester result file counter
	plan     CPUPlan // where the servers and the load tester run
	threads  int     // load_tester network threads (o.Threads resolved)
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

func (m *measurement) logf(format string, args ...any) {
	if m.progress != nil {
		fmt.Fprintf(m.progress, "gate: "+format+"\n", args...)
	}
}

// fail records a problem that stops the measurement.
func (m *measurement) fail(code, format string, args ...any) {
	m.r.Problems = append(m.r.Problems, Problem{Code: code, Detail: fmt.Sprintf(format, args...)})
}

func (m *measurement) run(ctx context.Context) {
	o, r := m.o, m.r
	dir, err := os.MkdirTemp("", "gate-")
	if err != nil {
		m.fail(ReasonBadInput, "temp dir: %v", err)
		m.decide()
		return
	}
	defer os.RemoveAll(dir)
	m.dir = dir

	cfgA, cfgB, err := m.configs()
	if err != nil {
		m.fail(ReasonBadInput, "%v", err)
		m.decide()
		return
	}
	if err := m.planCPUs(); err != nil {
		m.fail(ReasonBadInput, "%v", err)
		m.decide()
		return
	}
	m.logf("%s, %d load tester thread(s)", m.plan, m.threads)
	r.Settings = m.settings(cfgB)
	r.Machine = ThisMachine(o.B)
	if _, err := os.Stat(o.LoadTester); err != nil {
		m.fail(ReasonBadInput, "load tester %s: %v", o.LoadTester, err)
		m.decide()
		return
	}

	var baseline *Baseline
	if r.Mode == "baseline" {
		baseline = m.loadBaseline()
		if baseline == nil {
			m.decide()
			return
		}
	}

	sides := []*sideRun{{name: "B", binary: o.B, config: cfgB}}
	if r.Mode == "ab" {
		binA := o.A
		if o.ARef != "" {
			binA = filepath.Join(dir, "weaseldb-"+sanitize(o.ARef))
			m.logf("building %s at %s", o.RefPackage, o.ARef)
			if err := BuildRef(ctx, o.ARef, o.RefPackage, binA); err != nil {
				m.fail(ReasonBadInput, "%v", err)
				m.decide()
				return
			}
		}
		sides = []*sideRun{{name: "A", binary: binA, config: cfgA}, sides[0]}
	}
	defer func() {
		for _, s := range sides {
			if s.server != nil {
				if err := s.server.Stop(5 * time.Second); err != nil && !s.diedEarly {
					r.Warnings = append(r.Warnings, fmt.Sprintf("server %s shutdown: %v", s.name, err))
				}
			}
		}
	}()
	if m.startAll(sides) && m.warmUp(ctx, sides) {
		m.measureRounds(ctx, sides)
	}
	for _, s := range sides {
		side := Side{Name: s.name, Binary: s.binary, SamplesRPS: s.samples, ClientBoundRuns: s.clientBound,
			ErrorRuns: s.errorRuns, MaxOtherIdleCPU: s.maxOtherCPU}
		if s.server != nil {
			side.Target = s.server.Target.String()
		}
		side.MedianRPS, side.Spread = Median(s.samples), RelativeSpread(s.samples)
		if s.name == "A" {
			r.A = side
		} else {
			r.B = side
		}
	}
	if baseline != nil {
		r.A = Side{Name: "baseline", Binary: baseline.Binary, SamplesRPS: baseline.SamplesRPS,
			MedianRPS: baseline.MedianRPS, Spread: RelativeSpread(baseline.SamplesRPS), FromBaselineFile: true}
	}
	m.checkClientBound()
	if r.Mode == "update-baseline" {
		m.writeBaseline()
		return
	}
	m.decide()
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

func (m *measurement) settings(cfg []byte) Settings {
	sum := sha256.Sum256(cfg)
	s := Settings{Network: m.o.Network, DurationS: m.o.Duration.Seconds(), WarmupS: m.o.Warmup.Seconds(),
		Concurrency: m.o.Concurrency, Threads: m.threads, Path: m.o.Path, LoadArgs: m.o.LoadArgs,
		ConfigSHA256: hex.EncodeToString(sum[:])}
	if m.plan.Pinned() {
		s.ServerCPUs, s.ClientCPUs = affinity.FormatCPUList(m.plan.Server), affinity.FormatCPUList(m.plan.Client)
	}
	return s
}

// loadBaseline reads the baseline and checks that it is comparable; nil
// means a problem was recorded.
func (m *measurement) loadBaseline() *Baseline {
	r := m.r
	b, err := ReadBaseline(m.o.BaselineFile)
	if err != nil {
		m.fail(ReasonBadInput, "%v", err)
		return nil
	}
	r.Baseline = m.o.BaselineFile
	different, warnings := b.Machine.Compare(r.Machine)
	r.Warnings = append(r.Warnings, warnings...)
	if len(different) > 0 {
		msg := "baseline is from another machine: " + strings.Join(different, "; ")
		if !m.o.AllowOtherMachine {
			m.fail(ReasonOtherMachine, "%s (--allow-other-machine to compare anyway)", msg)
			return nil
		}
		r.Warnings = append(r.Warnings, msg)
	}
	if diff := b.Settings.Differences(r.Settings); len(diff) > 0 {
		m.fail(ReasonOtherSettings, "baseline was measured with other settings: %s", strings.Join(diff, "; "))
		return nil
	}
	return &b
}

type sideRun struct {
	name, binary string
	config       []byte
	server       *Server
	samples      []float64
	clientBound  int
	errorRuns    int
	maxOtherCPU  float64
	diedEarly    bool
}

func (m *measurement) startAll(sides []*sideRun) bool {
	for _, s := range sides {
		if s.server != nil {
			if err := s.server.Stop(5 * time.Second); err != nil {
				m.r.Warnings = append(m.r.Warnings, fmt.Sprintf("server %s restart: %v", s.name, err))
			}
			s.server = nil
		}
		srv, err := StartServer(ServerSpec{Name: s.name, Binary: s.binary, ConfigData: s.config,
			Network: m.o.Network, Dir: m.dir, ReadyLine: m.o.ReadyLine, StartTimeout: m.o.StartTimeout, CPUs: m.plan.Server})
		if err != nil {
			m.fail(ReasonServerStart, "%v", err)
			return false
		}
		s.server = srv
		if !m.o.RestartEachRound {
			m.logf("server %s (%s) ready on %s", s.name, s.binary, srv.Target)
		}
	}
	return true
}

// warmUp gives each freshly started server one discarded run: first
// connections, page faults, heap growth and the Go scheduler's spin-up stay
// out of the measured rounds.
func (m *measurement) warmUp(ctx context.Context, sides []*sideRun) bool {
	if m.o.WarmupRun <= 0 {
		return true
	}
	for _, s := range sides {
		spec := m.loadSpec(s)
		spec.Duration, spec.Warmup = m.o.WarmupRun, 0
		if _, err := RunLoad(ctx, spec); err != nil {
			m.runFailed(s, "warm-up", err)
			return false
		}
	}
	return true
}

func (m *measurement) loadSpec(s *sideRun) LoadSpec {
	m.seq++
	return LoadSpec{Binary: m.o.LoadTester, Target: s.server.Target, Duration: m.o.Duration, Warmup: m.o.Warmup,
		Concurrency: m.o.Concurrency, Threads: m.threads, CPUs: m.plan.Client, Path: m.o.Path, Extra: m.o.LoadArgs,
		JSONPath: filepath.Join(m.dir, fmt.Sprintf("run-%03d.json", m.seq))}
}

// runFailed records why a run failed: the server died, or load_tester did.
func (m *measurement) runFailed(s *sideRun, what string, err error) {
	if s.server.exitedWithin(500 * time.Millisecond) {
		s.diedEarly = true
		m.fail(ReasonServerDied, "%s", s.server.DiedReason())
		return
	}
	m.fail(ReasonLoadFailed, "server %s, %s: %v", s.name, what, err)
}

// measureRounds runs the rounds, alternating the order (A B, B A, A B, ...)
// so that neither side always runs right after the other; each pair of
// adjacent runs is one round of the paired comparison.
func (m *measurement) measureRounds(ctx context.Context, sides []*sideRun) {
	for round := 1; round <= m.o.Rounds; round++ {
		order := sides
		if len(sides) == 2 && round%2 == 0 {
			order = []*sideRun{sides[1], sides[0]}
		}
		if m.o.RestartEachRound && round > 1 && !m.startAll(order) {
			return
		}
		var line []string
		for _, s := range order {
			rec, ok := m.measureOne(ctx, round, s, sides)
			if !ok {
				return
			}
			line = append(line, fmt.Sprintf("%s %s req/s", s.name, formatRPS(rec.RequestsPerSec)))
		}
		m.logf("round %d/%d: %s", round, m.o.Rounds, strings.Join(line, ", "))
	}
}

func (m *measurement) measureOne(ctx context.Context, round int, s *sideRun, sides []*sideRun) (RunRecord, bool) {
	var other *sideRun
	for _, o := range sides {
		if o != s {
			other = o
		}
	}
	var otherBefore time.Duration
	if other != nil {
		otherBefore, _ = procstat.PidCPU(other.server.Pid())
	}
	selfBefore, selfErr := procstat.PidCPU(s.server.Pid())
	began := time.Now()
	res, err := RunLoad(ctx, m.loadSpec(s))
	if err != nil {
		m.runFailed(s, fmt.Sprintf("round %d", round), err)
		return RunRecord{}, false
	}
	rec := RunRecord{Round: round, Side: s.name, RequestsPerSec: res.RequestsPerSec, Requests: res.Requests,
		Errors: res.Errors, ClientBound: res.ClientBound, ClientBoundWhy: res.ClientBoundReason,
		ClientCPU: res.ClientCPUFraction, ClientCPUS: res.ClientCPUS}
	if after, err := procstat.PidCPU(s.server.Pid()); err == nil && selfErr == nil {
		rec.ServerCPU = (after - selfBefore).Seconds() / time.Since(began).Seconds()
		rec.ServerSaturated = m.plan.Pinned() && rec.ServerCPU >= saturatedServerCPU*float64(len(m.plan.Server))
	}
	if other != nil {
		if after, err := procstat.PidCPU(other.server.Pid()); err == nil {
			rec.OtherServerCPU = (after - otherBefore).Seconds() / time.Since(began).Seconds()
			s.maxOtherCPU = math.Max(s.maxOtherCPU, rec.OtherServerCPU)
		}
	}
	m.r.Runs = append(m.r.Runs, rec)
	if res.Errors > 0 && !s.server.exitedWithin(500*time.Millisecond) {
		s.errorRuns++
		m.fail(ReasonErrors, "server %s: %d errors in round %d (of %d requests)", s.name, res.Errors, round, res.Requests)
		return rec, false
	}
	if !s.server.Alive() {
		s.diedEarly = true
		m.fail(ReasonServerDied, "%s", s.server.DiedReason())
		return rec, false
	}
	s.samples = append(s.samples, res.RequestsPerSec)
	if res.ClientBound && !rec.ServerSaturated {
		s.clientBound++
	}
	return rec, true
}

// checkClientBound turns a side measured mostly at the client's limit into
// a problem: its req/s says how fast the load tester is, not the server.
func (m *measurement) checkClientBound() {
	if m.o.AllowClientBound {
		return
	}
	for _, s := range []Side{m.r.A, m.r.B} {
		n := len(s.SamplesRPS)
		if n > 0 && !s.FromBaselineFile && float64(s.ClientBoundRuns) > m.o.MaxClientBoundFraction*float64(n) {
			m.fail(ReasonClientBound, "the load tester was the bottleneck in %d of %d runs of %s%s", s.ClientBoundRuns, n, s.Name, m.clientBoundWhy(s.Name))
		}
	}
}

// clientBoundWhy is ": <load_tester's reason>" from the side's last
// client-bound run, or "".
func (m *measurement) clientBoundWhy(side string) string {
	for i := len(m.r.Runs) - 1; i >= 0; i-- {
		if run := m.r.Runs[i]; run.Side == side && run.ClientBound && run.ClientBoundWhy != "" {
			return ": " + run.ClientBoundWhy
		}
	}
	return " (client_bound)"
}

func (m *measurement) decide() {
	r := m.r
	policy := Policy{Tolerance: m.o.Tolerance, NoiseOK: m.o.NoiseOK}
	if len(r.A.SamplesRPS) > 0 && len(r.B.SamplesRPS) > 0 {
		r.CI = BootstrapRatio(r.A.SamplesRPS, r.B.SamplesRPS, r.Mode == "ab", m.o.Resamples, m.o.Level, m.o.Seed)
		r.Rank = MannWhitneyLess(r.A.SamplesRPS, r.B.SamplesRPS)
	} else {
		r.CI = RatioCI{Ratio: math.NaN(), Low: math.NaN(), High: math.NaN(), Level: m.o.Level}
	}
	r.Decision = DecideWithProblems(r.CI, policy, r.Problems)
}

func (m *measurement) writeBaseline() {
	r := m.r
	for _, p := range r.Problems {
		if !(m.o.NoiseOK && noiseReasons[p.Code]) {
			r.Decision = Decision{Verdict: CouldNotJudge, ReasonCode: p.Code, Reason: "baseline not written: " + p.Detail}
			return
		}
	}
	b := Baseline{Created: time.Now().UTC().Truncate(time.Second), Command: m.o.Command, Binary: m.o.B,
		Machine: r.Machine, Settings: r.Settings, SamplesRPS: r.B.SamplesRPS}
	if err := WriteBaseline(m.o.BaselineFile, b); err != nil {
		r.Decision = Decision{Verdict: CouldNotJudge, ReasonCode: ReasonBadInput, Reason: err.Error()}
		return
	}
	r.Baseline = m.o.BaselineFile
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
