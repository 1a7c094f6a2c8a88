package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"weaseldb/artifacts"
	"weaseldb/internal/affinity"
	"weaseldb/internal/serverproc"
	"weaseldb/plan"
)

// WaitStrategies runs the comparison: bench_pipeline's wait-strategy family
// and the server under load_tester, per strategy, on shared cores and on
// dedicated cores where the allowed CPUs are enough. It prints the plan
// (with o.Plan) or the table of results, and writes wait_strategies.json.
// When ctx is cancelled (an interrupt) the run in progress is stopped, its
// server with it, no run starts after it, and the error wraps
// ErrInterrupted.
func WaitStrategies(ctx context.Context, o *WaitOptions, stdout, stderr io.Writer) error {
	if err := o.Validate(); err != nil {
		return err
	}
	p, err := o.params()
	if err != nil {
		return err
	}
	allowed, err := allowedCPUs(o.AllowedCPUs)
	if err != nil {
		return fmt.Errorf("wait-strategies: %w", err)
	}
	topo := machineTopology(o.AllowedCPUs, allowed)
	runs := plan.WaitStrategiesOn(topo, p)
	ws := &artifacts.WaitStrategies{
		Version: artifacts.WaitStrategiesVersion, AllowedCPUs: affinity.FormatCPUList(allowed), Topology: plan.RecordTopology(topo), Simulated: o.AllowedCPUs != "",
		DurationS: o.DurationS, WarmupS: o.WarmupS, IdleS: o.IdleS, IdleConns: o.IdleConns, Concurrency: o.Concurrency,
		IOThreads: o.IOThreads, ReleaseThreads: o.Release, LoadThreads: o.LoadThreads, RequestsPerConn: o.RequestsPerConn,
	}
	if o.Plan {
		fmt.Fprint(stdout, plan.FormatWaitPlan(ws, runs))
		if o.Latency {
			fmt.Fprint(stdout, latencyPlanLine(allowed, p.Dedicated))
		}
		return nil
	}
	if err := os.MkdirAll(o.RunDir, 0o755); err != nil {
		return fmt.Errorf("wait-strategies: %w", err)
	}
	fmt.Fprint(stderr, plan.FormatWaitPlan(ws, runs)) // where every thread will run, before any run
	r := &waitRunner{o: o, ws: ws, t: Tools{Ctx: ctx, Bin: o.Bin, RunDir: o.RunDir, Log: stderr, Prefix: "wait-strategies"}}
	r.fractions, _ = parseRateFractions(o.RateFractions) // checked by Validate
	ws.RateFractions = r.fractions
	r.runAll(runs)
	if o.Latency && !r.t.interrupted() {
		r.pipelineLatency(p)
		r.saveOrLog()
	}
	fmt.Fprint(stdout, FormatWaitTable(ws))
	fmt.Fprint(stdout, FormatWaitSkipped(ws))
	fmt.Fprint(stdout, FormatWaitLatency(ws))
	if err := r.save(); err != nil {
		return err
	}
	if r.t.interrupted() {
		return fmt.Errorf("wait-strategies: %w after %d run(s); what they measured is in %s", ErrInterrupted, len(r.ws.Runs), r.t.Path(artifacts.WaitStrategiesFile))
	}
	return nil
}

// waitRunner executes a plan and records each run in ws.
type waitRunner struct {
	o         *WaitOptions
	ws        *artifacts.WaitStrategies
	t         Tools
	fractions []float64 // open-loop rates, as fractions of a run's closed-loop req/s
}

// save writes wait_strategies.json; called after every run, so an
// interrupted comparison keeps what it measured.
func (r *waitRunner) save() error { return r.t.WriteJSON(artifacts.WaitStrategiesFile, r.ws) }

func (r *waitRunner) saveOrLog() {
	if err := r.save(); err != nil {
		r.t.Logf("%v", err)
	}
}

