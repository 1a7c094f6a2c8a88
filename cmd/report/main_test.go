package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"weaseldb/artifacts"
	"weaseldb/reports"
)

const recordedRun = "../../testdata/report_run"

func TestGenerateCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.md")
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"--run", recordedRun, "--out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "6 plots") {
		t.Errorf("stdout = %q", stdout.String())
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(out), "img", "run_"+reports.ThroughputPNG)); err != nil {
		t.Error(err)
	}
}

// TestGenerateWithADamagedArtifact: the report is still written, without
// what the damaged file held, and the command fails naming the file.
func TestGenerateWithADamagedArtifact(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{artifacts.ManifestFile, artifacts.LoadFile, artifacts.CPUWorkFile} {
		data, err := os.ReadFile(filepath.Join(recordedRun, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == artifacts.CPUWorkFile {
			data = data[:len(data)/2] // cut short, as by a full disk
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "r.md")
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"--run", dir, "--out", out}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "1 artifact(s)") || !strings.Contains(err.Error(), "decode artifact cpu_work.json") {
		t.Fatalf("run error = %v, want one naming the damaged cpu_work.json", err)
	}
	md, readErr := os.ReadFile(out)
	if readErr != nil {
		t.Fatalf("no report written: %v", readErr)
	}
	if !strings.Contains(string(md), "**Warning: artifacts of this run could not be read**") {
		t.Error("the report does not say an artifact was left out")
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
		{"manifest without config", []string{"manifest", "--run", "x", "--steps", "y"}},
		{"manifest positional", []string{"manifest", "--run", "x", "--config", "c", "--steps", "y", "extra"}},
		{"setups without config", []string{"setups", "--run", "x"}},
		{"setups without run", []string{"setups", "--config", "../../testdata/test_benchmark_config.toml"}},
		{"setups zero rounds", []string{"setups", "--run", "x", "--config", "c.toml", "--rounds", "0"}},
		{"setups short duration", []string{"setups", "--run", "x", "--config", "c.toml", "--duration", "1"}},
		{"setups positional", []string{"setups", "--run", "x", "--config", "c.toml", "extra"}},
		{"setups unreadable config", []string{"setups", "--run", "x", "--config", "/nonexistent.toml"}},
		{"setups negative sustain", []string{"setups", "--run", "x", "--config", "c.toml", "--sustain", "-1"}},
		{"setups window beyond sustain", []string{"setups", "--run", "x", "--config", "c.toml", "--sustain", "5", "--sustain-window", "10"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if err := run(t.Context(), tt.args, &stdout, &stderr); err == nil {
				t.Fatal("run accepted bad arguments")
			}
		})
	}
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"--help"}, &stdout, &stderr); !errors.Is(err, flag.ErrHelp) || !strings.Contains(stderr.String(), "report setups") {
		t.Errorf("--help: %v, usage %q", err, stderr.String())
	}
}

func TestManifestCommand(t *testing.T) {
	dir := t.TempDir()
	steps := filepath.Join(dir, "steps.tsv")
	if err := os.WriteFile(steps, []byte("build\t0\t1.5\tmake build\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	args := []string{"manifest", "--run", dir, "--config", "../../testdata/test_benchmark_config.toml", "--config-source", "x.toml",
		"--steps", steps, "--duration", "20", "--quick", "--nofile", "65536", "--started", "2026-11-30T00:00:00Z"}
	if err := run(t.Context(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var m artifacts.Manifest
	data, err := os.ReadFile(filepath.Join(dir, artifacts.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Steps) != 1 || !m.Quick || m.DurationS != 20 || m.NofileLimit != "65536" || m.Config.Source != "x.toml" {
		t.Errorf("manifest = %+v", m)
	}
}

// The plan of both setups for simulated machines: 2 CPUs share every core
// and never spin; 16 dedicate them.
func TestSetupsPlanSimulated(t *testing.T) {
	for _, tc := range []struct{ cpus, want string }{
		{"0-1", "WaitIfStageEmpty; load tester: 100 connections in all, over 1 network thread and 2 connect threads; shared cores"},
		{"0-15", "dedicated cores (io 1-5; stages 6 7 8 9; load_tester 10-15)"},
	} {
		var out bytes.Buffer
		err := run(t.Context(), []string{"setups", "--config", "../../testdata/test_benchmark_config.toml", "--allowed-cpus", tc.cpus}, &out, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), tc.want) || !strings.Contains(out.String(), "round 2: calibrate, fitted, seed") ||
			!strings.Contains(out.String(), "8 I/O threads, 1 release thread, WaitIfUpstreamIdle; load tester: 2,000 connections in all, over 10 network threads and 2 connect threads") {
			t.Errorf("%s: plan lacks %q:\n%s", tc.cpus, tc.want, out.String())
		}
	}
}
