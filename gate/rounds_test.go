package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"weaseldb/gate/render"
	"weaseldb/gate/result"
	"weaseldb/gate/stats"
	"weaseldb/gate/verdict"
	"weaseldb/internal/loadrun"
)

// ratios serves A at 100k and B at 100k × the next ratio of the list per
// round (the last one repeats), so a test chooses what each look sees.
func ratios(list ...float64) func(synthRun) synthOutcome {
	return func(r synthRun) synthOutcome {
		if r.Side == "A" || r.Warmup {
			return synthOutcome{Result: cleanResult(100000)}
		}
		i := min(r.Instance-1, len(list)-1)
		return synthOutcome{Result: cleanResult(100000 * list[i])}
	}
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestRoundsStopAsSoonAsDecided(t *testing.T) {
	tests := []struct {
		name    string
		model   func(synthRun) synthOutcome
		verdict verdict.Verdict
		rounds  int
		looks   int
	}{
		{"same speed passes at the first look", steady(100000, 100000), verdict.Pass, 10, 1},
		{"25% slower fails at the first look", steady(100000, 75000), verdict.Regression, 10, 1},
		// The first four rounds are far below, the rest at 1.0. The
		// interval's low end is the k-th smallest ratio: at the interim
		// looks (99%) k = 1 of 10 and 12, 2 of 14 and 16, 4 of 18, so 0.7;
		// at the last look (20 rounds, 95%) k = 6, so 1.0: a pass.
		{"undecided, then passes at the last look", ratios(append(repeat(0.7, 4), repeat(1.0, 20)...)...), verdict.Pass, 20, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runSynth(t, synthOptions(t), newSynthLab(tt.model))
			if r.Verdict != tt.verdict || r.Rounds != tt.rounds || len(r.Looks) != tt.looks || r.StopReason != StopDecided {
				t.Fatalf("%s after %d rounds and %d looks (stop %s: %s); want %s after %d and %d",
					r.Verdict, r.Rounds, len(r.Looks), r.StopReason, r.StopDetail, tt.verdict, tt.rounds, tt.looks)
			}
			if len(r.A.SamplesRPS) != r.Rounds || len(r.B.SamplesRPS) != r.Rounds || len(r.RoundRatios) != r.Rounds {
				t.Errorf("samples A %d B %d ratios %d for %d rounds", len(r.A.SamplesRPS), len(r.B.SamplesRPS), len(r.RoundRatios), r.Rounds)
			}
			for i, l := range r.Looks {
				wantLevel := InterimLevel
				if l.Rounds == 20 {
					wantLevel = 0.95
				}
				if l.Rounds != 10+2*i || l.Level != wantLevel {
					t.Errorf("look %d after %d rounds at %v, want %d at %v (10, then two at a time; the last at --level)", i, l.Rounds, l.Level, 10+2*i, wantLevel)
				}
			}
		})
	}
}

func TestRoundsCapAndBudget(t *testing.T) {
	// Alternating 0.8 and 1.25: the median stays near 1 but the interval
	// stays wide: undecided for ever.
	undecided := func(r synthRun) synthOutcome {
		if r.Side == "A" {
			return synthOutcome{Result: cleanResult(100000)}
		}
		if r.Instance%2 == 0 {
			return synthOutcome{Result: cleanResult(80000)}
		}
		return synthOutcome{Result: cleanResult(125000)}
	}
	t.Run("max rounds", func(t *testing.T) {
		o := synthOptions(t)
		o.Budget = 0
		r := runSynth(t, o, newSynthLab(undecided))
		if r.Verdict != verdict.CouldNotJudge || r.ReasonCode != verdict.ReasonNoisy || r.Rounds != o.MaxRounds || r.StopReason != StopMaxRounds {
			t.Fatalf("%s (%s) after %d rounds, stop %s", r.Verdict, r.ReasonCode, r.Rounds, r.StopReason)
		}
		if len(r.Looks) != 6 {
			t.Errorf("%d looks, want 6 (10, 12, ..., 20)", len(r.Looks))
		}
	})
	t.Run("max rounds 0 means exactly --rounds", func(t *testing.T) {
		o := synthOptions(t)
		o.MaxRounds = 0
		r := runSynth(t, o, newSynthLab(undecided))
		if r.Rounds != o.Rounds || r.StopReason != StopMaxRounds || r.RoundsPlan.Max != o.Rounds {
			t.Fatalf("%d rounds, stop %s, plan %+v", r.Rounds, r.StopReason, r.RoundsPlan)
		}
	})
	t.Run("budget", func(t *testing.T) {
		// On the lab's clock a round costs 2.64 s (two 1.3 s runs, two
		// starts) and the warm-up 2.1 s: 10 rounds end at 28.5 s, 12 at
		// 33.8 s. With 36 s, two more after 10 fit (33.8 s), two more after
		// 12 would not (39.1 s).
		o := synthOptions(t)
		o.Budget = 36 * time.Second
		r := runSynth(t, o, newSynthLab(undecided))
		if r.StopReason != StopBudget || r.Rounds != 12 || r.Verdict != verdict.CouldNotJudge {
			t.Fatalf("stop %s after %d rounds (%s); want budget after 12", r.StopReason, r.Rounds, r.StopDetail)
		}
		if r.Run.ElapsedS > o.Budget.Seconds() {
			t.Errorf("ran %.1f s on the lab's clock, past the %v budget", r.Run.ElapsedS, o.Budget)
		}
		if !strings.Contains(r.StopDetail, "would pass the 36s budget") {
			t.Errorf("stop detail %q", r.StopDetail)
		}
	})
}