func (r *waitRunner) runAll(runs []plan.PlannedRun) {
	// bench_pipeline runs every strategy in one invocation per kind of cores.
	for _, cores := range []string{artifacts.CoresShared, artifacts.CoresDedicated} {
		var group []plan.PlannedRun
		for _, p := range runs {
			if p.Bench == artifacts.BenchPipeline && p.Cores == cores {
				group = append(group, p)
			}
		}
		if len(group) > 0 && !r.t.interrupted() {
			r.ws.Runs = append(r.ws.Runs, r.pipelineRuns(group)...)
			r.saveOrLog()
		}
	}
	for _, p := range runs {
		if p.Bench != artifacts.BenchServer {
			continue
		}
		if r.t.interrupted() {
			return
		}
		run := p.WaitRun
		if run.Status == artifacts.StatusMeasured {
			run = r.serverRun(p)
		} else {
			r.t.Logf("server %s on %s cores: %s: %s", p.Strategy, p.Cores, p.Status, p.Reason)
		}
		r.ws.Runs = append(r.ws.Runs, run)
		r.saveOrLog()
	}
}

// failed marks a run failed with the reason.
func failed(run artifacts.WaitRun, err error) artifacts.WaitRun {
	run.Status, run.Reason = artifacts.StatusFailed, err.Error()
	return run
}

// pipelineRuns runs bench_pipeline's wait_strategy family once and splits
// its cases into one run per planned strategy.
func (r *waitRunner) pipelineRuns(group []plan.PlannedRun) []artifacts.WaitRun {
	out := make([]artifacts.WaitRun, len(group))
	var todo []int
	for i, p := range group {
		out[i] = p.WaitRun
		if p.Status == artifacts.StatusMeasured {
			todo = append(todo, i)
		} else {
			r.t.Logf("bench_pipeline %s on %s cores: %s: %s", p.Strategy, p.Cores, p.Status, p.Reason)
		}
	}
	if len(todo) == 0 {
		return out
	}
	first := group[todo[0]]
	cores := first.Cores
	name := "ws_pipeline_" + cores
	args := []string{"--quick", "--families", "wait_strategy", "--json", r.t.Path(name + ".json")}
	pl := &artifacts.Threads{Version: artifacts.ThreadsVersion, Plan: artifacts.PinPlan{AllowedCPUs: r.ws.AllowedCPUs}}
	if cores == artifacts.CoresDedicated {
		args = append(args, "--cpus", first.PipelineCPUsFlag())
		producer := first.ProducerCPU
		pl.Plan.ProducerCPU, pl.Plan.StageCPUs = &producer, first.StageCPUs
	}
	// bench_pipeline's stage threads come and go with its cases: its
	// threads are read every pollInterval while it runs.
	var polled artifacts.ProcessThreads
	stop, polling := make(chan struct{}), make(chan struct{})
	onStart := func(pid int) {
		polled = artifacts.ProcessThreads{Role: artifacts.RolePipeline, Pid: pid}
		go func() { defer close(polling); pollThreads(pid, stop, &polled) }()
	}
	err := r.t.command(2*time.Minute, name, nil, onStart, "bench_pipeline", args...)
	close(stop)
	if polled.Pid != 0 {
		<-polling
		pl.Processes = []artifacts.ProcessThreads{polled}
	}
	threads := r.writeThreads(name, pl)
	var pb artifacts.PipelineBench
	if err == nil {
		err = r.t.ReadJSON(name+".json", &pb)
	}
	for _, i := range todo {
		out[i].Threads = threads
		if err != nil {
			out[i] = failed(out[i], err)
			continue
		}
		out[i] = pipelineFigures(out[i], &pb, name+".json")
	}
	return out
}

// pollInterval is how often a bench_pipeline run's threads are read.
const pollInterval = 200 * time.Millisecond

// pollThreads reads process pid's threads into dst every pollInterval until
// stop is closed or the process is gone.
func pollThreads(pid int, stop <-chan struct{}, dst *artifacts.ProcessThreads) {
	for {
		read := ReadThreads(dst.Role, pid)
		if read.Error != "" && len(dst.Threads) > 0 {
			return // it ended
		}
		dst.Merge(read)
		select {
		case <-stop:
			return
		case <-time.After(pollInterval):
		}
	}
}

