package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"weaseldb/reports"
)

const recordedRun = "../../testdata/report_run"

func TestGenerateCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.md")
	var stdout, stderr bytes.Buffer
	if err := run([]string{"--run", recordedRun, "--out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "6 plots") {
		t.Errorf("stdout = %q", stdout.String())
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(out), "img", reports.ThroughputPNG)); err != nil {
		t.Error(err)
	}
}

func TestBadArguments(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"no run", []string{"--out", "x.md"}},
		{"positional", []string{"--run", recordedRun, "extra"}},
		{"unknown flag", []string{"--bogus"}},
		{"missing run dir", []string{"--run", "/nonexistent/run", "--out", "/tmp/x.md"}},
		{"cpu-sample without pid", []string{"cpu-sample", "--json", "x.json"}},
		{"manifest without config", []string{"manifest", "--run", "x", "--steps", "y"}},
		{"config without out", []string{"config", "--in", "x.toml"}},
		{"config bad port", []string{"config", "--in", "x.toml", "--out", "y", "--tcp-port", "70000"}},
		{"config port not a number", []string{"config", "--in", "x.toml", "--out", "y", "--tcp-port", "eighty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if err := run(tt.args, &stdout, &stderr); err == nil {
				t.Fatal("run accepted bad arguments")
			}
		})
	}
	var stdout, stderr bytes.Buffer
	if err := run([]string{"--help"}, &stdout, &stderr); !errors.Is(err, flag.ErrHelp) || !strings.Contains(stderr.String(), "cpu-sample") {
		t.Errorf("--help: %v, usage %q", err, stderr.String())
	}
}

func TestCPUSampleCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cpu.json")
	var stdout, stderr bytes.Buffer
	args := []string{"cpu-sample", "--pid", strconv.Itoa(os.Getpid()), "--seconds", "0.2", "--phase", "idle", "--json", out}
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var s reports.CPUSample
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if s.Phase != "idle" || s.Pid != os.Getpid() || s.WindowS < 0.2 {
		t.Errorf("sample = %+v", s)
	}
}

func TestManifestAndConfigCommands(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "server.toml")
	var stdout, stderr bytes.Buffer
	if err := run([]string{"config", "--in", "../../testdata/test_benchmark_config.toml", "--out", cfg, "--tcp-address", "127.0.0.1"}, &stdout, &stderr); err != nil {
		t.Skipf("testdata/test_benchmark_config.toml unusable here: %v", err)
	}
	steps := filepath.Join(dir, "steps.tsv")
	if err := os.WriteFile(steps, []byte("build\t0\t1.5\tmake build\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"manifest", "--run", dir, "--config", cfg, "--config-source", "testdata/test_benchmark_config.toml",
		"--steps", steps, "--duration", "20", "--quick", "--server-exit", "0", "--nofile", "65536", "--started", "2026-11-30T00:00:00Z"}
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var m reports.Manifest
	data, err := os.ReadFile(filepath.Join(dir, reports.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Steps) != 1 || m.Steps[0].Command != "make build" || !m.Quick || m.DurationS != 20 ||
		m.ServerExitCode == nil || *m.ServerExitCode != 0 || m.Machine.Cores < 1 || m.Config.Source == "" {
		t.Errorf("manifest = %+v", m)
	}
	if _, ok := m.Config.Values["server"]; !ok {
		t.Errorf("config values lack [server]: %v", m.Config.Values)
	}
}

func TestParsePort(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    int
		wantErr bool
	}{{"0", 0, false}, {"8123", 8123, false}, {"65536", 0, true}, {"-1", 0, true}, {"x", 0, true}} {
		got, err := parsePort(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("parsePort(%q) = %d, %v", tt.in, got, err)
		}
	}
	if p, err := parsePort("auto"); err != nil || p <= 0 {
		t.Errorf("parsePort(auto) = %d, %v", p, err)
	}
}
