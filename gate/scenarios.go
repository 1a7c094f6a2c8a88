package gate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
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
	Judgement
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
	return runScenarios(ctx, o, f, progress, processLab{}, time.Now)
}

// runScenarios is RunScenarios with the file read, the lab and the clock
// given (tests give synthetic ones).
func runScenarios(ctx context.Context, o Options, f *ScenarioFile, progress io.Writer, l lab, now func() time.Time) *ScenariosResult {
	start := now()
	res := &ScenariosResult{Version: ScenariosResultVersion, Mode: ModeScenarios, File: f.Path, Command: o.Command,
		RoundsPlan: RoundsPlan{Initial: o.Rounds, Max: o.maxRounds(), BudgetS: o.Budget.Seconds()}}
	m := &measurement{o: o, mode: ModeAB, multi: true, progress: progress, lab: l, now: now}
	chosen, err := f.only(o.Only)
	for _, s := range chosen {
		s = s.resolved(o)
		s.LoadArgs = append(append([]string(nil), s.LoadArgs...), o.LoadArgs...)
		sc := &scenarioRun{sc: s, r: &Judgement{}}
		sc.init(o)
		m.scenarios = append(m.scenarios, sc)
	}
	defer func() {
		res.Scenarios = make([]ScenarioResult, len(m.scenarios))
		for i, sc := range m.scenarios {
			res.Scenarios[i] = ScenarioResult{Name: sc.sc.Name, Description: sc.sc.Description, Metric: sc.sc.Metric,
				Load: sc.sc.LoadShape, Setup: sc.sc.Setup, Judgement: *sc.r}
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
	m.run(ctx, &res.Settings, &res.Machine)
	return res
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
	for i, s := range scs {
		forgiven = forgiven || s.NoiseForgiven
		if verdictRank(s.Verdict) > verdictRank(scs[worst].Verdict) {
			worst = i
		}
	}
	if scs[worst].Verdict == Pass {
		for i, s := range scs {
			if lowerRatio(s.CI.Ratio, scs[worst].CI.Ratio) {
				worst = i
			}
		}
	}
	w := scs[worst]
	// A problem every scenario met before measuring (bad options, a
	// missing load tester) is the run's, not one scenario's.
	if len(w.Problems) > 0 && w.Rounds == 0 && sameFirstProblem(scs) {
		d := w.Decision
		d.NoiseForgiven = forgiven
		return d, ""
	}
	d := Decision{Verdict: w.Verdict, ReasonCode: w.ReasonCode, NoiseForgiven: forgiven}
	if w.Verdict == Pass {
		d.Reason = fmt.Sprintf("every scenario passed; the closest, %s: %s", w.Name, w.Reason)
	} else {
		d.Reason = fmt.Sprintf("scenario %s: %s", w.Name, w.Reason)
		var others []string
		for i, s := range scs {
			if i != worst && s.Verdict != Pass {
				others = append(others, fmt.Sprintf("%s %s (%s)", s.Name, s.Verdict, s.ReasonCode))
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
