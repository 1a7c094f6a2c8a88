package gate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// quickOptions are short runs against the fakes: a few seconds per gate.
func quickOptions(t *testing.T) Options {
	t.Helper()
	server, lt := fakeBinaries(t)
	o := DefaultOptions()
	o.A, o.B, o.LoadTester = server, server, lt
	o.Rounds = 5
	o.Duration = 300 * time.Millisecond
	o.Warmup = 100 * time.Millisecond
	o.WarmupRun = 200 * time.Millisecond
	o.Concurrency = 4
	o.Resamples = 2000
	o.StartTimeout = 10 * time.Second
	o.Config = writeFile(t, "base.toml", "[fake]\ndelay_us = 2000\n")
	return o
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runGate(t *testing.T, o Options) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var progress strings.Builder
	r := Run(ctx, o, &progress)
	var table strings.Builder
	WriteTable(&table, r)
	t.Logf("progress:\n%s\ntable:\n%s", progress.String(), table.String())
	return r
}

// TestGateABWithFakes: the same server as A and B passes; a B whose
// requests take three times as long fails. The fake load tester reports
// the throughput the fake server's delay allows, so the verdicts hold on a
// busy machine (TestGateWithRealLoadTester measures for real).
func TestGateABWithFakes(t *testing.T) {
	t.Run("A/A passes", func(t *testing.T) {
		o := quickOptions(t)
		// A relative path must survive the server running in a temp dir.
		wd, _ := os.Getwd()
		if rel, err := filepath.Rel(wd, o.A); err == nil {
			o.A = rel
		}
		r := runGate(t, o)
		if r.Verdict != Pass || r.ExitCode != 0 {
			t.Fatalf("A/A: %s (%s): %s", r.Verdict, r.ReasonCode, r.Reason)
		}
		if len(r.A.SamplesRPS) != o.Rounds || len(r.B.SamplesRPS) != o.Rounds || !r.CI.Paired {
			t.Errorf("want %d paired rounds, got A %d B %d paired=%v", o.Rounds, len(r.A.SamplesRPS), len(r.B.SamplesRPS), r.CI.Paired)
		}
	})
	t.Run("3x slower B fails", func(t *testing.T) {
		o := quickOptions(t)
		o.BConfig = writeFile(t, "slow.toml", "[fake]\ndelay_us = 6000\n")
		r := runGate(t, o)
		if r.Verdict != Regression || r.ExitCode != 1 {
			t.Fatalf("slower B: %s (%s): %s", r.Verdict, r.ReasonCode, r.Reason)
		}
		if r.CI.Ratio < 0.3 || r.CI.Ratio > 0.37 {
			t.Errorf("ratio %.3f, want 1/3", r.CI.Ratio)
		}
	})
}

// TestGateRoundOrderAlternates: A B, then B A, so neither side always
// follows the other; with fresh servers per round too.
func TestGateRoundOrderAlternates(t *testing.T) {
	for _, restart := range []bool{false, true} {
		o := quickOptions(t)
		o.Rounds = 4
		o.Tolerance = 0.3
		o.RestartEachRound = restart
		r := runGate(t, o)
		var order []string
		for _, run := range r.Runs {
			order = append(order, run.Side)
		}
		if got := strings.Join(order, ""); got != "ABBAABBA" {
			t.Errorf("restart=%v: run order %s, want ABBAABBA", restart, got)
		}
		if r.Verdict != Pass || len(r.Warnings) > 0 {
			t.Errorf("restart=%v: %s (%s): %s; warnings %v", restart, r.Verdict, r.ReasonCode, r.Reason, r.Warnings)
		}
	}
}

func TestGateCouldNotJudge(t *testing.T) {
	tests := []struct {
		name    string
		bConfig string
		modify  func(*Options)
		reason  string
		verdict Verdict
	}{
		{name: "server fails to start", bConfig: "[fake]\nfail_start = true\n", reason: ReasonServerStart, verdict: CouldNotJudge},
		{name: "server never ready", bConfig: "[fake]\nnever_ready = true\n", reason: ReasonServerStart, verdict: CouldNotJudge,
			modify: func(o *Options) { o.StartTimeout = time.Second }},
		{name: "errors during runs", bConfig: "[fake]\ndelay_us = 2000\nerror_every = 7\n", reason: ReasonErrors, verdict: CouldNotJudge},
		{name: "server dies mid-run", bConfig: "[fake]\ndelay_us = 2000\ndie_after = 30\n", reason: ReasonServerDied, verdict: CouldNotJudge},
		{name: "client bound", modify: func(o *Options) { o.LoadArgs = []string{"--pretend-client-bound"} },
			reason: ReasonClientBound, verdict: CouldNotJudge},
		{name: "client bound forgiven by --noise-ok", modify: func(o *Options) {
			o.LoadArgs = []string{"--pretend-client-bound"}
			o.NoiseOK = true
			o.Tolerance = 0.3
		}, reason: ReasonWithinTolerance, verdict: Pass},
		{name: "missing load tester", modify: func(o *Options) { o.LoadTester = "/nonexistent/load_tester" },
			reason: ReasonBadInput, verdict: CouldNotJudge},
		{name: "missing server binary", modify: func(o *Options) { o.B = "/nonexistent/weaseldb" },
			reason: ReasonServerStart, verdict: CouldNotJudge},
		{name: "bad options", modify: func(o *Options) { o.Rounds = 1 }, reason: ReasonBadInput, verdict: CouldNotJudge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := quickOptions(t)
			o.Rounds = 3
			if tt.bConfig != "" {
				o.BConfig = writeFile(t, "b.toml", tt.bConfig)
			}
			if tt.modify != nil {
				tt.modify(&o)
			}
			r := runGate(t, o)
			if r.Verdict != tt.verdict || r.ReasonCode != tt.reason {
				t.Fatalf("got %s (%s): %s; want %s (%s)", r.Verdict, r.ReasonCode, r.Reason, tt.verdict, tt.reason)
			}
			if r.ExitCode != tt.verdict.ExitCode() {
				t.Errorf("exit %d, want %d", r.ExitCode, tt.verdict.ExitCode())
			}
			if strings.Contains(r.Reason, "\n") || r.Reason == "" {
				t.Errorf("reason must be one line: %q", r.Reason)
			}
		})
	}
}