// writeThreads writes a run's Threads as <name>.threads.json and
// returns that name ("" when it could not be written, which is logged).
func (r *waitRunner) writeThreads(name string, pl *artifacts.Threads) string {
	file := name + ".threads.json"
	if err := r.t.WriteJSON(file, pl); err != nil {
		r.t.Logf("%v", err)
		return ""
	}
	return file
}

// serverPlan is the pins a server run asks for (its Threads' plan).
func serverPlan(p plan.PlannedRun, allowed string, ioThreads int) artifacts.PinPlan {
	return artifacts.PinPlan{AllowedCPUs: allowed, IOThreads: ioThreads,
		IOCPUs: p.IOCPUs, PipelineCPUs: p.PipelineCPUs, LoadCPUs: p.LoadCPUs}
}

// pipelineFigures copies one strategy's case and idle CPU out of bench_pipeline's result.
func pipelineFigures(run artifacts.WaitRun, pb *artifacts.PipelineBench, artifact string) artifacts.WaitRun {
	run.Artifact, run.Unit = artifact, "items/s"
	for _, c := range pb.Cases {
		if c.Family == "wait_strategy" && c.Impl == "pipeline" && c.Strategy == run.Strategy {
			run.Throughput, run.CPUNsPerOp = ptr(c.ItemsPerSec), ptr(c.CPUNsPerItem)
		}
	}
	for _, idle := range pb.Idle {
		if idle.Strategy == run.Strategy {
			run.IdleCoreFraction = ptr(idle.CoreFraction)
		}
	}
	if run.Throughput == nil {
		return failed(run, fmt.Errorf("%s has no wait_strategy case for %s", artifact, run.Strategy))
	}
	return run
}

// serverConfig is the config document the server of one run reads.
func serverConfig(p plan.PlannedRun, o *WaitOptions, socket string) map[string]any {
	// server.thread_names stays at the server's "auto": on shared cores
	// the stages run as goroutines on their loop's thread, the design the
	// strategies are compared in (locked threads would add an OS thread
	// switch per hand-off: docs/weaseldb.md, "Thread names"); pinned
	// threads are locked, and named, anyway.
	server := map[string]any{"interfaces": []map[string]any{serverproc.UnixInterface(socket)}, "io_threads": o.IOThreads}
	if len(p.IOCPUs) > 0 {
		server["io_cpus"] = p.IOCPUs
	}
	commit := map[string]any{"pipeline_wait_strategy": p.Strategy, "pipeline_release_threads": o.Release}
	if len(p.PipelineCPUs) > 0 {
		commit["pipeline_cpus"] = p.PipelineCPUs
	}
	return map[string]any{"server": server, "commit": commit,
		"benchmark": map[string]any{"ok_resolve_iterations": o.OkIterations}}
}

