package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"weaseldb/artifacts"
	"weaseldb/internal/affinity"
	"weaseldb/internal/serverproc"
	"weaseldb/plan"
	"weaseldb/server/config"
)

// builtBinaries returns the repository's build/ directory, or skips the
// test when one of the binaries is missing.
func builtBinaries(t *testing.T, names ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping a run of the real binaries")
	}
	build, err := filepath.Abs("../build")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range names {
		if _, err := os.Stat(filepath.Join(build, b)); err != nil {
			t.Skipf("build/%s missing (run make build)", b)
		}
	}
	return build
}

// TestServerConfigIsValid checks the generated config against the server's
// own parser, shared and dedicated.
func TestServerConfigIsValid(t *testing.T) {
	o := &WaitOptions{IOThreads: 1, Release: 2, OkIterations: 10}
	runs := plan.WaitStrategies([]int{0, 1, 2, 3, 4, 5, 6, 7, 8}, plan.WaitParams{
		Strategies: []string{"Never"}, PipelineStages: 2, IOThreads: 1, ReleaseThreads: 2, LoadThreads: 1, Dedicated: true})
	for _, p := range runs {
		if p.Bench != artifacts.BenchServer {
			continue
		}
		data, err := serverproc.EncodeConfig(serverConfig(p, o, "/tmp/x/weaseldb.sock"))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Parse(data)
		if err != nil {
			t.Fatalf("%s: %v\n%s", p.Cores, err, data)
		}
		if cfg.Commit.PipelineWaitStrategy != "Never" || cfg.Commit.PipelineReleaseThreads != 2 || cfg.Benchmark.OkResolveIterations != 10 {
			t.Errorf("%s: config %+v", p.Cores, cfg.Commit)
		}
		if p.Cores == artifacts.CoresDedicated && (len(cfg.Server.IOCPUs) != 1 || len(cfg.Commit.PipelineCPUs) != 4 || len(cfg.Commit.PipelineCPUs[3]) != 2) {
			t.Errorf("dedicated config lost its CPUs: io %v pipeline %v", cfg.Server.IOCPUs, cfg.Commit.PipelineCPUs)
		}
	}
}

