package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"weaseldb/artifacts"
	"weaseldb/internal/serverproc"
	"weaseldb/internal/syncbuf"
	"weaseldb/loadtester/result"
	"weaseldb/plan"
	"weaseldb/server/config"
)

const seedConfig = "../testdata/test_benchmark_config.toml"

func seedOptions(dir, bin string) *SetupsOptions {
	return &SetupsOptions{Common: Common{Bin: bin, RunDir: dir, WarmupS: 0.5, IdleS: 1, IdleConns: 5, ReadyTimeout: 15 * time.Second},
		Config: seedConfig, Rounds: 2, DurationS: 2, Connections: 50, RequestsPerConn: 500, ConnectThreads: 1, NetworkThreads: 2, StatsIntervalS: 1,
		WorkIterations: 4000, WorkTarget: 740 * time.Nanosecond}
}

// Both setups' configs pass the server's own parser, with the seed's keys
// kept and the fitted setup's changed, shared and dedicated.
func TestSetupConfigsAreValid(t *testing.T) {
	o := seedOptions(t.TempDir(), "")
	seed, doc, err := o.seedSetup()
	if err != nil {
		t.Fatal(err)
	}
	if seed.IOThreads != 8 || seed.WaitStrategy != "WaitIfUpstreamIdle" || seed.OkIterations != 4000 || seed.Connections != 50 {
		t.Fatalf("seed setup %+v", seed)
	}
	for _, allowed := range [][]int{{0, 1}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}} {
		fitted := plan.FitSetup(allowed, seed)
		for _, s := range []artifacts.Setup{seed, fitted} {
			d, err := setupConfig(doc, s, "/tmp/x/"+s.Name+".sock")
			if err != nil {
				t.Fatal(err)
			}
			data, err := serverproc.EncodeConfig(d)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Parse(data)
			if err != nil {
				t.Fatalf("%s on %d CPUs: %v\n%s", s.Name, len(allowed), err, data)
			}
			if len(cfg.Server.Interfaces) != 1 || cfg.Server.Interfaces[0].Path != "/tmp/x/"+s.Name+".sock" {
				t.Errorf("%s: interfaces %+v, want the unix socket only", s.Name, cfg.Server.Interfaces)
			}
			if cfg.Server.IOThreads != s.IOThreads || cfg.Commit.PipelineWaitStrategy != s.WaitStrategy ||
				cfg.Commit.PipelineReleaseThreads != s.ReleaseThreads || cfg.Benchmark.OkResolveIterations != 4000 || cfg.Commit.MinRequestIDLength != 20 {
				t.Errorf("%s: config %+v %+v", s.Name, cfg.Server, cfg.Commit)
			}
			if len(cfg.Server.IOCPUs) != len(s.IOCPUs) || len(cfg.Commit.PipelineCPUs) != len(s.PipelineCPUs) {
				t.Errorf("%s: pinning %v %v, want %v %v", s.Name, cfg.Server.IOCPUs, cfg.Commit.PipelineCPUs, s.IOCPUs, s.PipelineCPUs)
			}
		}
	}
	// The seed's document is not changed by the fitted setup's copy.
	if doc["server"].(map[string]any)["io_threads"] != int64(8) {
		t.Errorf("seed document changed: %v", doc["server"])
	}
}

func TestOrderAlternates(t *testing.T) {
	setups := []artifacts.Setup{{Name: "seed"}, {Name: "fitted"}}
	for round, want := range map[int]string{1: "seed,fitted", 2: "fitted,seed", 3: "seed,fitted"} {
		var names []string
		for _, s := range order(setups, round) {
			names = append(names, s.Name)
		}
		if got := strings.Join(names, ","); got != want {
			t.Errorf("round %d: %s, want %s", round, got, want)
		}
	}
}

