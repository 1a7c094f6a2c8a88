package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"weaseldb/gate/launch"
	"weaseldb/gate/render"
	"weaseldb/gate/result"
	"weaseldb/gate/stats"
	"weaseldb/gate/verdict"
	"weaseldb/internal/loadrun"
)

// fourScenarios is the shape of testdata/gate_scenarios.toml for the
// synthetic lab: /ok, /ok 16 deep, commit, and status with a setup load.
func fourScenarios(t *testing.T) *ScenarioFile {
	t.Helper()
	f, err := ParseScenarios([]byte(`
[[scenario]]
name = "ok"
path = "/ok"
[[scenario]]
name = "ok_pipelined"
path = "/ok"
pipeline = 16
[[scenario]]
name = "commit"
method = "POST"
path = "/v1/commit"
body = '{"request_id":"gate-{{uuid}}"}'
[[scenario]]
name = "status"
path = "/v1/status?request_id=gate-status-0000000000000001"
[[scenario.setup]]
method = "POST"
path = "/v1/commit"
body = '{"request_id":"gate-status-0000000000000001"}'
`))
	if err != nil {
		t.Fatal(err)
	}
	f.Path = "four.toml"
	return f
}

// perScenario serves A at 100k everywhere and B at 100k × factor[scenario]
// (1 when not listed); noisy scenarios alternate B between 0.8 and 1.25 of
// that per round, which stays undecided.
func perScenario(factor map[string]float64, noisy ...string) func(synthRun) synthOutcome {
	return func(r synthRun) synthOutcome {
		if r.Side == "A" || r.Warmup || r.Setup {
			return synthOutcome{Result: cleanResult(100000)}
		}
		f, ok := factor[r.Scenario]
		if !ok {
			f = 1
		}
		for _, n := range noisy {
			if n == r.Scenario {
				if r.Instance%2 == 0 {
					f *= 0.8
				} else {
					f *= 1.25
				}
			}
		}
		return synthOutcome{Result: cleanResult(100000 * f)}
	}
}

func runSynthScenarios(t *testing.T, o Options, f *ScenarioFile, l *synthLab) *result.Result {
	t.Helper()
	r := runScenarios(context.Background(), o, f, nil, l, nil, l.now)
	if testing.Verbose() {
		var table strings.Builder
		render.WriteTable(&table, r)
		t.Logf("table:\n%s", table.String())
	}
	return r
}

func scenarioByName(t *testing.T, r *result.Result, name string) result.ScenarioResult {
	t.Helper()
	for _, s := range r.Scenarios {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no scenario %q in %+v", name, r.Scenarios)
	return result.ScenarioResult{}
}

// Each scenario gets its own interval and verdict; the run's is the worst,
// and it names the scenario that decided.
func TestScenariosEachJudgedWorstDecides(t *testing.T) {
	tests := []struct {
		name      string
		factor    map[string]float64
		verdicts  map[string]verdict.Verdict
		verdict   verdict.Verdict
		decidedBy string
		reason    string
	}{
		{"A/A: every scenario passes, the closest call is named", map[string]float64{"status": 0.99},
			map[string]verdict.Verdict{"ok": verdict.Pass, "ok_pipelined": verdict.Pass, "commit": verdict.Pass, "status": verdict.Pass}, verdict.Pass, "status",
			"every scenario passed; the closest, status: ratio 0.990"},
		{"B slowed on the commit path alone fails on commit alone", map[string]float64{"commit": 0.8},
			map[string]verdict.Verdict{"ok": verdict.Pass, "ok_pipelined": verdict.Pass, "commit": verdict.Regression, "status": verdict.Pass}, verdict.Regression, "commit",
			"scenario commit: ratio 0.800"},
		{"two regressions: the first in the file decides, the other is named", map[string]float64{"ok_pipelined": 0.7, "status": 0.8},
			map[string]verdict.Verdict{"ok": verdict.Pass, "ok_pipelined": verdict.Regression, "commit": verdict.Pass, "status": verdict.Regression}, verdict.Regression, "ok_pipelined",
			"also status regression (slower)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runSynthScenarios(t, synthOptions(t), fourScenarios(t), newSynthLab(perScenario(tt.factor)))
			if r.Verdict != tt.verdict || r.ExitCode != tt.verdict.ExitCode() || r.DecidedBy != tt.decidedBy {
				t.Fatalf("%s (exit %d) decided by %q: %s; want %s by %s", r.Verdict, r.ExitCode, r.DecidedBy, r.Reason, tt.verdict, tt.decidedBy)
			}
			if !strings.Contains(r.Reason, tt.reason) {
				t.Errorf("reason %q lacks %q", r.Reason, tt.reason)
			}
			if len(r.Scenarios) != 4 {
				t.Fatalf("%d scenarios", len(r.Scenarios))
			}
			for name, want := range tt.verdicts {
				s := scenarioByName(t, r, name)
				if s.Verdict != want || s.Rounds != 10 || len(s.A.SamplesRPS) != 10 || len(s.RoundRatios) != 10 {
					t.Errorf("%s: %s after %d rounds (%d samples): %s; want %s after 10", name, s.Verdict, s.Rounds, len(s.A.SamplesRPS), s.Reason, want)
				}
			}
		})
	}
}

