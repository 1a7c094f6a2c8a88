package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"weaseldb/gate/result"
	"weaseldb/gate/verdict"
)

func TestFlags(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		exit   int
		output string
	}{
		{"help", []string{"--help"}, 0, "usage: gate"},
		{"default config", []string{"--print-default-config"}, 0, "ok_resolve_iterations = 0"},
		{"unknown flag", []string{"--nope"}, 2, "flag provided but not defined"},
		{"stray argument", []string{"extra"}, 2, "unexpected argument"},
		{"a and a-ref", []string{"--a", "x", "--a-ref", "HEAD"}, 2, "not both"},
		{"too few rounds", []string{"--a", "x", "--rounds", "2"}, 2, "at least 3"},
		{"max rounds below rounds", []string{"--a", "x", "--rounds", "10", "--max-rounds", "8"}, 2, "--max-rounds 8: want at least --rounds (10)"},
		{"negative budget", []string{"--a", "x", "--budget", "-1s"}, 2, "--budget must not be negative"},
		{"removed bootstrap flag", []string{"--resamples", "100"}, 2, "flag provided but not defined: -resamples"},
		{"missing load tester", []string{"--a", "x", "--load-tester", "/nonexistent/lt"}, 2, "load tester /nonexistent/lt"},
		{"scenarios: no such file", []string{"--a", "x", "--scenarios", "/nonexistent/s.toml"}, 2,
			"verdict: COULD NOT JUDGE (exit 2): --scenarios: open /nonexistent/s.toml"},
		{"scenarios: baseline mode", []string{"--scenarios", "../../testdata/gate_scenarios.toml"}, 2, "--scenarios compares two builds"},
		{"scenarios: --path", []string{"--a", "x", "--scenarios", "../../testdata/gate_scenarios.toml", "--path", "/ok"}, 2,
			"--path: with --scenarios each scenario names its own"},
		{"scenarios: flags checked after the file's defaults", []string{"--a", "x", "--scenarios", "../../testdata/gate_scenarios.toml",
			"--rounds", "2"}, 2, "--rounds 2: at least 3"},
		{"scenarios: help names the mode", []string{"--help"}, 0, "--scenarios FILE"},
		{"--only without --scenarios", []string{"--a", "x", "--only", "ok"}, 2, "--only names scenarios of a --scenarios file"},
		{"--tiers without --scenarios", []string{"--a", "x", "--tiers", "cost"}, 2, "--tiers judges the scenarios of a --scenarios file"},
		{"--tiers unknown", []string{"--a", "x", "--scenarios", "../../testdata/gate_scenarios.toml", "--tiers", "speed"}, 2,
			"unknown tier \"speed\""},
		{"--order unknown", []string{"--a", "x", "--order", "shuffled"}, 2, "--order \"shuffled\": want random or alternate"},
		{"cost: bad tolerance", []string{"--a", "x", "--scenarios", "../../testdata/gate_scenarios.toml", "--tiers", "cost",
			"--cost-tolerance", "0"}, 2, "--cost-tolerance 0"},
		{"record: no arguments", []string{"record"}, 2, "usage: gate record"},
		{"record: no result file", []string{"record", "--commit", "c", "h.jsonl", "/nonexistent/gate.json"}, 2, "open /nonexistent/gate.json"},
		{"history: no file", []string{"history", "/nonexistent/h.jsonl"}, 2, "open /nonexistent/h.jsonl"},
		{"history: bad alpha", []string{"history", "--alpha", "2", "h.jsonl"}, 2, "--alpha must be in (0, 1)"},
		{"--only an unknown scenario", []string{"--a", "x", "--scenarios", "../../testdata/gate_scenarios.toml", "--only", "ok,nope"}, 2,
			"--only nope: no such scenario"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			exit := run(tt.args, &stdout, &stderr)
			out := stdout.String() + stderr.String()
			if exit != tt.exit || !strings.Contains(out, tt.output) {
				t.Errorf("exit %d (want %d), output %q (want %q)", exit, tt.exit, out, tt.output)
			}
		})
	}
}

