package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"weaseldb/reports"
	"weaseldb/server/affinity"
	"weaseldb/server/config"
)

func TestWaitStrategiesFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no run dir", nil, "--run DIR is required"},
		{"short duration", []string{"--run", "x", "--duration", "1"}, "at least 2 s"},
		{"bad strategy", []string{"--run", "x", "--strategies", "Sometimes"}, `unknown strategy "Sometimes"`},
		{"bad cores", []string{"--run", "x", "--cores", "isolated"}, "--cores takes shared and/or dedicated"},
		{"bad simulated set", []string{"--allowed-cpus", "3-1"}, "bad range"},
		{"zero load threads", []string{"--run", "x", "--load-threads", "0"}, "must be ≥ 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(append([]string{"wait-strategies"}, tt.args...), &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestWaitStrategiesPlanSimulated plans against simulated CPU sets: 2 CPUs
// skip every dedicated run with the count needed; 16 CPUs plan them all.
func TestWaitStrategiesPlanSimulated(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"wait-strategies", "--allowed-cpus", "0-1"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "skip: needs 4 CPUs"); n != 3 {
		t.Errorf("2 CPUs: %d pipeline runs skipped for 4 CPUs, want 3:\n%s", n, out.String())
	}
	if n := strings.Count(out.String(), "skip: needs 7 CPUs"); n != 3 {
		t.Errorf("2 CPUs: %d server runs skipped for 7 CPUs, want 3:\n%s", n, out.String())
	}
	out.Reset()
	if err := run([]string{"wait-strategies", "--allowed-cpus", "0-15"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "skip") || strings.Count(out.String(), "io 10; stages 11 12 13 14; load_tester 15") != 3 {
		t.Errorf("16 CPUs: want every run planned:\n%s", out.String())
	}
}

// TestServerConfigIsValid checks the generated config against the server's
// own parser, shared and dedicated.
func TestServerConfigIsValid(t *testing.T) {
	o := &waitOptions{ioThreads: 1, release: 2, okIterations: 10}
	plan := reports.PlanWaitStrategies([]int{0, 1, 2, 3, 4, 5, 6, 7, 8}, reports.WaitPlanParams{
		Strategies: []string{"Never"}, PipelineStages: 2, IOThreads: 1, ReleaseThreads: 2, LoadThreads: 1, Dedicated: true})
	for _, p := range plan {
		if p.Bench != reports.BenchServer {
			continue
		}
		cfg, err := config.Parse([]byte(serverConfig(p, o, "/tmp/x/weaseldb.sock")))
		if err != nil {
			t.Fatalf("%s: %v\n%s", p.Cores, err, serverConfig(p, o, "/tmp/x/weaseldb.sock"))
		}
		if cfg.Commit.PipelineWaitStrategy != "Never" || cfg.Commit.PipelineReleaseThreads != 2 || cfg.Benchmark.OkResolveIterations != 10 {
			t.Errorf("%s: config %+v", p.Cores, cfg.Commit)
		}
		if p.Cores == reports.CoresDedicated && (len(cfg.Server.IOCPUs) != 1 || len(cfg.Commit.PipelineCPUs) != 4 || len(cfg.Commit.PipelineCPUs[3]) != 2) {
			t.Errorf("dedicated config lost its CPUs: io %v pipeline %v", cfg.Server.IOCPUs, cfg.Commit.PipelineCPUs)
		}
	}
}

// TestWaitStrategiesRealBinaries runs one strategy on shared cores with the
// binaries in build/, for 2 s of load: behaviour, not speed.
func TestWaitStrategiesRealBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the end-to-end comparison run")
	}
	build, err := filepath.Abs("../../build")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"weaseldb", "load_tester", "bench_pipeline"} {
		if _, err := os.Stat(filepath.Join(build, b)); err != nil {
			t.Skipf("build/%s missing (run make build): skipping the end-to-end comparison run", b)
		}
	}
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	err = run([]string{"wait-strategies", "--bin", build, "--run", dir, "--strategies", "WaitIfStageEmpty",
		"--duration", "2", "--warmup", "0", "--idle", "1", "--concurrency", "10", "--idle-conns", "10"}, &out, &errOut)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	var ws reports.WaitStrategies
	if err := readJSONFile(filepath.Join(dir, reports.WaitStrategiesFile), &ws); err != nil {
		t.Fatal(err)
	}
	if len(ws.Runs) != 4 {
		t.Fatalf("%d runs, want 4 (pipeline and server, shared and dedicated)", len(ws.Runs))
	}
	for _, r := range ws.Runs {
		switch {
		case r.Status == reports.StatusSkipped:
			if r.Cores != reports.CoresDedicated || r.CPUsNeeded == 0 {
				t.Errorf("skipped run %+v", r)
			}
		case r.Status != reports.StatusMeasured:
			t.Errorf("%s %s %s: %s: %s", r.Bench, r.Strategy, r.Cores, r.Status, r.Reason)
		case r.Throughput == nil || *r.Throughput <= 0 || r.CPUNsPerOp == nil || r.IdleCoreFraction == nil:
			t.Errorf("%s %s: figures missing: %+v", r.Bench, r.Cores, r)
		case r.Bench == reports.BenchServer && (r.P99Ns == nil || r.Reason != ""):
			t.Errorf("server run: p99 %v, reason %q", r.P99Ns, r.Reason)
		}
	}
	if !strings.Contains(out.String(), "WaitIfStageEmpty") {
		t.Errorf("no table on stdout:\n%s", out.String())
	}
}