// The stage busy counters are read from the server's /metrics text over its
// unix socket; a server without them is an error, not zeros.
func TestScrapeStageBusy(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "m.sock")
	l, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	body := "# TYPE weaseldb_pipeline_stage_busy_seconds_total counter\n" +
		"weaseldb_pipeline_stage_busy_seconds_total{stage=\"sequence\"} 0.5\n" +
		"weaseldb_pipeline_stage_busy_seconds_total{stage=\"resolve\"} 2.25\n"
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(body))
	})}
	go srv.Serve(l)
	defer srv.Close()
	busy, err := scrapeStageBusy(t.Context(), socket)
	if err != nil || busy["resolve"] != 2.25 || busy["sequence"] != 0.5 {
		t.Fatalf("busy %v, %v", busy, err)
	}
	shares := busyShares(map[string]float64{"resolve": 1.25, "sequence": 0.5}, busy, 2)
	if shares["resolve"] != 0.5 || shares["sequence"] != 0 {
		t.Errorf("shares %v", shares)
	}
	body = "other_metric 1\n"
	if _, err := scrapeStageBusy(t.Context(), socket); err == nil || !strings.Contains(err.Error(), stageBusyMetric) {
		t.Errorf("missing metric: %v", err)
	}
	if _, err := scrapeStageBusy(t.Context(), filepath.Join(t.TempDir(), "none.sock")); err == nil {
		t.Error("no server: no error")
	}
}

// A server that never starts and a missing bench_cpu_work are recorded, run
// by run, and the whole says so: no figure is made up for them.
func TestSetupsRecordFailures(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "weaseldb"), []byte("#!/bin/sh\necho 'weaseldb: bad config' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	o := seedOptions(dir, bin)
	o.Rounds = 1
	var out, errOut bytes.Buffer
	err := Setups(t.Context(), o, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "3 problem(s)") || !strings.Contains(err.Error(), "weaseldb: bad config") {
		t.Fatalf("error %v, want one naming the calibration and both runs", err)
	}
	var ss artifacts.Setups
	data, _ := os.ReadFile(filepath.Join(dir, artifacts.SetupsFile))
	if err := json.Unmarshal(data, &ss); err != nil {
		t.Fatal(err)
	}
	if len(ss.Runs) != 2 || len(ss.Calibrations) != 1 || ss.Calibrations[0].Status != artifacts.StatusFailed {
		t.Fatalf("setups.json %+v", ss)
	}
	for _, r := range ss.Runs {
		if r.Status != artifacts.StatusFailed || r.Load != "" || !strings.Contains(r.Reason, "before it was ready") {
			t.Errorf("run %+v", r)
		}
	}
}