func TestJSONOnFailure(t *testing.T) {
	p := filepath.Join(t.TempDir(), "gate.json")
	md := filepath.Join(t.TempDir(), "gate.md")
	t.Setenv("GITHUB_SERVER_URL", "https://git.example")
	t.Setenv("GITHUB_REPOSITORY", "team/weaseldb")
	t.Setenv("GITHUB_RUN_ID", "42")
	var stdout, stderr strings.Builder
	exit := run([]string{"--a", "x", "--load-tester", "/nonexistent/lt", "--json", p, "--markdown", md, "--quiet"}, &stdout, &stderr)
	if exit != 2 {
		t.Fatalf("exit %d, want 2", exit)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// The one schema: the one workload is the scenario "default".
	var r struct {
		Version  int    `json:"version"`
		Mode     string `json:"mode"`
		ExitCode int    `json:"exit_code"`
		Decision struct {
			Verdict string `json:"verdict"`
		} `json:"decision"`
		Scenarios []struct {
			Name     string `json:"name"`
			ExitCode int    `json:"exit_code"`
			Decision struct {
				ReasonCode string `json:"reason_code"`
			} `json:"decision"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(data, &r); err != nil || r.Version != result.ResultVersion || r.Mode != "ab" || r.ExitCode != 2 ||
		r.Decision.Verdict != "could not judge" || len(r.Scenarios) != 1 || r.Scenarios[0].Name != result.ImplicitScenarioName ||
		r.Scenarios[0].ExitCode != 2 || r.Scenarios[0].Decision.ReasonCode != verdict.ReasonBadInput {
		t.Errorf("JSON %s: %+v, %v", data, r, err)
	}
	if lines := strings.Split(strings.TrimSpace(stdout.String()), "\n"); !strings.HasPrefix(lines[len(lines)-1], "verdict: COULD NOT JUDGE (exit 2): load tester /nonexistent/lt") {
		t.Errorf("the table's last line is not the verdict: %s", stdout.String())
	}
	summary, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"could not judge (exit 2)", "load tester /nonexistent/lt", "`" + p + "`",
		"(https://git.example/team/weaseldb/actions/runs/42)"} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("markdown lacks %q:\n%s", want, summary)
		}
	}
}

// A scenarios run that cannot start still writes its JSON (the scenarios
// listed) and markdown, and exits 2.
func TestScenariosJSONOnFailure(t *testing.T) {
	p := filepath.Join(t.TempDir(), "gate.json")
	md := filepath.Join(t.TempDir(), "gate.md")
	var stdout, stderr strings.Builder
	exit := run([]string{"--a", "x", "--scenarios", "../../testdata/gate_scenarios.toml", "--load-tester", "/nonexistent/lt",
		"--json", p, "--markdown", md, "--quiet"}, &stdout, &stderr)
	if exit != 2 {
		t.Fatalf("exit %d, want 2; %s%s", exit, stdout.String(), stderr.String())
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Version   int    `json:"version"`
		Mode      string `json:"mode"`
		ExitCode  int    `json:"exit_code"`
		Scenarios []struct {
			Name string `json:"name"`
		} `json:"scenarios"`
		Settings struct {
			DurationS float64 `json:"duration_s"`
		} `json:"settings"`
	}
	if err := json.Unmarshal(data, &r); err != nil || r.Version != result.ResultVersion || r.Mode != "scenarios" || r.ExitCode != 2 || len(r.Scenarios) != 4 {
		t.Errorf("JSON %s: %+v, %v", data, r, err)
	}
	summary, err := os.ReadFile(md)
	if err != nil || !strings.Contains(string(summary), "could not judge (exit 2)") || !strings.Contains(string(summary), "load tester /nonexistent/lt") {
		t.Errorf("markdown: %v\n%s", err, summary)
	}
	if lines := strings.Split(strings.TrimSpace(stdout.String()), "\n"); !strings.HasPrefix(lines[len(lines)-1], "verdict: COULD NOT JUDGE (exit 2): load tester /nonexistent/lt") {
		t.Errorf("last line: %q", lines[len(lines)-1])
	}
}

// gate record appends a scenarios run's result under a commit; gate
// history reads the file back and finds a step planted in it, and exits 1
// with --fail-on-worse when the last step is for the worse.
func TestRecordAndHistory(t *testing.T) {
	dir := t.TempDir()
	hist := filepath.Join(dir, "history.jsonl")
	for i := range 12 {
		instr := 7500.0 + float64(i%3)
		if i >= 6 {
			instr += 150 // a 2% step at c6
		}
		doc := fmt.Sprintf(`{"version":4,"mode":"scenarios","decision":{"verdict":"pass"},"scenarios":[{"name":"ok","tiers":["cost"],`+
			`"cost":{"a":{"instructions_per_request":7500,"runs":[]},"b":{"instructions_per_request":%g,"runs":[]},"ratio":1,"verdict":"pass"}}]}`, instr)
		res := filepath.Join(dir, fmt.Sprintf("gate%d.json", i))
		if err := os.WriteFile(res, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr strings.Builder
		if exit := run([]string{"record", "--commit", fmt.Sprintf("c%d", i), hist, res}, &stdout, &stderr); exit != 0 {
			t.Fatalf("record: exit %d: %s", exit, stderr.String())
		}
	}
	var stdout, stderr strings.Builder
	exit := run([]string{"history", "--fail-on-worse", "--json", filepath.Join(dir, "steps.json"), hist}, &stdout, &stderr)
	if exit != 1 || !strings.Contains(stdout.String(), "c5..c6") || !strings.Contains(stdout.String(), "WORSE") {
		t.Fatalf("history: exit %d\n%s%s", exit, stdout.String(), stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "steps.json")); err != nil {
		t.Error(err)
	}

	// Any mode's result of this schema is recorded (a one-workload run's
	// one scenario); an older schema's is refused, not read as zeros.
	for _, tt := range []struct {
		doc  string
		exit int
		out  string
	}{
		{`{"version":4,"mode":"ab","decision":{"verdict":"pass"},"scenarios":[{"name":"default","tiers":["time"],"b":{"median_rps":50000}}]}`,
			0, "(1 scenarios, pass)"},
		{`{"version":4,"mode":"baseline","decision":{"verdict":"pass"},"scenarios":[{"name":"default","tiers":["time"],"b":{"median_rps":50000}}]}`,
			0, "(1 scenarios, pass)"},
		{`{"version":3,"mode":"scenarios","decision":{"verdict":"pass"},"scenarios":[{"name":"ok"}]}`, 2, "result version 3, want 4"},
		{`{"version":2,"mode":"ab","decision":{"verdict":"pass"},"a":{},"b":{}}`, 2, "result version 2, want 4"},
	} {
		res := filepath.Join(dir, "one.json")
		if err := os.WriteFile(res, []byte(tt.doc), 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr strings.Builder
		exit := run([]string{"record", "--commit", "c99", filepath.Join(dir, "other.jsonl"), res}, &stdout, &stderr)
		if exit != tt.exit || !strings.Contains(stdout.String()+stderr.String(), tt.out) {
			t.Errorf("record %s: exit %d, want %d with %q: %s%s", tt.doc, exit, tt.exit, tt.out, stdout.String(), stderr.String())
		}
	}
}
