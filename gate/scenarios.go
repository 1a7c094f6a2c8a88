package gate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ScenariosResultVersion is the schema version of the --json output of a
// scenarios run (a single-workload run writes ResultVersion's schema).
const ScenariosResultVersion = 3

// ScenariosResult is what a run of a scenarios file found: a judgement per
// scenario, and the run's verdict, the worst of theirs.
type ScenariosResult struct {
	Version  int  `json:"version"`
	Mode     Mode `json:"mode"` // ModeScenarios
	Decision `json:"decision"`
	ExitCode int `json:"exit_code"`
	// DecidedBy is the scenario whose verdict is the run's: the first (in
	// the file's order) with the worst verdict; when every scenario
	// passed, the closest call (the lowest ratio). Empty when the run
	// failed before any scenario was measured.
	DecidedBy  string           `json:"decided_by,omitempty"`
	File       string           `json:"scenarios_file"`
	A          string           `json:"a"` // the binaries, as the sides name them
	B          string           `json:"b"`
	Scenarios  []ScenarioResult `json:"scenarios"`
	Rounds     int              `json:"rounds"` // the most rounds a scenario measured
	RoundsPlan RoundsPlan       `json:"rounds_plan"`
	Settings   Settings         `json:"settings"`
	Machine    Machine          `json:"machine"`
	Warnings   []string         `json:"warnings,omitempty"`
	Command    string           `json:"command,omitempty"`
	ElapsedS   float64          `json:"elapsed_s"`
}

// ScenarioResult is one scenario's load and judgement.
type ScenarioResult struct {
	Name        string      `json:"name"`
	Description string      `json:"description,omitempty"`
	Metric      string      `json:"metric"`
	Load        LoadShape   `json:"load"`
	Setup       []SetupLoad `json:"setup,omitempty"`
	// Tiers are the tiers this scenario was judged by (TierTime, TierCost).
	Tiers []string `json:"tiers"`
	// Judgement is the time tier's (empty when it did not run).
	Judgement
	// Cost is the cost tier's judgement (nil when it did not run).
	Cost *CostJudgement `json:"cost,omitempty"`
}

// Reason codes of a scenario whose cost decided.
const (
	ReasonCostWithin = "cost_within_tolerance"
	ReasonCostHigher = "cost_higher"
	ReasonCostNoisy  = "cost_noisy"
	ReasonCostFailed = "cost_could_not_judge"
)

// costDecision is the cost tier's verdict as a Decision.
func (c *CostJudgement) decision() Decision {
	d := Decision{Verdict: c.Verdict.Verdict(), Reason: "cost: " + c.Reason}
	switch {
	case c.Verdict == CostPass:
		d.ReasonCode = ReasonCostWithin
	case c.Verdict == CostRegression:
		d.ReasonCode = ReasonCostHigher
	case c.A.Spread > c.MaxSpread || c.B.Spread > c.MaxSpread:
		d.ReasonCode = ReasonCostNoisy
	default:
		d.ReasonCode = ReasonCostFailed
	}
	return d
}

// decision is the scenario's verdict over its tiers: the worst of them
// (the time tier's first when they tie).
func (s *ScenarioResult) decision() Decision {
	ranTime := slices.Contains(s.Tiers, TierTime) || len(s.Tiers) == 0
	if s.Cost == nil {
		return s.Decision
	}
	c := s.Cost.decision()
	if !ranTime || verdictRank(c.Verdict) > verdictRank(s.Decision.Verdict) {
		c.NoiseForgiven = s.NoiseForgiven
		return c
	}
	return s.Decision
}

// closeness orders passing scenarios for "the closest call": the time
// tier's ratio (lower is closer), else the cost tier's (higher is closer).
func (s *ScenarioResult) closeness() float64 {
	if slices.Contains(s.Tiers, TierTime) || s.Cost == nil {
		return s.CI.Ratio
	}
	return 1 / s.Cost.Ratio
}

// RunScenarios runs the gate on every scenario of the file at path. The
// file's [gate] table sets the options whose flags were not given
// (flagSet says which were; nil: none). It never returns nil: a bad file
// or bad options give "could not judge" (bad_input) with a one-line reason.
func RunScenarios(ctx context.Context, o Options, path string, flagSet func(flag string) bool, progress io.Writer) *ScenariosResult {
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
		res := &ScenariosResult{Version: ScenariosResultVersion, Mode: ModeScenarios, File: path, Command: o.Command,
			Decision: Decision{Verdict: CouldNotJudge, ReasonCode: ReasonBadInput, Reason: err.Error()}}
		res.ExitCode = res.Decision.ExitCode()
		return res
	}
	return runScenarios(ctx, o, f, progress, processLab{}, processCostLab{}, time.Now)
}