// Two rounds of both setups with the real binaries, briefly: behaviour, not
// speed. Every run is measured, clean, sampled (stage busy time included),
// stopped cleanly, the order alternates, and the last round measured idle.
func TestSetupsRealBinaries(t *testing.T) {
	build := builtBinaries(t, "weaseldb", "load_tester", "bench_cpu_work")
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if err := Setups(t.Context(), seedOptions(dir, build), &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	var ss artifacts.Setups
	data, err := os.ReadFile(filepath.Join(dir, artifacts.SetupsFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &ss); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range ss.Runs {
		order = append(order, r.Setup)
		if r.Status != artifacts.StatusMeasured || r.Reason != "" {
			t.Errorf("%s round %d: %s %q", r.Setup, r.Round, r.Status, r.Reason)
			continue
		}
		lf, err := result.ReadResult(filepath.Join(dir, r.Load))
		if err != nil || lf.Requests == 0 {
			t.Errorf("%s round %d: load %v, %v", r.Setup, r.Round, lf, err)
		}
		var s artifacts.ServerSample
		if data, err := os.ReadFile(filepath.Join(dir, r.Sample)); err != nil || json.Unmarshal(data, &s) != nil {
			t.Fatalf("%s: %v", r.Sample, err)
		}
		if s.Loaded.WindowS <= 0 || s.StageBusy == nil || s.MetricsError != "" || s.ExitCode != 0 || s.GOMAXPROCS < 1 {
			t.Errorf("%s: sample %+v", r.Sample, s)
		}
		if (r.Round == 2) != (s.Idle != nil) {
			t.Errorf("%s: idle measured %v in round %d", r.Sample, s.Idle != nil, r.Round)
		}
		if _, err := os.Stat(filepath.Join(dir, r.HdrLog)); err != nil {
			t.Errorf("no HDR log: %v", err)
		}
	}
	if got := strings.Join(order, ","); got != "seed,fitted,fitted,seed" {
		t.Errorf("run order %s", got)
	}
	for _, c := range ss.Calibrations {
		// Passes that never agreed are this machine's noise, recorded as such.
		if c.Status != artifacts.StatusMeasured || (c.Reason != "" && !strings.Contains(c.Reason, "agreed")) {
			t.Errorf("calibration %+v", c)
		}
	}
	if !strings.Contains(out.String(), "clean: due ") {
		t.Errorf("no summary on stdout:\n%s", out.String())
	}
	for _, f := range []string{"setup_seed.toml", "setup_fitted.toml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

// An interrupt (SIGINT or SIGTERM to `report setups`, which cancels its
// context) mid-run stops the server of that run and every tool it ran,
// keeps what was measured in setups.json with the cut run marked failed,
// and returns ErrInterrupted at once: no server is left running. The
// servers have process groups of their own, so a terminal's Ctrl-C does
// not reach them: the supervisor must stop them.
func TestSetupsInterruptedStopsItsServer(t *testing.T) {
	build := builtBinaries(t, "weaseldb", "load_tester", "bench_cpu_work")
	dir := t.TempDir()
	o := seedOptions(dir, build)
	o.Rounds, o.DurationS = 3, 20 // long enough that only an interrupt ends it early
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out, errOut syncbuf.Buffer
	done := make(chan error, 1)
	go func() { done <- Setups(ctx, o, &out, &errOut) }()

	readyRE := regexp.MustCompile(`server pid (\d+) ready`)
	var pid int
	for deadline := time.Now().Add(60 * time.Second); pid == 0; {
		if m := readyRE.FindStringSubmatch(errOut.String()); m != nil {
			pid, _ = strconv.Atoi(m[1])
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no server started:\n%s", errOut.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second) // under load now
	start := time.Now()
	cancel()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("Setups still running 30 s after the interrupt:\n%s", errOut.String())
	}
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("error %v, want ErrInterrupted", err)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("Setups took %v to return after the interrupt", took)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("server pid %d still exists after the interrupt (kill 0: %v)", pid, err)
	}
	var ss artifacts.Setups
	data, readErr := os.ReadFile(filepath.Join(dir, artifacts.SetupsFile))
	if readErr != nil || json.Unmarshal(data, &ss) != nil {
		t.Fatalf("setups.json: %v", readErr)
	}
	if len(ss.Runs) != 1 || ss.Runs[0].Status != artifacts.StatusFailed || !strings.Contains(ss.Runs[0].Reason, "interrupted") {
		t.Errorf("runs %+v, want the one cut run, failed: interrupted", ss.Runs)
	}
	if strings.Contains(errOut.String(), "rounds/r2.") || strings.Contains(errOut.String(), "round 2: server") {
		t.Errorf("a run started after the interrupt:\n%s", errOut.String())
	}
}

// The setups' plan, printed before the runs, shows a dedicated setup's
// threads with their cores and nodes, what it gave up and its interrupts.
func TestFormatSetupsPlanShowsThreads(t *testing.T) {
	ss := &artifacts.Setups{AllowedCPUs: "0-15", Rounds: 1, Setups: []artifacts.Setup{{Name: "fitted", Cores: artifacts.CoresDedicated,
		Placement:       []string{"io 0 cpu=2 core=2 node=0 idle=3", "stage 0 cpu=4 core=4 node=0 idle=5"},
		PlacementGaveUp: []string{"one node for the server: no room"}, IRQWarnings: []string{"IRQ 38 (eth0, virtio2-input.0) may land on CPU 2"}}}}
	out := formatSetupsPlan(ss)
	for _, want := range []string{"          io 0 cpu=2 core=2 node=0 idle=3\n          stage 0 cpu=4 core=4 node=0 idle=5\n",
		"          gave up: one node for the server: no room\n", "          warning: IRQ 38 (eth0, virtio2-input.0) may land on CPU 2\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
}
