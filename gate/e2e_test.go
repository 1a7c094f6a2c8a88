package gate

// End-to-end runs through real processes (the fakes of helpers_test.go):
// what the synthetic lab cannot show, that the wiring holds: config
// written, servers started and stopped, load_tester's JSON and exit status
// read, deaths noticed. Short runs; the statistics and the decisions are
// tested against synthetic samples in rounds_test.go and stats_test.go.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"weaseldb/gate/cost"
	"weaseldb/gate/render"
	"weaseldb/gate/result"
	"weaseldb/gate/verdict"
)

// quickOptions are short runs against the fakes: about a second per gate.
func quickOptions(t *testing.T) Options {
	t.Helper()
	server, lt := fakeBinaries(t)
	o := DefaultOptions()
	o.A, o.B, o.LoadTester = server, server, lt
	o.Rounds, o.MaxRounds = 6, 6 // the fewest with a finite 95% interval
	o.Duration = 100 * time.Millisecond
	o.Warmup = 0
	o.WarmupRun = 100 * time.Millisecond
	o.Concurrency = 4
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

func runGate(t *testing.T, o Options) oneRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var progress strings.Builder
	r := Run(ctx, o, &progress)
	var table strings.Builder
	render.WriteTable(&table, r)
	t.Logf("progress:\n%s\ntable:\n%s", progress.String(), table.String())
	return one(t, r)
}

// TestGateABWithFakes: the same server as A and B passes; a B whose
// requests take three times as long fails. The fake load tester reports
// the throughput the fake server's delay allows, so the verdicts hold on a
// busy machine (TestGateWithRealWeaseldb measures for real).
func TestGateABWithFakes(t *testing.T) {
	t.Run("A/A passes", func(t *testing.T) {
		o := quickOptions(t)
		// A relative path must survive the server running in a temp dir.
		wd, _ := os.Getwd()
		if rel, err := filepath.Rel(wd, o.A); err == nil {
			o.A = rel
		}
		r := runGate(t, o)
		if r.Verdict != verdict.Pass || r.ExitCode != 0 || r.StopReason != StopDecided {
			t.Fatalf("A/A: %s (%s): %s", r.Verdict, r.ReasonCode, r.Reason)
		}
		if len(r.A.SamplesRPS) != o.Rounds || len(r.B.SamplesRPS) != o.Rounds || !r.CI.Paired {
			t.Errorf("want %d paired rounds, got A %d B %d paired=%v", o.Rounds, len(r.A.SamplesRPS), len(r.B.SamplesRPS), r.CI.Paired)
		}
		if len(r.Warnings) > 0 {
			t.Errorf("warnings: %v", r.Warnings)
		}
	})
	t.Run("3x slower B fails", func(t *testing.T) {
		o := quickOptions(t)
		o.BConfig = writeFile(t, "slow.toml", "[fake]\ndelay_us = 6000\n")
		r := runGate(t, o)
		if r.Verdict != verdict.Regression || r.ExitCode != 1 {
			t.Fatalf("slower B: %s (%s): %s", r.Verdict, r.ReasonCode, r.Reason)
		}
		if r.CI.Ratio < 0.3 || r.CI.Ratio > 0.37 {
			t.Errorf("ratio %.3f, want 1/3", r.CI.Ratio)
		}
	})
}

// TestGateOverTCP: with --network tcp each server binds port 0 and the gate
// reads the kernel's choice from its "listening on" line: no free-port
// probe that another process could race.
func TestGateOverTCP(t *testing.T) {
	o := quickOptions(t)
	o.Network = "tcp"
	o.Rounds, o.MaxRounds = 3, 3
	o.NoiseOK = true // 3 rounds leave the interval open: this is about the wiring
	r := runGate(t, o)
	if r.Verdict != verdict.Pass || len(r.Problems) > 0 || r.Rounds != 3 {
		t.Fatalf("%s (%s): %s; problems %v", r.Verdict, r.ReasonCode, r.Reason, r.Problems)
	}
	for _, s := range []result.Side{r.A, r.B} {
		if !strings.HasPrefix(s.Target, "127.0.0.1:") || strings.HasSuffix(s.Target, ":0") {
			t.Errorf("side %s target %q, want a bound loopback port", s.Name, s.Target)
		}
	}
}

