package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"weaseldb/artifacts"
	"weaseldb/reports"
)

// recordedManycoreRun is a real run of scripts/manycore.sh (16 emulated CPUs).
const recordedManycoreRun = "../../reports/testdata/manycore_run"

// copyDir copies a run directory into a temporary one, leaving out skip.
func copyDir(t *testing.T, src string, skip ...string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		for _, s := range skip {
			if rel == s {
				return nil
			}
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// `report --run DIR` on a virtual machine's run writes DIR/manycore_report.md
// as a functional check, and never the performance report at its default
// path.
func TestGenerateVirtualRunIsAFunctionalCheck(t *testing.T) {
	dir := copyDir(t, recordedManycoreRun)
	cwd := t.TempDir()
	t.Chdir(cwd) // where the default --out (reports/threading_performance_report.md) would land
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"--run", dir}, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "a functional check (the run's CPUs were virtual)") {
		t.Errorf("stdout = %q", stdout.String())
	}
	md, err := os.ReadFile(filepath.Join(dir, reports.FunctionalReportFile))
	if err != nil || !strings.Contains(string(md), "functional check, not a performance measurement") {
		t.Fatalf("no functional report in the run directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cwd, "reports")); err == nil {
		t.Error("a performance report was written for a virtual run")
	}
	// --out names another file.
	out := filepath.Join(t.TempDir(), "x.md")
	if err := run(t.Context(), []string{"--run", dir, "--out", out}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(out); err != nil {
		t.Error(err)
	}
}

// A failed check: the functional report is written, and the command fails.
func TestGenerateVirtualRunWithAFailedCheck(t *testing.T) {
	dir := copyDir(t, recordedManycoreRun, artifacts.ChecksFile)
	path := filepath.Join(dir, "ws_server_Never_dedicated.load.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	doc["unfinished"] = 5
	data, _ = json.Marshal(doc)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err = run(t.Context(), []string{"--run", dir}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "1 failed") {
		t.Fatalf("run: %v, want a failure naming the failed check", err)
	}
	if _, err := os.Stat(filepath.Join(dir, reports.FunctionalReportFile)); err != nil {
		t.Errorf("no report written: %v", err)
	}
}

// `report check` writes checks.json and exits 1 when a check fails: here,
// a run held to more CPUs than it had.
func TestCheckCommand(t *testing.T) {
	dir := copyDir(t, recordedManycoreRun, artifacts.ChecksFile)
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"check", "--run", dir, "--cpus", "16", "--require-dedicated"}, &stdout, &stderr); err != nil {
		t.Fatalf("check: %v\n%s", err, stdout.String())
	}
	var cs artifacts.Checks
	data, err := os.ReadFile(filepath.Join(dir, artifacts.ChecksFile))
	if err != nil || json.Unmarshal(data, &cs) != nil || !cs.Passed {
		t.Fatalf("checks.json: %v %+v", err, cs.FailedChecks())
	}
	stdout.Reset()
	out := filepath.Join(t.TempDir(), "c.json")
	err = run(t.Context(), []string{"check", "--run", dir, "--cpus", "32", "--out", out}, &stdout, &stderr)
	if err == nil || !strings.Contains(stdout.String(), "FAILED machine, cpus: 16 CPUs online (machine.cores), want 32") {
		t.Fatalf("check --cpus 32: %v\n%s", err, stdout.String())
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("--out: %v", err)
	}
	if err := run(t.Context(), []string{"check"}, &stdout, &stderr); err == nil {
		t.Error("check without --run: no error")
	}
}

// `report manifest --virtual` records the virtual machine; an unknown
// accelerator is refused.
func TestManifestVirtual(t *testing.T) {
	dir := t.TempDir()
	steps := filepath.Join(dir, "steps.tsv")
	if err := os.WriteFile(steps, []byte("setups\t0\t20.5\treport setups\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"manifest", "--run", dir, "--config", "../../testdata/test_benchmark_config.toml", "--steps", steps}
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), append(base, "--virtual", "tcg", "--host-cpus", "2", "--host-cpu-model", "AMD EPYC"), &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var m artifacts.Manifest
	data, err := os.ReadFile(filepath.Join(dir, artifacts.ManifestFile))
	if err != nil || json.Unmarshal(data, &m) != nil {
		t.Fatal(err)
	}
	v := m.Virtual
	if v == nil || v.Accel != "tcg" || !v.Emulated || v.HostCPUs != 2 || v.GuestCPUs != m.Machine.Cores || v.StealNote == "" ||
		!strings.Contains(v.Note, "never a measurement of speed") {
		t.Fatalf("virtual = %+v", v)
	}
	if err := run(t.Context(), append(base, "--virtual", "xen"), &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "tcg or kvm") {
		t.Errorf("--virtual xen: %v", err)
	}
}