// runScenarios is RunScenarios with the file read, the lab and the clock
// given (tests give synthetic ones).
func runScenarios(ctx context.Context, o Options, f *ScenarioFile, progress io.Writer, l lab, cl costLab, now func() time.Time) *ScenariosResult {
	start := now()
	o.drawOrderSeed()
	res := &ScenariosResult{Version: ScenariosResultVersion, Mode: ModeScenarios, File: f.Path, Command: o.Command,
		RoundsPlan: o.roundsPlan()}
	m := &measurement{o: o, mode: ModeAB, multi: true, progress: progress, lab: l, now: now}
	chosen, err := f.only(o.Only)
	for _, s := range chosen {
		s = s.resolved(o)
		s.LoadArgs = append(append([]string(nil), s.LoadArgs...), o.LoadArgs...)
		sc := &scenarioRun{sc: s, r: &Judgement{}}
		sc.init(o)
		m.scenarios = append(m.scenarios, sc)
	}
	var costs []*CostJudgement
	defer func() {
		res.Scenarios = make([]ScenarioResult, len(m.scenarios))
		for i, sc := range m.scenarios {
			res.Scenarios[i] = ScenarioResult{Name: sc.sc.Name, Description: sc.sc.Description, Metric: sc.sc.Metric,
				Load: sc.sc.LoadShape, Setup: sc.sc.Setup, Judgement: *sc.r, Tiers: o.tierNames()}
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
		}
		if len(res.Scenarios) > 0 { // else the input was bad, and said so
			res.Decision, res.DecidedBy = combineVerdicts(res.Scenarios)
		}
		res.ExitCode = res.Decision.ExitCode()
		res.ElapsedS = now().Sub(start).Seconds()
	}()
	switch {
	case err != nil:
	case len(m.scenarios) == 0:
		err = errors.New("--scenarios: the file lists no scenario")
	case !o.ABMode():
		err = errors.New("--scenarios compares two builds: give --a or --a-ref (baseline mode judges one workload)")
	default:
		err = o.Validate()
	}
	if err != nil {
		res.Decision = Decision{Verdict: CouldNotJudge, ReasonCode: ReasonBadInput, Reason: err.Error()}
		m.failEarly(ReasonBadInput, "%v", err)
		return res
	}
	costs = runTiers(ctx, m, l, cl, &res.Settings, &res.Machine, progress)
	return res
}

// runTiers runs the time tier (the rounds) and then the cost tier on the
// same two binaries; A is built from --a-ref once, for both.
func runTiers(ctx context.Context, m *measurement, l lab, cl costLab, settings *Settings, machine *Machine, progress io.Writer) []*CostJudgement {
	o := &m.o
	if !o.hasTier(TierCost) {
		m.run(ctx, settings, machine)
		return nil
	}
	dir, err := os.MkdirTemp("", "gate-cost-")
	if err != nil {
		m.failEarly(ReasonBadInput, "temp dir: %v", err)
		return nil
	}
	defer os.RemoveAll(dir)
	costDir := dir
	if o.Cost.KeepDir != "" {
		if costDir, err = filepath.Abs(o.Cost.KeepDir); err == nil {
			err = os.MkdirAll(costDir, 0o755)
		}
		if err != nil {
			m.failEarly(ReasonBadInput, "--cost-keep: %v", err)
			return nil
		}
	}
	if o.ARef != "" {
		bin := filepath.Join(dir, "weaseldb-"+sanitize(o.ARef))
		m.logf(nil, "building %s at %s", o.RefPackage, o.ARef)
		commit, err := BuildRef(ctx, o.ARef, o.RefPackage, bin)
		if err != nil {
			m.failEarly(ReasonBadInput, "%v", err)
			return nil
		}
		o.aLabel = fmt.Sprintf("%s at %s (%s)", o.RefPackage, o.ARef, short(commit))
		o.A, o.ARef = bin, ""
	}
	if o.hasTier(TierTime) {
		m.run(ctx, settings, machine)
	} else {
		*machine = ThisMachine(o.B)
		for _, sc := range m.scenarios {
			sc.sides = []*sideRun{{name: "A", label: cmp.Or(o.aLabel, o.A)}, {name: "B", label: o.B}}
		}
	}
	cfgA, cfgB, err := m.configs()
	if err != nil {
		m.failEarly(ReasonBadInput, "%v", err)
		return nil
	}
	scs := make([]Scenario, len(m.scenarios))
	for i, sc := range m.scenarios {
		scs[i] = sc.sc
	}
	pair := costPair{binA: o.A, binB: o.B, cfgA: cfgA, cfgB: cfgB, loadTester: o.LoadTester, dir: costDir}
	costs := runCostTier(ctx, o.Cost, scs, pair, cl, progress)
	for _, c := range costs {
		if o.NoiseOK && c.Verdict == CostCouldNotJudge && c.decision().ReasonCode == ReasonCostNoisy {
			c.Verdict, c.NoiseForgiven = CostPass, true
		}
	}
	return costs
}