// TestGateProcessFailures: how real processes fail reaches the verdict.
func TestGateProcessFailures(t *testing.T) {
	tests := []struct {
		name    string
		bConfig string
		modify  func(*Options)
		reason  string
		detail  string
	}{
		{name: "server fails to start", bConfig: "[fake]\nfail_start = true\n", reason: verdict.ReasonServerStart,
			detail: "server B exited with status 1 before it was ready: fakeserver: bind: address already in use"},
		{name: "server never ready", bConfig: "[fake]\nnever_ready = true\n", reason: verdict.ReasonServerStart,
			modify: func(o *Options) { o.StartTimeout = 500 * time.Millisecond }, detail: `no "weaseldb: ready" line within 500ms`},
		{name: "missing server binary", modify: func(o *Options) { o.B = "/nonexistent/weaseldb" }, reason: verdict.ReasonServerStart,
			detail: "starting /nonexistent/weaseldb"},
		// The warm-up run usually meets the 7th request and fails first;
		// on a starved machine it may serve fewer, and round 1 fails.
		{name: "errors: load_tester exits 1 with its result", bConfig: "[fake]\ndelay_us = 2000\nerror_every = 7\n", reason: verdict.ReasonErrors,
			detail: "server B: "},
		{name: "unfinished requests", modify: func(o *Options) { o.LoadArgs = []string{"--pretend-unfinished=5"} }, reason: verdict.ReasonUnclean,
			detail: "5 unfinished and 0 dropped"},
		// die_after is small so that B dies in every case: 4 connections
		// make at least 4 requests a run, however starved the machine (60
		// let B live through all its short runs at load 15).
		{name: "server dies mid-run", bConfig: "[fake]\ndelay_us = 2000\ndie_after = 5\n", reason: verdict.ReasonServerDied,
			detail: "server B exited during the runs (status 3): fakeserver: crashing as told"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := quickOptions(t)
			o.Rounds, o.MaxRounds = 3, 3
			if tt.bConfig != "" {
				o.BConfig = writeFile(t, "b.toml", tt.bConfig)
			}
			if tt.modify != nil {
				tt.modify(&o)
			}
			r := runGate(t, o)
			if r.Verdict != verdict.CouldNotJudge || r.ReasonCode != tt.reason || r.ExitCode != 2 {
				t.Fatalf("got %s (%s, exit %d): %s; want could not judge (%s)", r.Verdict, r.ReasonCode, r.ExitCode, r.Reason, tt.reason)
			}
			if !strings.Contains(r.Reason, tt.detail) || strings.Contains(r.Reason, "\n") {
				t.Errorf("reason %q: want one line containing %q", r.Reason, tt.detail)
			}
		})
	}
}

// TestGateInterrupted: a cancelled gate (SIGINT in cmd/gate) stops its
// load run and servers and says why, promptly.
func TestGateInterrupted(t *testing.T) {
	o := quickOptions(t)
	o.Rounds, o.MaxRounds = 50, 50
	o.Duration = time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	r := Run(ctx, o, nil)
	if r.Verdict != verdict.CouldNotJudge || !strings.Contains(r.Reason, "interrupted") {
		t.Fatalf("got %s (%s): %s", r.Verdict, r.ReasonCode, r.Reason)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("took %v to stop", took)
	}
}

// TestScenariosWithFakes: a scenarios run through real processes. B is
// three times slower on POST only: the commit scenario fails and the
// others pass. The fake server refuses a status request before it has
// served a POST, so a status scenario that passes proves its setup ran on
// every fresh server before its runs.
func TestScenariosWithFakes(t *testing.T) {
	o := quickOptions(t)
	o.Config = writeFile(t, "base.toml", "[fake]\ndelay_us = 2000\nrefuse_without_setup = true\n")
	o.BConfig = writeFile(t, "slow.toml", "[fake]\ndelay_us = 2000\npost_delay_us = 6000\nrefuse_without_setup = true\n")
	f, err := ParseScenarios([]byte(`
[[scenario]]
name = "ok"
path = "/ok"
[[scenario]]
name = "commit"
method = "POST"
path = "/v1/commit"
headers = ["Content-Type: application/json"]
body = '{"request_id":"gate-{{uuid}}"}'
[[scenario]]
name = "status"
path = "/v1/status?request_id=gate-status-0000000000000001"
[[scenario.setup]]
method = "POST"
path = "/v1/commit"
body = '{"request_id":"gate-status-0000000000000001"}'
duration = "20ms"
`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var progress strings.Builder
	r := runScenarios(ctx, o, f, &progress, processLab{}, cost.ProcessLab{}, time.Now)
	var table strings.Builder
	render.WriteTable(&table, r)
	t.Logf("progress:\n%s\ntable:\n%s", progress.String(), table.String())
	if r.Verdict != verdict.Regression || r.DecidedBy != "commit" || r.ExitCode != 1 {
		t.Fatalf("%s by %q (exit %d): %s", r.Verdict, r.DecidedBy, r.ExitCode, r.Reason)
	}
	for _, s := range r.Scenarios {
		want := verdict.Pass
		if s.Name == "commit" {
			want = verdict.Regression
		}
		if s.Verdict != want || s.Rounds != o.Rounds || len(s.Problems) > 0 {
			t.Errorf("%s: %s after %d rounds (%s), problems %v; want %s", s.Name, s.Verdict, s.Rounds, s.Reason, s.Problems, want)
		}
	}
	if c := r.Scenarios[1]; c.CI.Ratio < 0.3 || c.CI.Ratio > 0.37 {
		t.Errorf("commit ratio %.3f, want 1/3", c.CI.Ratio)
	}
	if !strings.Contains(progress.String(), "gate: status: round 6:") {
		t.Errorf("progress lines must name the scenario:\n%s", progress.String())
	}
}