// serverRun starts weaseldb with the run's strategy (and CPUs), loads it with
// load_tester while sampling its CPU, then measures its idle CPU with
// keep-alive connections open, and stops it.
func (r *waitRunner) serverRun(p plan.PlannedRun) artifacts.WaitRun {
	run := p.WaitRun
	run.Unit = "req/s"
	name := fmt.Sprintf("ws_server_%s_%s", p.Strategy, p.Cores)
	sockDir, socket, err := socketDir()
	if err != nil {
		return failed(run, err)
	}
	defer os.RemoveAll(sockDir)
	configPath := r.t.Path(name + ".toml")
	head := fmt.Sprintf("# written by report wait-strategies: %s on %s cores\n", p.Strategy, p.Cores)
	if err := writeServerConfig(configPath, head, serverConfig(p, r.o, socket)); err != nil {
		return failed(run, err)
	}
	srv, err := r.t.startServer(configPath, name+".server.log", r.o.ReadyTimeout)
	if err != nil {
		return failed(run, err)
	}
	defer srv.Stop(serverStopGrace)
	run.GOMAXPROCS = serverGOMAXPROCS(srv)
	r.t.Logf("%s: server pid %d ready (GOMAXPROCS %d)", name, srv.Pid(), run.GOMAXPROCS)
	pl := &artifacts.Threads{Version: artifacts.ThreadsVersion, Plan: serverPlan(p, r.ws.AllowedCPUs, r.o.IOThreads)}
	run, err = r.loadServer(run, p, srv.Pid(), socket, name, pl)
	if err != nil {
		run.Threads = r.writeThreads(name, pl)
		return failed(run, err)
	}
	// Each loop's connections and requests, right after the load.
	if pl.Loops, err = scrapeLoops(r.t.ctx(), socket); err != nil {
		pl.MetricsError = err.Error()
	}
	// Latency at fixed open-loop rates, fractions of this run's capacity.
	run = r.rateSteps(run, p, srv.Pid(), socket, name)
	// The server's threads as the idle window opens and closes: how often
	// each slept with nothing to do.
	pl.Idle = &artifacts.IdleThreads{}
	var idleStart time.Time
	idle, note, err := idleCPU(r.t.ctx(), srv.Pid(), socket, r.o.IdleConns, seconds(r.o.IdleS),
		func() { idleStart = time.Now(); pl.Idle.Start = ReadThreads(artifacts.RoleServer, srv.Pid()) },
		func() {
			pl.Idle.End = ReadThreads(artifacts.RoleServer, srv.Pid())
			pl.Idle.WindowS = time.Since(idleStart).Seconds()
		})
	run.Threads = r.writeThreads(name, pl)
	if err != nil {
		return failed(run, err)
	}
	run.IdleCoreFraction = &idle.CoreFraction
	if note != "" {
		run.Reason = strings.TrimPrefix(run.Reason+"; "+note, "; ")
	}
	if err := srv.Stop(serverStopGrace); err != nil {
		return failed(run, fmt.Errorf("after SIGTERM: %w (log %s.server.log)", err, name))
	}
	return run
}

// loadServer runs load_tester against the server and measures the server's
// CPU over the middle of the measured window.
func (r *waitRunner) loadServer(run artifacts.WaitRun, p plan.PlannedRun, pid int, socket, name string, pl *artifacts.Threads) (artifacts.WaitRun, error) {
	args := []string{"--unix-socket", socket, "--path", "/ok", "--concurrency", fmt.Sprint(r.o.Concurrency),
		"--network-threads", fmt.Sprint(r.o.LoadThreads), "--duration", fmt.Sprint(r.o.DurationS),
		"--warmup", fmt.Sprint(r.o.WarmupS), "--quiet", "--max-errors", "1000000000"}
	if r.o.RequestsPerConn > 0 {
		args = append(args, "--requests-per-conn", fmt.Sprint(r.o.RequestsPerConn))
	}
	args = append(args, r.o.slowMachineArgs()...)
	timeout := seconds(r.o.WarmupS+r.o.DurationS+r.o.DrainS) + 30*time.Second
	var cpu *artifacts.CPUSample
	win := measuredWindow(r.o.WarmupS, r.o.DurationS)
	lf, err := r.t.loadWhile(name+".load", args, p.LoadCPUs, timeout, withThreads(sampleDuring(pid, win, &cpu), pid, win, pl))
	if err != nil {
		return run, err
	}
	if lf.RequestsPerSec <= 0 {
		return run, fmt.Errorf("load_tester measured no requests (%s.load.json)", name)
	}
	run.Artifact = name + ".load.json"
	run.Throughput, run.P50Ns, run.P99Ns = ptr(lf.RequestsPerSec), ptr(float64(lf.Latency.P50)), ptr(float64(lf.Latency.P99))
	run.CPUNsPerOp = ptr(cpu.CoreFraction * 1e9 / lf.RequestsPerSec)
	if lf.ClientCPUNsPerReq > 0 {
		run.ClientCPUNsPerRequest = ptr(lf.ClientCPUNsPerReq)
	}
	run.Errors, run.ClientBound, run.Unfinished, run.Dropped = lf.Errors, lf.ClientBound, lf.Unfinished, lf.Dropped
	var notes []string
	if lf.Errors > 0 {
		notes = append(notes, fmt.Sprintf("%d errors of %d requests", lf.Errors, lf.Requests))
	}
	if !lf.Clean() {
		notes = append(notes, fmt.Sprintf("not clean: %d of %d due requests unfinished, %d dropped", lf.Unfinished, lf.Due, lf.Dropped))
	}
	run.Reason = strings.Join(notes, "; ")
	return run, nil
}