// The random order (the default) runs A B and B A once in every pair of
// rounds, the pair's first drawn from the seed: balanced, reproducible,
// and not the same for every seed.
func TestRoundOrderRandom(t *testing.T) {
	orders := map[string]bool{}
	for seed := uint64(1); seed <= 40; seed++ {
		o := Options{Order: OrderRandom, OrderSeed: seed}
		var got []byte
		for round := 1; round <= 8; round++ {
			first := byte('A')
			if o.swapped(round) {
				first = 'B'
			}
			got = append(got, first)
			if round%2 == 0 && got[round-1] == got[round-2] {
				t.Fatalf("seed %d: rounds %d and %d both open with %c", seed, round-1, round, first)
			}
			if again := o.swapped(round); (first == 'B') != again {
				t.Fatalf("seed %d: round %d's order is not reproducible", seed, round)
			}
		}
		orders[string(got)] = true
	}
	if len(orders) < 8 {
		t.Errorf("40 seeds gave only %d orders of 8 rounds: %v", len(orders), orders)
	}
	o := DefaultOptions()
	o.drawOrderSeed()
	if p := o.roundsPlan(); p.Order != OrderRandom || p.OrderSeed == 0 {
		t.Errorf("the default plan records no random order: %+v", p)
	}
}

// TestRoundOrderAlternates: A B, then B A, so neither side always follows
// the other; fresh servers every round by default.
func TestRoundOrderAlternates(t *testing.T) {
	for _, restart := range []bool{true, false} {
		o := synthOptions(t)
		o.Rounds, o.MaxRounds = 4, 4
		o.RestartEachRound = restart
		l := newSynthLab(nil)
		r := runSynth(t, o, l)
		if got := strings.Join(l.order, ""); got != "ABBAABBA" {
			t.Errorf("restart=%v: run order %s, want ABBAABBA", restart, got)
		}
		var order []string
		for _, run := range r.Runs {
			order = append(order, run.Side)
		}
		if got := strings.Join(order, ""); got != "ABBAABBA" {
			t.Errorf("restart=%v: recorded order %s", restart, got)
		}
		wantStarts := 1
		if restart {
			wantStarts = 4
		}
		if l.starts["A"] != wantStarts || l.starts["B"] != wantStarts {
			t.Errorf("restart=%v: started A %d and B %d times, want %d", restart, l.starts["A"], l.starts["B"], wantStarts)
		}
		if !restart && (len(r.Warnings) == 0 || !strings.Contains(r.Warnings[0], "does not cover")) {
			t.Errorf("--restart=false must warn that the interval misses process-to-process noise: %v", r.Warnings)
		}
	}
}

