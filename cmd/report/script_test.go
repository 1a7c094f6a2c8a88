package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"weaseldb/artifacts"
	"weaseldb/internal/testenv"
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
	return runScriptOn(t, nil, timeout, dir, env...)
}

// runScriptOn is runScript with stdout on term (a terminal; nil: a buffer).
func runScriptOn(t *testing.T, term *os.File, timeout time.Duration, dir string, env ...string) *scriptRun {
	t.Helper()
	r := &scriptRun{dir: dir, runDir: filepath.Join(dir, "run"), report: filepath.Join(dir, "out", "report.md")}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Env = append(os.Environ(), "RUN_DIR="+r.runDir, "REPORT_OUT="+r.report, "SKIP_BUILD=1", "WAIT_STRATEGIES=0", "RATE_CURVE=0")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = &r.stdout, &r.stderr
	if term != nil {
		cmd.Stdout = term
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("start script: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	r.err = cmd.Wait()
	if term != nil {
		// Nothing of the run may keep the terminal open: its reader ends
		// only when the last holder closes it.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
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

func readManifest(t *testing.T, runDir string) artifacts.Manifest {
	t.Helper()
	var m artifacts.Manifest
	data, err := os.ReadFile(filepath.Join(runDir, artifacts.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// serversGone checks that no server the run started is still running: each
// run's sample names its pid.
func serversGone(t *testing.T, runDir string) {
	t.Helper()
	samples, _ := filepath.Glob(filepath.Join(runDir, "rounds", "*.sample.json"))
	for _, path := range samples {
		var s artifacts.ServerSample
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		if s.Loaded.Pid == 0 {
			continue
		}
		if err := syscall.Kill(s.Loaded.Pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("server pid %d (%s) still exists after the script (kill 0: %v)", s.Loaded.Pid, filepath.Base(path), err)
		}
	}
}

func stepNames(m artifacts.Manifest) string {
	var names []string
	for _, s := range m.Steps {
		names = append(names, s.Name)
	}
	return strings.Join(names, " ")
}

func TestScriptWithFakeBinaries(t *testing.T) {
	needTools(t)
	bin := fakeBin(t)
	fakeRun, err := filepath.Abs(recordedRun)
	if err != nil {
		t.Fatal(err)
	}
	common := []string{"BUILD_DIR=" + bin, "FAKE_RUN=" + fakeRun, "DURATION=4", "ROUNDS=2"}

	// The two full runs mostly sleep (the fake load, the idle windows): run
	// them side by side, after the quick failure cases.
	t.Run("success", func(t *testing.T) {
		t.Parallel()
		r := runScript(t, 90*time.Second, t.TempDir(), common...)
		if r.err != nil {
			t.Fatalf("script failed: %v\n%s", r.err, r.stderr.String())
		}
		m := readManifest(t, r.runDir)
		for _, s := range m.Steps {
			if s.ExitCode != 0 {
				t.Errorf("step %s exit %d", s.Name, s.ExitCode)
			}
		}
		if got := stepNames(m); got != "setups bench_pipeline" {
			t.Errorf("steps = %q", got)
		}
		if !m.Quick || m.DurationS != 2 || !strings.HasSuffix(m.Config.Path, "setup_seed.toml") {
			t.Errorf("manifest = %+v", m)
		}
		run, err := reports.LoadRun(r.runDir)
		if err != nil {
			t.Fatal(err)
		}
		if len(run.Views) != 2 || len(run.Views[0].Rounds) != 2 || len(run.Calibrations) != 2 {
			t.Errorf("run: %d setups, %d rounds, %d calibrations", len(run.Views), len(run.Views[0].Rounds), len(run.Calibrations))
		}
		if _, err := os.Stat(r.report); err != nil {
			t.Errorf("no report: %v", err)
		}
		if _, err := os.Stat(reports.HTMLPath(r.report)); err != nil { // make report writes both
			t.Errorf("no HTML twin: %v", err)
		}
		serversGone(t, r.runDir)
	})

	// On a terminal each step shows as one line rewritten in place (the
	// setups with about how long is left); its log stays plain lines.
	t.Run("on a terminal", func(t *testing.T) {
		t.Parallel()
		control, term, err := testenv.OpenPTY(200)
		if err != nil {
			t.Skipf("no pty here: %v", err)
		}
		defer control.Close()
		read := make(chan string, 1)
		go func() {
			var b bytes.Buffer
			_, _ = io.Copy(&b, control) // ends (EIO) once the terminal is closed
			read <- b.String()
		}()
		r := runScriptOn(t, term, 90*time.Second, t.TempDir(), common...)
		term.Close()
		tty := <-read
		if r.err != nil {
			t.Fatalf("script failed: %v\n%s", r.err, r.stderr.String())
		}
		if !strings.Contains(tty, "\r\x1b[K") || !strings.Contains(tty, " left]") {
			t.Errorf("on a terminal: no line rewritten in place with the time left:\n%q", tty)
		}
		log, err := os.ReadFile(filepath.Join(r.runDir, "setups.log"))
		if err != nil || len(log) == 0 || bytes.ContainsAny(log, "\r\x1b") {
			t.Errorf("setups.log (%v) is not plain lines:\n%q", err, log)
		}
	})

	t.Run("server exits non-zero", func(t *testing.T) {
		t.Parallel()
		r := runScript(t, 90*time.Second, t.TempDir(), append(common, "FAKE_SERVER_EXIT=3")...)
		if r.err == nil {
			t.Fatal("script succeeded although the server exited 3")
		}
		out := r.stdout.String() + r.stderr.String()
		for _, want := range []string{"after SIGTERM: weaseldb exited with status 3", "FAILED steps: setups"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		md, err := os.ReadFile(r.report)
		if err != nil || !strings.Contains(string(md), "the server exited with status 3 after SIGTERM") {
			t.Errorf("the report does not say so (%v)", err)
		}
		serversGone(t, r.runDir)
	})

	t.Run("server never ready", func(t *testing.T) {
		r := runScript(t, 60*time.Second, t.TempDir(), append(common, "FAKE_SERVER_NEVER_READY=1", "READY_TIMEOUT=1")...)
		if out := r.stdout.String() + r.stderr.String(); r.err == nil || !strings.Contains(out, `no "weaseldb: ready" line within 1s`) {
			t.Fatalf("err %v, output:\n%s", r.err, out)
		}
		md, err := os.ReadFile(r.report)
		if err != nil || !strings.Contains(string(md), "was not measured** (failed)") {
			t.Errorf("the report does not name the failed runs (%v)", err)
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

	t.Run("rounds too short", func(t *testing.T) {
		r := runScript(t, 10*time.Second, t.TempDir(), append(common, "DURATION=3", "ROUNDS=2")...)
		if r.err == nil || !strings.Contains(r.stderr.String(), "each of the 2 rounds at least 2 s of load") {
			t.Fatalf("err %v, stderr:\n%s", r.err, r.stderr.String())
		}
	})

	t.Run("missing binary", func(t *testing.T) {
		empty := t.TempDir()
		r := runScript(t, 10*time.Second, t.TempDir(), "BUILD_DIR="+empty, "DURATION=4", "ROUNDS=2")
		if r.err == nil || !strings.Contains(r.stderr.String(), "missing binaries") {
			t.Fatalf("err %v, stderr:\n%s", r.err, r.stderr.String())
		}
	})
}

// TestScriptRealBinaries runs the whole reproduction, 2 rounds of 2 s per
// setup, with the binaries `make build` put in build/. It checks behaviour,
// not speed.
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
	r := runScript(t, 200*time.Second, t.TempDir(), "BUILD_DIR="+build, "DURATION=4", "ROUNDS=2",
		"WAIT_STRATEGIES=1", "WS_STRATEGIES=WaitIfStageEmpty", "WS_CORES=shared", "WS_DURATION=2", "WS_WARMUP=0", "WS_IDLE=1",
		"RATE_CURVE=1", "RC_CAPACITY_SECONDS=1", "RC_STEP_SECONDS=0.5", "RC_WARMUP=0.2", "RC_FRACTIONS=0.1,0.5", "RC_SEARCH_STEPS=3", "RC_SEARCH_SECONDS=10")
	if r.err != nil {
		t.Fatalf("script failed: %v\nstderr:\n%s", r.err, r.stderr.String())
	}
	if got := stepNames(readManifest(t, r.runDir)); got != "setups bench_pipeline wait_strategies rate_curve" {
		t.Errorf("steps %q", got)
	}
	run, err := reports.LoadRun(r.runDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Views) != 2 || run.Pipeline == nil || run.WaitStrategies == nil {
		t.Fatalf("incomplete run: %d setups, pipeline %v, wait strategies %v", len(run.Views), run.Pipeline != nil, run.WaitStrategies != nil)
	}
	for _, v := range run.Views {
		for _, rd := range v.Rounds {
			if rd.Status != artifacts.StatusMeasured || rd.Load.Requests <= 0 || rd.Loaded == nil || rd.Sample.StageBusy == nil {
				t.Errorf("%s round %d: %s %q", v.Setup.Name, rd.Number, rd.Status, rd.Reason)
			}
		}
		if last := v.Rounds[len(v.Rounds)-1]; last.Idle == nil {
			t.Errorf("%s: no idle CPU in the last round", v.Setup.Name)
		}
	}
	if _, err := os.Stat(r.report); err != nil {
		t.Errorf("no report: %v", err)
	}
	serversGone(t, r.runDir)
}
