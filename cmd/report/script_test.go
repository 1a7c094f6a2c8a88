package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"weaseldb/reports"
)

const script = "../../scripts/reproduce_threading_report.sh"

// scriptRun is one run of the reproduction script in a temp directory.
type scriptRun struct {
	dir            string
	runDir, report string
	stdout, stderr bytes.Buffer
	err            error
}

// runScript runs the script with env added, in its own process group, and
// kills the whole group if it outlives the timeout or the test.
func runScript(t *testing.T, timeout time.Duration, dir string, env ...string) *scriptRun {
	t.Helper()
	r := &scriptRun{dir: dir, runDir: filepath.Join(dir, "run"), report: filepath.Join(dir, "out", "report.md")}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Env = append(os.Environ(), "RUN_DIR="+r.runDir, "REPORT_OUT="+r.report, "SKIP_BUILD=1", "WAIT_STRATEGIES=0")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = &r.stdout, &r.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("start script: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	r.err = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("script ran past %v:\n%s", timeout, r.stderr.String())
	}
	return r
}

// needTools skips the test when the script's tools are missing.
func needTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"bash", "timeout", "tee", "awk"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: the script needs it", tool)
		}
	}
}

// fakeBin builds the report binary and puts the fake server, load tester and
// benchmarks (testdata/fakebin) beside it.
func fakeBin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "report"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build report: %v\n%s", err, out)
	}
	fakes, err := filepath.Glob("testdata/fakebin/*")
	if err != nil || len(fakes) == 0 {
		t.Fatalf("no fakes: %v", err)
	}
	for _, f := range fakes {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, filepath.Base(f)), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}

func readManifest(t *testing.T, runDir string) reports.Manifest {
	t.Helper()
	var m reports.Manifest
	data, err := os.ReadFile(filepath.Join(runDir, reports.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// serverGone checks that the server the run started is no longer running.
func serverGone(t *testing.T, runDir string) {
	t.Helper()
	var s reports.CPUSample
	data, err := os.ReadFile(filepath.Join(runDir, reports.ServerCPUIdle))
	if err != nil {
		return // no sample: the pid is unknown; the process group kill covers it
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(s.Pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("server pid %d still exists after the script (kill 0: %v)", s.Pid, err)
	}
}

func TestScriptWithFakeBinaries(t *testing.T) {
	needTools(t)
	bin := fakeBin(t)
	fakeRun, err := filepath.Abs(recordedRun)
	if err != nil {
		t.Fatal(err)
	}
	common := []string{"BUILD_DIR=" + bin, "FAKE_RUN=" + fakeRun, "DURATION=2"}

	// The two full runs mostly sleep (the fake load, the idle window): run
	// them side by side, after the quick failure cases.
	t.Run("success", func(t *testing.T) {
		t.Parallel()
		r := runScript(t, 60*time.Second, t.TempDir(), common...)
		if r.err != nil {
			t.Fatalf("script failed: %v\n%s", r.err, r.stderr.String())
		}
		m := readManifest(t, r.runDir)
		var names []string
		for _, s := range m.Steps {
			names = append(names, s.Name)
			if s.ExitCode != 0 {
				t.Errorf("step %s exit %d", s.Name, s.ExitCode)
			}
		}
		want := "cpu_work cpu_work_target server_config load cpu_loaded cpu_idle server bench_pipeline"
		if got := strings.Join(names, " "); got != want {
			t.Errorf("steps = %q, want %q", got, want)
		}
		if m.ServerExitCode == nil || *m.ServerExitCode != 0 || !m.Quick || m.DurationS != 2 {
			t.Errorf("manifest = %+v", m)
		}
		if _, err := os.Stat(r.report); err != nil {
			t.Errorf("no report: %v", err)
		}
		serverGone(t, r.runDir)
	})

	t.Run("server exits non-zero", func(t *testing.T) {
		t.Parallel()
		r := runScript(t, 60*time.Second, t.TempDir(), append(common, "FAKE_SERVER_EXIT=3")...)
		if r.err == nil {
			t.Fatal("script succeeded although the server exited 3")
		}
		for _, want := range []string{"server exited with status 3", "server log (last 40 lines", "FAILED steps: server"} {
			if !strings.Contains(r.stderr.String(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, r.stderr.String())
			}
		}
		serverGone(t, r.runDir)
	})

	t.Run("server never ready", func(t *testing.T) {
		r := runScript(t, 30*time.Second, t.TempDir(), append(common, "FAKE_SERVER_NEVER_READY=1", "READY_TIMEOUT=1")...)
		if r.err == nil || !strings.Contains(r.stderr.String(), "server not ready after 1s") {
			t.Fatalf("err %v, stderr:\n%s", r.err, r.stderr.String())
		}
		// Parallel subtests start only after this one, so no other fake server runs now.
		if out, _ := exec.Command("pgrep", "-f", filepath.Join(bin, "weaseldb")).Output(); len(out) > 0 {
			t.Errorf("fake server left running: pids %s", out)
		}
	})

	t.Run("bad knob", func(t *testing.T) {
		r := runScript(t, 10*time.Second, t.TempDir(), append(common, "DURATION=soon")...)
		if r.err == nil || !strings.Contains(r.stderr.String(), "DURATION must be a non-negative integer") {
			t.Fatalf("err %v, stderr:\n%s", r.err, r.stderr.String())
		}
	})

	t.Run("missing binary", func(t *testing.T) {
		empty := t.TempDir()
		r := runScript(t, 10*time.Second, t.TempDir(), "BUILD_DIR="+empty, "DURATION=2")
		if r.err == nil || !strings.Contains(r.stderr.String(), "missing binaries") {
			t.Fatalf("err %v, stderr:\n%s", r.err, r.stderr.String())
		}
	})
}

// TestScriptRealBinaries runs the whole reproduction for 3 s of load with the
// binaries `make build` put in build/. It checks behaviour, not speed.
func TestScriptRealBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the end-to-end script run")
	}
	needTools(t)
	build, err := filepath.Abs("../../build")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"weaseldb", "load_tester", "bench_cpu_work", "bench_pipeline", "report"} {
		if _, err := os.Stat(filepath.Join(build, b)); err != nil {
			t.Skipf("build/%s missing (run make build): skipping the end-to-end script run", b)
		}
	}
	r := runScript(t, 150*time.Second, t.TempDir(), "BUILD_DIR="+build, "DURATION=3",
		"WAIT_STRATEGIES=1", "WS_STRATEGIES=WaitIfStageEmpty", "WS_CORES=shared", "WS_DURATION=2", "WS_WARMUP=0", "WS_IDLE=1")
	if r.err != nil {
		t.Fatalf("script failed: %v\nstderr:\n%s", r.err, r.stderr.String())
	}
	m := readManifest(t, r.runDir)
	if m.ServerExitCode == nil || *m.ServerExitCode != 0 {
		t.Errorf("server exit = %v, want 0", m.ServerExitCode)
	}
	run, err := reports.LoadRun(r.runDir)
	if err != nil {
		t.Fatal(err)
	}
	if run.Load.Requests <= 0 || run.ServerIdle == nil || run.ServerLoaded == nil || run.Pipeline == nil || run.WaitStrategies == nil {
		t.Errorf("incomplete run: requests %d, idle %v, loaded %v, pipeline %v, wait strategies %v",
			run.Load.Requests, run.ServerIdle, run.ServerLoaded, run.Pipeline != nil, run.WaitStrategies != nil)
	}
	if _, err := os.Stat(r.report); err != nil {
		t.Errorf("no report: %v", err)
	}
	serverGone(t, r.runDir)
}
