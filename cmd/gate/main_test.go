package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	var r struct {
		ExitCode int `json:"exit_code"`
		Decision struct {
			Verdict string `json:"verdict"`
		} `json:"decision"`
	}
	if err := json.Unmarshal(data, &r); err != nil || r.ExitCode != 2 || r.Decision.Verdict != "could not judge" {
		t.Errorf("JSON %s: %+v, %v", data, r, err)
	}
	if !strings.Contains(stdout.String(), "verdict: COULD NOT JUDGE (exit 2)") {
		t.Errorf("table lacks the verdict line: %s", stdout.String())
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