// A round runs every scenario in the file's order, each on a fresh pair of
// servers started in the round's order (A B, then B A), each fresh server
// set up before anything is measured on it, and each scenario's load is
// its own shape.
func TestScenariosRoundStructure(t *testing.T) {
	o := synthOptions(t)
	o.Rounds, o.MaxRounds = 4, 4
	l := newSynthLab(perScenario(nil))
	r := runSynthScenarios(t, o, fourScenarios(t), l)
	if r.Verdict == "" || len(r.Scenarios) != 4 {
		t.Fatalf("%+v", r)
	}
	var got []string
	for _, spec := range l.loads {
		side := "A"
		if strings.Contains(spec.Target.Path, "/B/") {
			side = "B"
		}
		got = append(got, fmt.Sprintf("%s:%s:%s", spec.Scenario, side, spec.Phase))
	}
	var want []string
	for round := 1; round <= 4; round++ {
		for _, sc := range []string{"ok", "ok_pipelined", "commit", "status"} {
			order := []string{"A", "B"}
			if round%2 == 0 {
				order = []string{"B", "A"}
			}
			if sc == "status" {
				setupOrder := order
				if round == 1 {
					setupOrder = []string{"A", "B"}
				}
				for _, side := range setupOrder {
					want = append(want, sc+":"+side+":setup")
				}
			}
			if round == 1 {
				want = append(want, sc+":A:warm-up", sc+":B:warm-up")
			}
			for _, side := range order {
				want = append(want, sc+":"+side+":measured")
			}
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("load runs:\n got %s\nwant %s", strings.Join(got, " "), strings.Join(want, " "))
	}
	// Fresh servers every round, per scenario: 4 scenarios x 4 rounds.
	if l.starts["A"] != 16 || l.starts["B"] != 16 {
		t.Errorf("started A %d and B %d times, want 16 each", l.starts["A"], l.starts["B"])
	}
	for _, srv := range l.servers {
		if !srv.stopped {
			t.Errorf("server %s left running", srv.path)
		}
	}
	for _, spec := range l.loads {
		switch {
		case spec.Scenario == "ok_pipelined" && spec.Phase != launch.PhaseSetup:
			if spec.Path != "/ok" || !strings.Contains(strings.Join(spec.Extra, " "), "--pipeline 16") {
				t.Errorf("ok_pipelined load %+v", spec)
			}
		case spec.Scenario == "commit":
			if spec.Path != "/v1/commit" || !strings.Contains(strings.Join(spec.Extra, " "), "--method POST --body") {
				t.Errorf("commit load %+v", spec)
			}
		case spec.Scenario == "status" && spec.Phase == launch.PhaseSetup:
			if spec.Path != "/v1/commit" || spec.Duration != DefaultSetupDuration || spec.Warmup != 0 || spec.Concurrency != 1 {
				t.Errorf("status setup %+v", spec)
			}
		case spec.Scenario == "status":
			if !strings.HasPrefix(spec.Path, "/v1/status?request_id=") || spec.Concurrency != o.Concurrency {
				t.Errorf("status load %+v", spec)
			}
		}
	}
}

// Decided scenarios stop at the first look; undecided ones get the extra
// rounds, two at a time, up to --max-rounds or the budget.
func TestScenariosUndecidedGetExtraRounds(t *testing.T) {
	t.Run("max rounds", func(t *testing.T) {
		o := synthOptions(t)
		o.Budget = 0
		l := newSynthLab(perScenario(map[string]float64{"commit": 0.8}, "status"))
		r := runSynthScenarios(t, o, fourScenarios(t), l)
		for name, rounds := range map[string]int{"ok": 10, "ok_pipelined": 10, "commit": 10, "status": 20} {
			if s := scenarioByName(t, r, name); s.Rounds != rounds {
				t.Errorf("%s: %d rounds (%s), want %d", name, s.Rounds, s.StopDetail, rounds)
			}
		}
		status := scenarioByName(t, r, "status")
		if status.StopReason != StopMaxRounds || status.ReasonCode != verdict.ReasonNoisy || len(status.Looks) != 6 {
			t.Errorf("status: stop %s, %s, %d looks", status.StopReason, status.ReasonCode, len(status.Looks))
		}
		// The regression outranks the undecided one, which is still named.
		if r.Verdict != verdict.Regression || r.DecidedBy != "commit" || !strings.Contains(r.Reason, "also status could not judge (noisy)") {
			t.Errorf("%s by %s: %s", r.Verdict, r.DecidedBy, r.Reason)
		}
		if r.Rounds != 20 {
			t.Errorf("run rounds %d, want the most any scenario ran (20)", r.Rounds)
		}
		if n := l.starts["A"]; n != 3*10+20 {
			t.Errorf("A started %d times: the decided scenarios must not run past their look", n)
		}
	})
	t.Run("budget", func(t *testing.T) {
		// On the lab's clock a scenario's round costs 2.64 s (two 1.3 s
		// runs, two starts), the status one 2.74 s (two 50 ms setups more),
		// and the warm-ups 8.4 s: 10 rounds of all four end at 114.9 s.
		// Then two undecided scenarios: two more rounds of both cost
		// 10.8 s; a budget of 130 s allows them once (125.7 s), not twice.
		o := synthOptions(t)
		o.Budget = 130 * time.Second
		f := fourScenarios(t)
		f.Scenarios[3].Setup[0].Duration.Duration = 0
		r := runSynthScenarios(t, o, f, newSynthLab(perScenario(nil, "ok", "status")))
		for _, name := range []string{"ok", "status"} {
			s := scenarioByName(t, r, name)
			if s.StopReason != StopBudget || s.Rounds != 12 || !strings.Contains(s.StopDetail, "would pass the 2m10s budget") {
				t.Errorf("%s: stop %s after %d rounds (%s); want budget after 12", name, s.StopReason, s.Rounds, s.StopDetail)
			}
		}
		if s := scenarioByName(t, r, "commit"); s.Rounds != 10 || s.StopReason != StopDecided {
			t.Errorf("commit: %d rounds, %s", s.Rounds, s.StopReason)
		}
		if r.ElapsedS > o.Budget.Seconds() {
			t.Errorf("ran %.1f s on the lab's clock, past the budget", r.ElapsedS)
		}
	})
}

// A scenario's own tolerance is its rule; the others keep the run's.
func TestScenariosOwnTolerance(t *testing.T) {
	f := fourScenarios(t)
	f.Scenarios[2].Tolerance = 0.2 // commit
	r := runSynthScenarios(t, synthOptions(t), f, newSynthLab(perScenario(map[string]float64{"commit": 0.9, "ok": 0.9})))
	if s := scenarioByName(t, r, "commit"); s.Verdict != verdict.Pass || s.Policy.Tolerance != 0.2 || s.Policy.Floor != 0.8 {
		t.Errorf("commit with 20%% tolerance at 0.9: %s (%+v)", s.Verdict, s.Policy)
	}
	if s := scenarioByName(t, r, "ok"); s.Verdict != verdict.Regression || s.Policy.Tolerance != 0.05 {
		t.Errorf("ok with the run's 5%% tolerance at 0.9: %s (%+v)", s.Verdict, s.Policy)
	}
	var table strings.Builder
	render.WriteTable(&table, r)
	if !strings.Contains(table.String(), "(own tolerance: commit 20%)") {
		t.Errorf("the table must name the scenario with its own tolerance:\n%s", table.String())
	}
}

// A problem in one scenario (its setup fails on B) makes that scenario
// could-not-judge; the others are still measured and judged.
func TestScenariosProblemInOneScenario(t *testing.T) {
	withErrors := cleanResult(500)
	withErrors.Errors, withErrors.StatusCodes = 500, map[string]int64{"400": 500}
	model := func(extra map[string]float64) func(synthRun) synthOutcome {
		base := perScenario(extra)
		return func(r synthRun) synthOutcome {
			if r.Scenario == "status" && r.Setup && r.Side == "B" {
				return synthOutcome{Result: withErrors, Err: &loadrun.ExitError{Tool: loadrun.LoadTester, Status: 1}}
			}
			return base(r)
		}
	}
	r := runSynthScenarios(t, synthOptions(t), fourScenarios(t), newSynthLab(model(nil)))
	status := scenarioByName(t, r, "status")
	if status.Verdict != verdict.CouldNotJudge || status.ReasonCode != verdict.ReasonErrors || status.StopReason != StopProblem ||
		!strings.Contains(status.Reason, "server B: 500 errors in setup 1 (of 500 requests) (status 400: 500)") {
		t.Errorf("status: %s (%s, stop %s): %s", status.Verdict, status.ReasonCode, status.StopReason, status.Reason)
	}
	for _, name := range []string{"ok", "ok_pipelined", "commit"} {
		if s := scenarioByName(t, r, name); s.Verdict != verdict.Pass || s.Rounds != 10 {
			t.Errorf("%s: %s after %d rounds", name, s.Verdict, s.Rounds)
		}
	}
	if r.Verdict != verdict.CouldNotJudge || r.DecidedBy != "status" || r.ExitCode != 2 || !strings.HasPrefix(r.Reason, "scenario status: server B") {
		t.Errorf("run: %s by %s (exit %d): %s", r.Verdict, r.DecidedBy, r.ExitCode, r.Reason)
	}
	r = runSynthScenarios(t, synthOptions(t), fourScenarios(t), newSynthLab(model(map[string]float64{"commit": 0.8})))
	if r.Verdict != verdict.Regression || r.DecidedBy != "commit" || !strings.Contains(r.Reason, "also status could not judge (errors)") {
		t.Errorf("a regression outranks a could-not-judge: %s by %s: %s", r.Verdict, r.DecidedBy, r.Reason)
	}
}

// A rate scenario is judged on its latency: B/A is A's latency over B's.
func TestScenariosLatencyMetric(t *testing.T) {
	f, err := ParseScenarios([]byte("[[scenario]]\nname = \"ok_rate\"\npath = \"/ok\"\nrate = 20000.0\nmetric = \"p50\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	l := newSynthLab(func(r synthRun) synthOutcome {
		res := cleanResult(20000)
		res.Latency.P50 = 100_000
		if r.Side == "B" && !r.Warmup {
			res.Latency.P50 = 125_000
		}
		return synthOutcome{Result: res}
	})
	r := runSynthScenarios(t, synthOptions(t), f, l)
	s := r.Scenarios[0]
	if r.Verdict != verdict.Regression || s.CI.Ratio != 0.8 || s.B.Metric != result.MetricP50 || s.Runs[0].P50NS != 100_000 {
		t.Fatalf("%s: ratio %v, metric %q, runs %+v", r.Verdict, s.CI.Ratio, s.B.Metric, s.Runs[0])
	}
	if !strings.Contains(strings.Join(l.loads[len(l.loads)-1].Extra, " "), "--rate 20000") {
		t.Errorf("load args %v", l.loads[len(l.loads)-1].Extra)
	}
	var table strings.Builder
	render.WriteTable(&table, r)
	if !strings.Contains(table.String(), "p50 100.0 µs") || !strings.Contains(table.String(), "p50 125.0 µs") {
		t.Errorf("a latency scenario's medians are latencies:\n%s", table.String())
	}
}

func TestScenariosBadInput(t *testing.T) {
	f := fourScenarios(t)
	tests := []struct {
		name   string
		modify func(*Options)
		detail string
	}{
		{"no A", func(o *Options) { o.A = "" }, "--scenarios compares two builds"},
		{"bad options", func(o *Options) { o.Rounds = 2 }, "--rounds 2"},
		{"missing load tester", func(o *Options) { o.LoadTester = "/nonexistent/lt" }, "load tester /nonexistent/lt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := synthOptions(t)
			tt.modify(&o)
			r := runSynthScenarios(t, o, f, newSynthLab(nil))
			if r.Verdict != verdict.CouldNotJudge || r.ReasonCode != verdict.ReasonBadInput || r.ExitCode != 2 || r.DecidedBy != "" {
				t.Fatalf("%s (%s, exit %d) by %q: %s", r.Verdict, r.ReasonCode, r.ExitCode, r.DecidedBy, r.Reason)
			}
			if !strings.Contains(r.Reason, tt.detail) || strings.HasPrefix(r.Reason, "scenario ") {
				t.Errorf("reason %q: want the run's problem, %q, not one scenario's", r.Reason, tt.detail)
			}
			if len(r.Scenarios) != 4 {
				t.Errorf("%d scenarios listed", len(r.Scenarios))
			}
		})
	}
	for _, tt := range []struct {
		name, file string
		set        []string
		detail     string
	}{
		{"no such file", "/nonexistent/scenarios.toml", nil, "--scenarios: open /nonexistent/scenarios.toml"},
		{"bad file", writeFile(t, "bad.toml", "[[scenario]]\nname = \"x\"\n"), nil, `scenario "x": path ""`},
		{"--path with --scenarios", filepath.Join("..", "testdata", "gate_scenarios.toml"), []string{"path"}, "--path: with --scenarios"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := synthOptions(t)
			r := RunScenarios(context.Background(), o, tt.file, func(flag string) bool { return strings.Contains(strings.Join(tt.set, " "), flag) }, nil)
			if r.Verdict != verdict.CouldNotJudge || r.ReasonCode != verdict.ReasonBadInput || r.ExitCode != 2 || !strings.Contains(r.Reason, tt.detail) {
				t.Errorf("%s (%s, exit %d): %s; want %q", r.Verdict, r.ReasonCode, r.ExitCode, r.Reason, tt.detail)
			}
		})
	}
}