func TestRoundProblems(t *testing.T) {
	bad := func(side string, run int, out synthOutcome) func(synthRun) synthOutcome {
		return func(r synthRun) synthOutcome {
			if r.Side == side && !r.Warmup && r.Instance == run {
				return out
			}
			return synthOutcome{Result: cleanResult(100000)}
		}
	}
	withErrors := cleanResult(90000)
	withErrors.Errors = 12
	unfinished := cleanResult(90000)
	unfinished.Unfinished, unfinished.Due = 40, 90040
	dropped := cleanResult(90000)
	dropped.Dropped, dropped.Due = 7, 90007
	exit1 := &loadrun.ExitError{Tool: loadrun.LoadTester, Status: 1, LastLine: ": load_tester: 40 unfinished"}
	clientBound := func(r synthRun) synthOutcome {
		res := cleanResult(100000)
		res.ClientBound, res.ClientBoundReason = true, "busiest network thread at 97% of its CPU"
		return synthOutcome{Result: res, ServerCPU: 0.5}
	}
	tests := []struct {
		name     string
		model    func(synthRun) synthOutcome
		startErr func(string, int) error
		modify   func(*Options)
		ctx      func() context.Context
		reason   string
		verdict  verdict.Verdict
		detail   string
	}{
		{name: "A fails to start", startErr: func(s string, n int) error {
			if s == "A" {
				return errors.New("server A exited with status 1 before it was ready: bind: address already in use")
			}
			return nil
		}, reason: verdict.ReasonServerStart, detail: "address already in use"},
		{name: "B fails to start in round 3", startErr: func(s string, n int) error {
			if s == "B" && n == 3 {
				return errors.New("server B: no \"weaseldb: ready\" line within 15s")
			}
			return nil
		}, reason: verdict.ReasonServerStart, detail: "no \"weaseldb: ready\" line"},
		{name: "errors", model: bad("B", 2, synthOutcome{Result: withErrors, Err: exit1}), reason: verdict.ReasonErrors, detail: "12 errors in round 2"},
		{name: "unfinished requests", model: bad("A", 3, synthOutcome{Result: unfinished, Err: exit1}), reason: verdict.ReasonUnclean,
			detail: "server A, round 3: 40 unfinished and 0 dropped of 90040 due requests: not a clean sample"},
		{name: "dropped requests, exit 0", model: bad("B", 1, synthOutcome{Result: dropped}), reason: verdict.ReasonUnclean,
			detail: "0 unfinished and 7 dropped of 90007 due"},
		{name: "server dies", model: bad("B", 4, synthOutcome{Result: withErrors, Err: exit1, Dies: true}), reason: verdict.ReasonServerDied,
			detail: "server B exited during the runs"},
		{name: "load tester fails", model: bad("A", 2, synthOutcome{Err: errors.New("load_tester: exit status 2: bad flag")}),
			reason: verdict.ReasonLoadFailed, detail: "server A, round 2: load_tester: exit status 2: bad flag"},
		{name: "load tester exits 1 for another reason", model: bad("A", 2, synthOutcome{Result: cleanResult(100), Err: exit1}),
			reason: verdict.ReasonLoadFailed, detail: "load_tester exited with status 1"},
		{name: "errors in the warm-up", model: func(r synthRun) synthOutcome {
			if r.Warmup && r.Side == "B" {
				return synthOutcome{Result: withErrors, Err: exit1}
			}
			return synthOutcome{Result: cleanResult(100000)}
		}, reason: verdict.ReasonErrors, detail: "errors in warm-up"},
		{name: "client bound", model: clientBound, reason: verdict.ReasonClientBound, detail: "bottleneck in 10 of 10 runs of A: busiest"},
		{name: "client bound forgiven by --noise-ok", model: clientBound, modify: func(o *Options) { o.NoiseOK = true },
			reason: verdict.ReasonWithinTolerance, verdict: verdict.Pass},
		{name: "client bound but the server saturated", model: func(r synthRun) synthOutcome {
			out := clientBound(r)
			out.ServerCPU = 1
			return out
		}, modify: func(o *Options) { o.Pin = "auto" }, reason: verdict.ReasonWithinTolerance, verdict: verdict.Pass},
		{name: "interrupted", ctx: func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, reason: verdict.ReasonLoadFailed, detail: "interrupted"},
		{name: "missing load tester", modify: func(o *Options) { o.LoadTester = "/nonexistent/load_tester" },
			reason: verdict.ReasonBadInput, detail: "load tester /nonexistent/load_tester"},
		{name: "bad options", modify: func(o *Options) { o.MaxRounds = 5 }, reason: verdict.ReasonBadInput, detail: "--max-rounds 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := synthOptions(t)
			if tt.modify != nil {
				tt.modify(&o)
			}
			if tt.name == "client bound but the server saturated" {
				if plan, _ := PlanCPUs("auto", []int{0, 1}); !plan.Pinned() {
					t.Skip("needs a pinned plan")
				}
			}
			l := newSynthLab(tt.model)
			l.startErr = tt.startErr
			ctx := context.Background()
			if tt.ctx != nil {
				ctx = tt.ctx()
			}
			r := one(t, run(ctx, o, nil, l, l.now))
			want := tt.verdict
			if want == "" {
				want = verdict.CouldNotJudge
			}
			if r.Verdict != want || r.ReasonCode != tt.reason || r.ExitCode != want.ExitCode() {
				t.Fatalf("got %s (%s, exit %d): %s; want %s (%s)", r.Verdict, r.ReasonCode, r.ExitCode, r.Reason, want, tt.reason)
			}
			if !strings.Contains(r.Reason, tt.detail) {
				t.Errorf("reason %q lacks %q", r.Reason, tt.detail)
			}
			if r.Reason == "" || strings.Contains(r.Reason, "\n") {
				t.Errorf("reason must be one line: %q", r.Reason)
			}
			if want == verdict.CouldNotJudge && r.ReasonCode != verdict.ReasonClientBound && r.StopReason != StopProblem {
				t.Errorf("stop reason %q, want %q", r.StopReason, StopProblem)
			}
		})
	}
}