func TestGateBaselineMode(t *testing.T) {
	o := quickOptions(t)
	o.A = ""
	o.BaselineFile = filepath.Join(t.TempDir(), "baseline.json")
	o.Tolerance = 0.3

	o.UpdateBaseline = true
	r := runGate(t, o)
	if r.Verdict != Pass || r.ReasonCode != "baseline_written" {
		t.Fatalf("update: %s (%s): %s", r.Verdict, r.ReasonCode, r.Reason)
	}
	b, err := ReadBaseline(o.BaselineFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.SamplesRPS) != o.Rounds || b.Machine.CPUModel == "" || b.Machine.Cores == 0 || b.Settings.ConfigSHA256 == "" {
		t.Errorf("baseline lacks samples or machine: %+v", b)
	}

	o.UpdateBaseline = false
	t.Run("same machine and settings", func(t *testing.T) {
		r := runGate(t, o)
		if r.Verdict != Pass || r.Mode != "baseline" || r.CI.Paired {
			t.Fatalf("compare: %s (%s): %s (mode %s paired %v)", r.Verdict, r.ReasonCode, r.Reason, r.Mode, r.CI.Paired)
		}
	})
	t.Run("slower server fails", func(t *testing.T) {
		// Same config (the baseline checks its hash); the fake reads its
		// delay from the environment instead.
		t.Setenv("GATE_FAKE_DELAY_US", "6000")
		r := runGate(t, o)
		if r.Verdict != Regression || r.ExitCode != 1 {
			t.Fatalf("slower than baseline: %s (%s): %s", r.Verdict, r.ReasonCode, r.Reason)
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
		r := runGate(t, o)
		if r.Verdict != CouldNotJudge || r.ReasonCode != ReasonOtherMachine {
			t.Fatalf("other machine: %s (%s): %s", r.Verdict, r.ReasonCode, r.Reason)
		}
		o.AllowOtherMachine = true
		r = runGate(t, o)
		if r.ReasonCode == ReasonOtherMachine || len(r.Warnings) == 0 {
			t.Fatalf("--allow-other-machine: %s (%s), warnings %v", r.Verdict, r.ReasonCode, r.Warnings)
		}
	})
	t.Run("other settings", func(t *testing.T) {
		o := o
		o.Concurrency = 3
		r := runGate(t, o)
		if r.Verdict != CouldNotJudge || r.ReasonCode != ReasonOtherSettings {
			t.Fatalf("other settings: %s (%s): %s", r.Verdict, r.ReasonCode, r.Reason)
		}
	})
}

func TestWriteJSON(t *testing.T) {
	o := quickOptions(t)
	o.Rounds = 3
	o.Tolerance = 0.3
	r := runGate(t, o)
	p := filepath.Join(t.TempDir(), "gate.json")
	if err := WriteJSON(p, r); err != nil {
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
	if back["version"] != float64(ResultVersion) || dec["verdict"] == nil || back["exit_code"] == nil || back["ratio"] == nil {
		t.Errorf("JSON lacks version/decision/exit_code/ratio: %s", data)
	}
	// A failed run (no samples, NaN statistics) must still encode.
	bad := Run(context.Background(), Options{}, nil)
	if err := WriteJSON(filepath.Join(t.TempDir(), "bad.json"), bad); err != nil {
		t.Errorf("result of a failed run: %v", err)
	}
}

// TestGateInterrupted: a cancelled gate (SIGINT in cmd/gate) stops its
// load run and servers and says why, promptly.
func TestGateInterrupted(t *testing.T) {
	o := quickOptions(t)
	o.Rounds = 50
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	r := Run(ctx, o, nil)
	if r.Verdict != CouldNotJudge || !strings.Contains(r.Reason, "interrupted") {
		t.Fatalf("got %s (%s): %s", r.Verdict, r.ReasonCode, r.Reason)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("took %v to stop", took)
	}
}

// TestGateOverTCP: with --network tcp each server binds port 0 and the gate
// reads the kernel's choice from its "listening on" line: no free-port
// probe that another process could race.
func TestGateOverTCP(t *testing.T) {
	o := quickOptions(t)
	o.Network = "tcp"
	o.Rounds = 3
	o.Tolerance = 0.3
	r := runGate(t, o)
	if r.Verdict != Pass {
		t.Fatalf("%s (%s): %s", r.Verdict, r.ReasonCode, r.Reason)
	}
	for _, s := range []Side{r.A, r.B} {
		if !strings.HasPrefix(s.Target, "127.0.0.1:") || strings.HasSuffix(s.Target, ":0") {
			t.Errorf("side %s target %q, want a bound loopback port", s.Name, s.Target)
		}
	}
}