// A cancelled run (SIGINT) stops every scenario, and says so.
func TestScenariosInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	l := newSynthLab(nil)
	r := runScenarios(ctx, synthOptions(t), fourScenarios(t), nil, l, nil, l.now)
	if r.Verdict != verdict.CouldNotJudge || !strings.Contains(r.Reason, "interrupted") {
		t.Fatalf("%s: %s", r.Verdict, r.Reason)
	}
	for _, s := range r.Scenarios {
		if s.StopReason != StopProblem || !strings.Contains(s.Reason, "interrupted") {
			t.Errorf("%s: stop %s: %s", s.Name, s.StopReason, s.Reason)
		}
	}
	if n := l.starts["A"]; n > 1 {
		t.Errorf("started %d servers after the interrupt", n)
	}
}

func TestCombineVerdicts(t *testing.T) {
	sc := func(name string, v verdict.Verdict, code string, ratio float64, forgiven bool) result.ScenarioResult {
		return result.ScenarioResult{Name: name, Judgement: result.Judgement{Rounds: 10, CI: stats.RatioCI{Ratio: ratio},
			Decision: verdict.Decision{Verdict: v, ReasonCode: code, Reason: code + " reason", NoiseForgiven: forgiven}}}
	}
	tests := []struct {
		name     string
		in       []result.ScenarioResult
		verdict  verdict.Verdict
		by       string
		reason   string
		forgiven bool
	}{
		{"all pass: the lowest ratio", []result.ScenarioResult{sc("a", verdict.Pass, "within_tolerance", 1.01, false), sc("b", verdict.Pass, "within_tolerance", 0.97, false),
			sc("c", verdict.Pass, "within_tolerance", 0.99, false)}, verdict.Pass, "b", "every scenario passed; the closest, b: within_tolerance reason", false},
		{"noise forgiven anywhere shows at the top", []result.ScenarioResult{sc("a", verdict.Pass, "within_tolerance", 1, false), sc("b", verdict.Pass, "noisy", 1.02, true)},
			verdict.Pass, "a", "the closest, a", true},
		{"could not judge over pass", []result.ScenarioResult{sc("a", verdict.Pass, "within_tolerance", 0.9, false), sc("b", verdict.CouldNotJudge, "noisy", 1, false)},
			verdict.CouldNotJudge, "b", "scenario b: noisy reason", false},
		{"regression over could not judge", []result.ScenarioResult{sc("a", verdict.CouldNotJudge, "server_died", 0, false), sc("b", verdict.Regression, "slower", 0.8, false)},
			verdict.Regression, "b", "scenario b: slower reason; also a could not judge (server_died)", false},
		{"the first of equals", []result.ScenarioResult{sc("a", verdict.Regression, "slower", 0.9, false), sc("b", verdict.Regression, "slower", 0.5, false)},
			verdict.Regression, "a", "scenario a: slower reason; also b regression (slower)", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, by := combineVerdicts(tt.in)
			if d.Verdict != tt.verdict || by != tt.by || !strings.Contains(d.Reason, tt.reason) || d.NoiseForgiven != tt.forgiven {
				t.Errorf("%s by %q (forgiven %v): %q; want %s by %q containing %q", d.Verdict, by, d.NoiseForgiven, d.Reason, tt.verdict, tt.by, tt.reason)
			}
		})
	}
}