// TestWaitStrategiesDedicatedPathRuns executes the dedicated-cores code path
// for real on whatever CPUs this machine has: a hand-made plan reuses the
// allowed CPUs (a real plan never does), so the pinned server config, the
// pinned load_tester and bench_pipeline --cpus all run here too.
func TestWaitStrategiesDedicatedPathRuns(t *testing.T) {
	build := builtBinaries(t, "weaseldb", "load_tester", "bench_pipeline")
	allowed, err := affinity.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	a, b := allowed[0], allowed[len(allowed)-1]
	dedicated := artifacts.WaitRun{Strategy: "WaitIfStageEmpty", Cores: artifacts.CoresDedicated, Status: artifacts.StatusMeasured}
	pipe, srv := plan.PlannedRun{WaitRun: dedicated}, plan.PlannedRun{WaitRun: dedicated}
	pipe.Bench, pipe.ProducerCPU, pipe.StageCPUs = artifacts.BenchPipeline, a, []int{b, a}
	srv.Bench, srv.IOCPUs, srv.PipelineCPUs, srv.LoadCPUs = artifacts.BenchServer, []int{a}, [][]int{{b}, {a}, {b}, {a}}, []int{b}
	dir := t.TempDir()
	o := &WaitOptions{Common: Common{Bin: build, RunDir: dir, IdleS: 1, IdleConns: 5, ReadyTimeout: 15 * time.Second},
		DurationS: 2, Concurrency: 10, LoadThreads: 1, IOThreads: 1, Release: 1}
	r := &waitRunner{o: o, ws: &artifacts.WaitStrategies{}, t: Tools{Bin: build, RunDir: dir, Log: io.Discard}}
	r.runAll([]plan.PlannedRun{pipe, srv})
	if len(r.ws.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(r.ws.Runs))
	}
	for _, run := range r.ws.Runs {
		if run.Status != artifacts.StatusMeasured || run.Throughput == nil || *run.Throughput <= 0 {
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
	checkDedicatedPins(t, dir, r.ws.Runs, a, b)
}

// checkDedicatedPins reads back what TestWaitStrategiesDedicatedPathRuns
// recorded of its threads: every pinned thread where the hand-made plan put
// it (which reuses CPUs a and b, so the counts per CPU, not one thread per
// CPU), load_tester on its CPU, the loop's counts, the idle readings.
func checkDedicatedPins(t *testing.T, dir string, runs []artifacts.WaitRun, a, b int) {
	t.Helper()
	read := func(name string) *artifacts.Threads {
		var pl artifacts.Threads
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || json.Unmarshal(data, &pl) != nil {
			t.Fatalf("threads artifact %q: %v", name, err)
		}
		return &pl
	}
	pinnedOn := func(p *artifacts.ProcessThreads) map[int]int {
		out := map[int]int{}
		for _, th := range p.Threads {
			if cpus, err := affinity.ParseCPUList(th.AllowedCPUs); err == nil && len(cpus) == 1 {
				out[cpus[0]]++
				if th.LastCPU != cpus[0] {
					t.Errorf("%s thread %d pinned to CPU %d last ran on %d", p.Role, th.TID, cpus[0], th.LastCPU)
				}
			}
		}
		return out
	}
	pipe := read(runs[0].Threads)
	if p := pipe.Process(artifacts.RolePipeline); p == nil || p.Polls < 1 || len(pinnedOn(p)) == 0 {
		t.Errorf("bench_pipeline's threads were not read while it ran: %+v", pipe.Processes)
	}
	srv := read(runs[1].Threads)
	server := srv.Process(artifacts.RoleServer)
	if server == nil {
		t.Fatalf("no server threads in %s", runs[1].Threads)
	}
	want := map[int]int{}
	for _, cpu := range []int{a, b, a, b, a} { // loop 0; sequence, resolve, persist, release
		want[cpu]++
	}
	if got := pinnedOn(server); got[a] != want[a] || got[b] != want[b] {
		t.Errorf("server threads pinned per CPU %v, want %v", got, want)
	}
	client := srv.Process(artifacts.RoleClient)
	if client == nil || len(client.Threads) == 0 {
		t.Fatalf("load_tester's threads were not read: %+v", srv.Processes)
	}
	for _, th := range client.Threads {
		if th.AllowedCPUs != affinity.FormatCPUList([]int{b}) {
			t.Errorf("load_tester thread %d may run on %s, want %d", th.TID, th.AllowedCPUs, b)
		}
	}
	if len(srv.Loops) != 1 || srv.Loops[0].Accepted == 0 || srv.Loops[0].Requests == 0 {
		t.Errorf("loops %+v (%s), want one that accepted and served", srv.Loops, srv.MetricsError)
	}
	if srv.Idle == nil || srv.Idle.WindowS <= 0 || len(srv.Idle.Start.Threads) == 0 || len(srv.Idle.End.Threads) == 0 {
		t.Errorf("the idle window's thread readings are missing: %+v", srv.Idle)
	}
}

// An interrupt before a step stops the comparison there: nothing starts,
// wait_strategies.json keeps what was measured (here nothing), and the
// error wraps ErrInterrupted. (TestSetupsInterruptedStopsItsServer cuts a
// run in the middle.)
func TestWaitStrategiesInterrupted(t *testing.T) {
	dir := t.TempDir()
	o := &WaitOptions{Common: Common{Bin: t.TempDir(), RunDir: dir, WarmupS: 1, IdleS: 1, IdleConns: 5, ReadyTimeout: 15 * time.Second},
		DurationS: 2, Concurrency: 10, LoadThreads: 1, IOThreads: 1, Release: 1, OkIterations: 10,
		Cores: artifacts.CoresShared, Strategies: "WaitIfStageEmpty"}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var errOut strings.Builder
	err := WaitStrategies(ctx, o, io.Discard, &errOut)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("error %v, want ErrInterrupted", err)
	}
	var ws artifacts.WaitStrategies
	data, readErr := os.ReadFile(filepath.Join(dir, artifacts.WaitStrategiesFile))
	if readErr != nil || json.Unmarshal(data, &ws) != nil || len(ws.Runs) != 0 {
		t.Fatalf("wait_strategies.json %s (%v), want it written with no runs", data, readErr)
	}
	if strings.Contains(errOut.String(), "=== ") { // the plan is printed first; a run's lines start so
		t.Errorf("something ran after the interrupt:\n%s", errOut.String())
	}
}