// TestWaitStrategiesDedicatedPathRuns executes the dedicated-cores code path
// for real on whatever CPUs this machine has: a hand-made plan reuses the
// allowed CPUs (a real plan never does), so the pinned server config,
// taskset for load_tester and bench_pipeline --cpus all run here too.
func TestWaitStrategiesDedicatedPathRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the end-to-end comparison run")
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("taskset (util-linux) not installed")
	}
	build, err := filepath.Abs("../../build")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"weaseldb", "load_tester", "bench_pipeline"} {
		if _, err := os.Stat(filepath.Join(build, b)); err != nil {
			t.Skipf("build/%s missing (run make build)", b)
		}
	}
	allowed, err := affinity.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	a, b := allowed[0], allowed[len(allowed)-1]
	dedicated := reports.WaitRun{Strategy: "WaitIfStageEmpty", Cores: reports.CoresDedicated, Status: reports.StatusMeasured}
	pipe, srv := reports.PlannedRun{WaitRun: dedicated}, reports.PlannedRun{WaitRun: dedicated}
	pipe.Bench, pipe.ProducerCPU, pipe.StageCPUs = reports.BenchPipeline, a, []int{b, a}
	srv.Bench, srv.IOCPUs, srv.PipelineCPUs, srv.LoadCPUs = reports.BenchServer, []int{a}, [][]int{{b}, {a}, {b}, {a}}, []int{b}
	dir := t.TempDir()
	o := &waitOptions{bin: build, runDir: dir, durationS: 2, idleS: 1, idleConns: 5, concurrency: 10, loadThreads: 1,
		ioThreads: 1, release: 1, readyTimeout: 15 * time.Second}
	r := &waitRunner{o: o, ws: &reports.WaitStrategies{}, log: io.Discard}
	r.runAll([]reports.PlannedRun{pipe, srv})
	if len(r.ws.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(r.ws.Runs))
	}
	for _, run := range r.ws.Runs {
		if run.Status != reports.StatusMeasured || run.Throughput == nil || *run.Throughput <= 0 {
			t.Errorf("%s on dedicated cores: %s %q", run.Bench, run.Status, run.Reason)
		}
	}
	if g := r.ws.Runs[1].GOMAXPROCS; g < 6 {
		t.Errorf("server GOMAXPROCS %d with 5 pinned threads, want at least 6", g)
	}
	cfg, err := os.ReadFile(filepath.Join(dir, "ws_server_WaitIfStageEmpty_dedicated.toml"))
	if err != nil || !strings.Contains(string(cfg), fmt.Sprintf("io_cpus = [%d]", a)) {
		t.Errorf("server config without its io_cpus (%v):\n%s", err, cfg)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "ws_pipeline_dedicated.log"))
	if !strings.Contains(string(log), fmt.Sprintf("producer on CPU %d", a)) {
		t.Errorf("bench_pipeline did not say it was pinned:\n%s", log)
	}
}