// An unclean run is recorded (so the JSON shows it) but never becomes a
// sample.
func TestUncleanRunIsNotASample(t *testing.T) {
	unfinished := cleanResult(120000)
	unfinished.Unfinished = 3
	l := newSynthLab(func(r synthRun) synthOutcome {
		if r.Side == "B" && r.Instance == 2 {
			return synthOutcome{Result: unfinished}
		}
		return synthOutcome{Result: cleanResult(100000)}
	})
	r := runSynth(t, synthOptions(t), l)
	if r.ReasonCode != verdict.ReasonUnclean || r.B.UncleanRuns != 1 {
		t.Fatalf("%s (%s), unclean runs %d", r.Verdict, r.ReasonCode, r.B.UncleanRuns)
	}
	if len(r.B.SamplesRPS) != 1 || r.B.SamplesRPS[0] != 100000 {
		t.Errorf("B's samples %v: the unclean run must not be one", r.B.SamplesRPS)
	}
	last := r.Runs[len(r.Runs)-1]
	if last.Side != "B" || last.Unfinished != 3 {
		t.Errorf("the unclean run is not in the record: %+v", last)
	}
}

func TestBaselineMode(t *testing.T) {
	o := synthOptions(t)
	o.A = ""
	o.BaselineFile = filepath.Join(t.TempDir(), "baseline.json")
	o.UpdateBaseline = true
	r := runSynth(t, o, newSynthLab(steady(0, 100000)))
	if r.Verdict != verdict.Pass || r.ReasonCode != "baseline_written" {
		t.Fatalf("update: %s (%s): %s", r.Verdict, r.ReasonCode, r.Reason)
	}
	b, err := ReadBaseline(o.BaselineFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.SamplesRPS) != o.MaxRounds || b.Machine.CPUModel == "" || b.Settings.ConfigSHA256 == "" {
		t.Errorf("baseline: %d samples (want %d, --max-rounds), machine %+v", len(b.SamplesRPS), o.MaxRounds, b.Machine)
	}
	if r.Run.Mode != result.ModeUpdateBaseline || r.Run.Baseline != o.BaselineFile || r.Run.A != "" || r.A.Name != "" {
		t.Errorf("update: mode %s, baseline_file %q, A %q %+v", r.Run.Mode, r.Run.Baseline, r.Run.A, r.A)
	}
	table := renderings(t, r.Run)
	for _, want := range []string{"  default   GET /ok, 64 conns  20      -         100,000   -    -         pass\n", "B's runs spread ±0.0%",
		"\nverdict: PASS (exit 0): baseline written to " + o.BaselineFile + ": median 100,000 req/s over 20 runs"} {
		if !strings.Contains(table, want) {
			t.Errorf("update-baseline table lacks %q:\n%s", want, table)
		}
	}
	o.UpdateBaseline = false

	// Noisy enough that an interval exists, steady enough to decide.
	jitter := func(b float64) func(synthRun) synthOutcome {
		return func(r synthRun) synthOutcome {
			return synthOutcome{Result: cleanResult(b * (1 + 0.01*float64(r.Instance%5-2)))}
		}
	}
	t.Run("same speed passes", func(t *testing.T) {
		r := runSynth(t, o, newSynthLab(jitter(100000)))
		if r.Verdict != verdict.Pass || r.Run.Mode != "baseline" || r.CI.Paired || r.CI.Method != stats.MethodUnpaired {
			t.Fatalf("%s (%s): %s (mode %s paired %v)", r.Verdict, r.ReasonCode, r.Reason, r.Run.Mode, r.CI.Paired)
		}
		if r.Run.Baseline != o.BaselineFile || r.Run.A != "synth/weaseldb-b" || !r.A.FromBaselineFile || r.A.Name != "baseline" {
			t.Errorf("baseline_file %q, A %q %+v", r.Run.Baseline, r.Run.A, r.A)
		}
		table := renderings(t, r.Run)
		for _, want := range []string{"  A: synth/weaseldb-b (recorded baseline " + o.BaselineFile + ")",
			"B's runs spread ±1.0%, baseline's ±0.0% (unpaired", "\nverdict: PASS (exit 0): ratio "} {
			if !strings.Contains(table, want) {
				t.Errorf("baseline table lacks %q:\n%s", want, table)
			}
		}
	})
	t.Run("slower fails", func(t *testing.T) {
		r := runSynth(t, o, newSynthLab(jitter(75000)))
		if r.Verdict != verdict.Regression {
			t.Fatalf("%s (%s): %s", r.Verdict, r.ReasonCode, r.Reason)
		}
	})
	t.Run("other machine", func(t *testing.T) {
		moved := b
		moved.Machine.CPUModel = "Some Other CPU @ 1.0GHz"
		p := filepath.Join(t.TempDir(), "moved.json")
		if err := WriteBaseline(p, moved); err != nil {
			t.Fatal(err)
		}
		o := o
		o.BaselineFile = p
		r := runSynth(t, o, newSynthLab(jitter(100000)))
		if r.Verdict != verdict.CouldNotJudge || r.ReasonCode != verdict.ReasonOtherMachine {
			t.Fatalf("other machine: %s (%s): %s", r.Verdict, r.ReasonCode, r.Reason)
		}
		o.AllowOtherMachine = true
		r = runSynth(t, o, newSynthLab(jitter(100000)))
		if r.ReasonCode == verdict.ReasonOtherMachine || len(r.Warnings) == 0 {
			t.Fatalf("--allow-other-machine: %s (%s), warnings %v", r.Verdict, r.ReasonCode, r.Warnings)
		}
	})
	t.Run("other settings", func(t *testing.T) {
		o := o
		o.Concurrency = 3
		r := runSynth(t, o, newSynthLab(jitter(100000)))
		if r.Verdict != verdict.CouldNotJudge || r.ReasonCode != verdict.ReasonOtherSettings {
			t.Fatalf("other settings: %s (%s): %s", r.Verdict, r.ReasonCode, r.Reason)
		}
	})
	t.Run("a problem means no baseline is written", func(t *testing.T) {
		o := o
		o.UpdateBaseline = true
		o.BaselineFile = filepath.Join(t.TempDir(), "none.json")
		withErrors := cleanResult(1)
		withErrors.Errors = 1
		r := runSynth(t, o, newSynthLab(func(synthRun) synthOutcome { return synthOutcome{Result: withErrors} }))
		if r.Verdict != verdict.CouldNotJudge || !strings.HasPrefix(r.Reason, "baseline not written") {
			t.Fatalf("%s: %s", r.Verdict, r.Reason)
		}
		if _, err := os.Stat(o.BaselineFile); !os.IsNotExist(err) {
			t.Error("a baseline was written from a failed measurement")
		}
	})
}