func TestScenariosOutputs(t *testing.T) {
	r := runSynthScenarios(t, synthOptions(t), fourScenarios(t), newSynthLab(perScenario(map[string]float64{"commit": 0.8})))
	var table strings.Builder
	render.WriteTable(&table, r)
	text := table.String()
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if !strings.HasPrefix(lines[len(lines)-1], "verdict: REGRESSION (exit 1): scenario commit: ratio 0.800") {
		t.Errorf("the last line must be the verdict:\n%s", text)
	}
	for _, want := range []string{"scenario", "ok_pipelined", "GET /ok, 64 conns, 16 deep", "POST /v1/commit, 64 conns",
		"REGRESSION (slower)", "decided by: commit (the worst verdict of 4 scenarios)", "commit: ratio 0.800, 95% CI"} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q:\n%s", want, text)
		}
	}
	for _, name := range []string{"ok", "ok_pipelined", "commit", "status"} {
		if !strings.Contains(text, "\n  "+name+" ") {
			t.Errorf("no row for %s:\n%s", name, text)
		}
	}

	p := filepath.Join(t.TempDir(), "gate.json")
	if err := render.WriteJSON(p, r); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Version   int    `json:"version"`
		Mode      string `json:"mode"`
		ExitCode  int    `json:"exit_code"`
		DecidedBy string `json:"decided_by"`
		Decision  struct {
			Verdict string `json:"verdict"`
		} `json:"decision"`
		Scenarios []struct {
			Name     string `json:"name"`
			Decision struct {
				Verdict string `json:"verdict"`
			} `json:"decision"`
			Ratio struct {
				Ratio float64 `json:"ratio"`
			} `json:"ratio"`
			Load struct {
				Method string `json:"method"`
				Path   string `json:"path"`
			} `json:"load"`
			Runs []json.RawMessage `json:"runs"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Version != result.ResultVersion || back.Mode != "scenarios" || back.ExitCode != 1 || back.DecidedBy != "commit" ||
		back.Decision.Verdict != "regression" || len(back.Scenarios) != 4 {
		t.Fatalf("JSON: %+v", back)
	}
	if c := back.Scenarios[2]; c.Name != "commit" || c.Decision.Verdict != "regression" || c.Ratio.Ratio != 0.8 ||
		c.Load.Method != "POST" || len(c.Runs) != 20 {
		t.Errorf("commit in the JSON: %+v", c)
	}

	var md strings.Builder
	render.WriteMarkdown(&md, r, render.MarkdownLinks{JSONPath: "build/gate.json"})
	for _, want := range []string{"### Regression gate: ❌ regression (exit 1), decided by `commit`",
		"| scenario | load | rounds | A median | B median | B/A | interval | verdict |",
		"| **`commit`** | POST /v1/commit, 64 conns | 10 | 100,000 | 80,000 | 0.800 | 95% [0.800, 0.800] | ❌ REGRESSION (slower) |",
		"| `ok` | GET /ok, 64 conns | 10 |", "✅ pass |", "✅ **Servers and load tester:**", "Exit 1 (`slower`); every run is in `build/gate.json`."} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if rows := strings.Count(md.String(), "\n| `") + strings.Count(md.String(), "\n| **`"); rows != 4 {
		t.Errorf("%d scenario rows in the markdown, want 4:\n%s", rows, md.String())
	}

	// A run that failed before measuring still writes all three.
	bad := runSynthScenarios(t, func() Options { o := synthOptions(t); o.A = ""; return o }(), fourScenarios(t), newSynthLab(nil))
	if err := render.WriteJSON(filepath.Join(t.TempDir(), "bad.json"), bad); err != nil {
		t.Errorf("JSON of a failed run: %v", err)
	}
	md.Reset()
	render.WriteMarkdown(&md, bad, render.MarkdownLinks{})
	if !strings.Contains(md.String(), "⚠️ could not judge (exit 2)") || strings.Contains(md.String(), "decided by") {
		t.Errorf("markdown of a failed run:\n%s", md.String())
	}
}

// --only runs the named scenarios, in the file's order; a name the file
// lacks is bad input that lists the names it has.
func TestScenariosOnly(t *testing.T) {
	o := synthOptions(t)
	o.Only = []string{"commit", "ok"}
	l := newSynthLab(perScenario(map[string]float64{"commit": 0.8}))
	r := runSynthScenarios(t, o, fourScenarios(t), l)
	if len(r.Scenarios) != 2 || r.Scenarios[0].Name != "ok" || r.Scenarios[1].Name != "commit" {
		t.Fatalf("scenarios %+v", r.Scenarios)
	}
	for _, spec := range l.loads {
		if spec.Scenario != "ok" && spec.Scenario != "commit" {
			t.Errorf("ran %s", spec.Scenario)
		}
	}
	if r.Verdict != verdict.Regression || r.DecidedBy != "commit" {
		t.Errorf("%s by %s", r.Verdict, r.DecidedBy)
	}
	o.Only = []string{"commits"}
	r = runSynthScenarios(t, o, fourScenarios(t), newSynthLab(nil))
	if r.ReasonCode != verdict.ReasonBadInput || !strings.Contains(r.Reason, "--only commits: no such scenario in four.toml (it has ok, ok_pipelined, commit, status)") {
		t.Errorf("%s (%s): %s", r.Verdict, r.ReasonCode, r.Reason)
	}
}