// verdictRank orders verdicts from best to worst. A regression outranks
// could-not-judge: it is a measured fact about B, while the other is the
// absence of one; the table lists every scenario's, and CI fails on both.
func verdictRank(v Verdict) int {
	switch v {
	case Pass:
		return 0
	case Regression:
		return 2
	default:
		return 1
	}
}

// combineVerdicts gives the run's decision, the worst of the scenarios'
// (the first such in the file's order), and names the scenario it came
// from; when all passed, the closest call. Noise forgiven in any scenario
// is said at the top, so CI can warn on it.
func combineVerdicts(scs []ScenarioResult) (Decision, string) {
	if len(scs) == 0 {
		return Decision{Verdict: CouldNotJudge, ReasonCode: ReasonBadInput, Reason: "no scenarios"}, ""
	}
	worst := 0
	forgiven := false
	ds := make([]Decision, len(scs))
	for i := range scs {
		ds[i] = scs[i].decision()
		forgiven = forgiven || scs[i].NoiseForgiven || ds[i].NoiseForgiven
		if verdictRank(ds[i].Verdict) > verdictRank(ds[worst].Verdict) {
			worst = i
		}
	}
	if ds[worst].Verdict == Pass {
		for i := range scs {
			if lowerRatio(scs[i].closeness(), scs[worst].closeness()) {
				worst = i
			}
		}
	}
	w, wd := scs[worst], ds[worst]
	// A problem every scenario met before measuring (bad options, a
	// missing load tester) is the run's, not one scenario's.
	if len(w.Problems) > 0 && w.Rounds == 0 && sameFirstProblem(scs) {
		d := w.Decision
		d.NoiseForgiven = forgiven
		return d, ""
	}
	d := Decision{Verdict: wd.Verdict, ReasonCode: wd.ReasonCode, NoiseForgiven: forgiven}
	if wd.Verdict == Pass {
		d.Reason = fmt.Sprintf("every scenario passed; the closest, %s: %s", w.Name, wd.Reason)
	} else {
		d.Reason = fmt.Sprintf("scenario %s: %s", w.Name, wd.Reason)
		var others []string
		for i, s := range scs {
			if i != worst && ds[i].Verdict != Pass {
				others = append(others, fmt.Sprintf("%s %s (%s)", s.Name, ds[i].Verdict, ds[i].ReasonCode))
			}
		}
		if len(others) > 0 {
			d.Reason += "; also " + strings.Join(others, ", ")
		}
	}
	return d, w.Name
}

// lowerRatio: a below b, a NaN ratio (nothing measured) never lower.
func lowerRatio(a, b float64) bool {
	return !math.IsNaN(a) && (math.IsNaN(b) || a < b)
}

func sameFirstProblem(scs []ScenarioResult) bool {
	for _, s := range scs {
		if len(s.Problems) == 0 || s.Problems[0] != scs[0].Problems[0] {
			return false
		}
	}
	return true
}

// only is the file's scenarios named in names (all when names is empty),
// in the file's order.
func (f *ScenarioFile) only(names []string) ([]Scenario, error) {
	if len(names) == 0 {
		return f.Scenarios, nil
	}
	var out []Scenario
	for _, n := range names {
		if !slices.ContainsFunc(f.Scenarios, func(s Scenario) bool { return s.Name == n }) {
			all := make([]string, len(f.Scenarios))
			for i, s := range f.Scenarios {
				all[i] = s.Name
			}
			return nil, fmt.Errorf("--only %s: no such scenario in %s (it has %s)", n, f.Path, strings.Join(all, ", "))
		}
	}
	for _, s := range f.Scenarios {
		if slices.Contains(names, s.Name) {
			out = append(out, s)
		}
	}
	return out, nil
}