// A one-workload run writes the one schema: a scenarios list of one,
// "default", whose judgement is the run's.
func TestWriteJSONAndMarkdown(t *testing.T) {
	r := runSynth(t, synthOptions(t), newSynthLab(steady(100000, 97000))).Run
	p := filepath.Join(t.TempDir(), "gate.json")
	if err := render.WriteJSON(p, r); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	dec, _ := back["decision"].(map[string]any)
	if back["version"] != float64(result.ResultVersion) || back["mode"] != "ab" || dec["verdict"] != "pass" || back["exit_code"] != float64(0) {
		t.Errorf("JSON version/mode/decision/exit: %v %v %v %v", back["version"], back["mode"], dec, back["exit_code"])
	}
	scs, _ := back["scenarios"].([]any)
	if len(scs) != 1 {
		t.Fatalf("JSON scenarios: %v", back["scenarios"])
	}
	sc, _ := scs[0].(map[string]any)
	for _, key := range []string{"name", "load", "tiers", "decision", "exit_code", "a", "b", "ratio", "rounds", "rounds_plan", "stop_reason",
		"looks", "round_ratios", "runs", "mann_whitney", "policy"} {
		if sc[key] == nil {
			t.Errorf("the scenario's JSON lacks %q", key)
		}
	}
	if sc["name"] != result.ImplicitScenarioName || sc["cost"] != nil || back["scenarios_file"] != nil || back["decided_by"] != nil {
		t.Errorf("JSON: name %v, cost %v, scenarios_file %v, decided_by %v", sc["name"], sc["cost"], back["scenarios_file"], back["decided_by"])
	}
	md := filepath.Join(t.TempDir(), "gate.md")
	if err := render.WriteMarkdownFile(md, r, render.MarkdownLinks{JSONPath: "build/gate.json", RunURL: "https://ci.example/o/r/actions/runs/7"}); err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(md)
	for _, want := range []string{"### Regression gate: ✅ pass (exit 0)\n",
		"| `default` | GET /ok, 64 conns | 10 | 100,000 | 97,000 | 0.970 | 99% [0.970, 0.970] | ✅ pass |",
		"**Rounds** (10 to start, at most 20): `default` 10 (decided", "✅ **Client-bound:** no run",
		"no failed, unfinished or dropped requests", "`build/gate.json`", "(https://ci.example/o/r/actions/runs/7)"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("markdown lacks %q:\n%s", want, text)
		}
	}
	var table strings.Builder
	render.WriteTable(&table, r)
	lines := strings.Split(strings.TrimSpace(table.String()), "\n")
	if !strings.HasPrefix(lines[len(lines)-1], "verdict: PASS (exit 0): ratio 0.970, 99% CI [0.970, 0.970]: within the 5% tolerance") ||
		!strings.Contains(table.String(), "\n  default   GET /ok, 64 conns  10") || strings.Contains(table.String(), "default:") {
		t.Errorf("table:\n%s", table.String())
	}
	// A failed run (no samples, NaN and infinite statistics) must still encode.
	bad := Run(context.Background(), Options{}, nil)
	if err := render.WriteJSON(filepath.Join(t.TempDir(), "bad.json"), bad); err != nil {
		t.Errorf("result of a failed run: %v", err)
	}
	var b strings.Builder
	render.WriteMarkdown(&b, bad, render.MarkdownLinks{})
	if !strings.Contains(b.String(), "⚠️ could not judge (exit 2)") || !strings.Contains(b.String(), "`bad_input`") {
		t.Errorf("markdown of a failed run:\n%s", b.String())
	}
	few := runSynth(t, func() Options { o := synthOptions(t); o.Rounds, o.MaxRounds = 3, 3; return o }(), newSynthLab(nil))
	if !math.IsInf(few.CI.High, 1) {
		t.Fatalf("3 rounds should leave the interval open: %+v", few.CI)
	}
	if err := render.WriteJSON(filepath.Join(t.TempDir(), "few.json"), few.Run); err != nil {
		t.Errorf("result with infinite interval ends: %v", err)
	}
}

// renderings is r's table, after checking that its JSON encodes and its
// markdown renders with the verdict on top.
func renderings(t *testing.T, r *result.Result) string {
	t.Helper()
	if err := render.WriteJSON(filepath.Join(t.TempDir(), "gate.json"), r); err != nil {
		t.Error(err)
	}
	var md, table strings.Builder
	render.WriteMarkdown(&md, r, render.MarkdownLinks{})
	if first, _, _ := strings.Cut(md.String(), "\n"); !strings.HasPrefix(first, "### Regression gate: ") ||
		!strings.Contains(first, fmt.Sprintf("(exit %d)", r.Decision.ExitCode())) {
		t.Errorf("markdown:\n%s", md.String())
	}
	render.WriteTable(&table, r)
	if lines := strings.Split(strings.TrimSpace(table.String()), "\n"); !strings.HasPrefix(lines[len(lines)-1], "verdict: ") {
		t.Errorf("the table's last line is not the verdict:\n%s", table.String())
	}
	return table.String()
}

// A round whose measured window could not be read leaves NaN among the CPU
// samples: the JSON writes it as 0 rather than fail.
func TestWriteJSONNaNCPU(t *testing.T) {
	r := &result.Result{Scenarios: []result.ScenarioResult{{Judgement: result.Judgement{CPU: &result.CPUJudgement{SamplesA: []float64{math.NaN(), 1}, SamplesB: []float64{1, 1},
		MedianA: math.NaN(), CI: stats.RatioCI{High: math.Inf(1)}}}}}}
	if err := render.WriteJSON(filepath.Join(t.TempDir(), "gate.json"), r); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(r.Scenarios[0].CPU.SamplesA[0]) {
		t.Error("WriteJSON changed the result it wrote")
	}
}
