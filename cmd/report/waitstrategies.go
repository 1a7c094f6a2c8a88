package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"weaseldb/internal/procstat"
	"weaseldb/internal/serverproc"
	"weaseldb/loadtester"
	"weaseldb/reports"
	"weaseldb/server/affinity"
	"weaseldb/server/pipeline/pipebench"
)

// waitOptions are the flags of `report wait-strategies`.
type waitOptions struct {
	bin, runDir                     string
	durationS, warmupS, idleS       float64
	idleConns, concurrency          int
	loadThreads, ioThreads, release int
	okIterations                    int
	strategies, cores               string
	allowed                         string // simulated allowed set: plan only
	plan                            bool
	readyTimeout                    time.Duration
}

func parseWaitFlags(args []string, stderr io.Writer) (*waitOptions, error) {
	fs := newFlags("report wait-strategies", stderr)
	o := &waitOptions{}
	fs.StringVar(&o.bin, "bin", "build", "directory holding weaseldb, load_tester and bench_pipeline")
	fs.StringVar(&o.runDir, "run", "", "run directory: wait_strategies.json and every raw result go here")
	fs.Float64Var(&o.durationS, "duration", 5, "seconds of measured load per server run (at least 2)")
	fs.Float64Var(&o.warmupS, "warmup", 1, "seconds of load before the measured window, excluded from every figure")
	fs.Float64Var(&o.idleS, "idle", 3, "seconds of idle CPU measured after the load (at least 1)")
	fs.IntVar(&o.idleConns, "idle-conns", 100, "keep-alive connections held open while idle")
	fs.IntVar(&o.concurrency, "concurrency", 100, "load_tester connections")
	fs.IntVar(&o.loadThreads, "load-threads", 1, "load_tester network threads (a dedicated CPU each)")
	fs.IntVar(&o.ioThreads, "io-threads", 1, "server io_threads")
	fs.IntVar(&o.release, "release-threads", 1, "server pipeline_release_threads")
	fs.IntVar(&o.okIterations, "ok-iterations", 0, "server ok_resolve_iterations (spin work per /ok)")
	fs.StringVar(&o.strategies, "strategies", strings.Join(reports.WaitStrategyNames, ","), "wait strategies, comma-separated")
	fs.StringVar(&o.cores, "cores", "shared,dedicated", "kinds of cores: shared, dedicated or both")
	fs.StringVar(&o.allowed, "allowed-cpus", "", "plan against this CPU list instead of sched_getaffinity (implies --plan)")
	fs.BoolVar(&o.plan, "plan", false, "print the plan (which runs, which CPUs, which are skipped) and run nothing")
	fs.DurationVar(&o.readyTimeout, "ready-timeout", 15*time.Second, "how long the server may take to say it is ready")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("wait-strategies: unexpected argument %q", fs.Arg(0))
	}
	if o.allowed != "" {
		o.plan = true
	}
	switch {
	case !o.plan && o.runDir == "":
		return nil, errors.New("wait-strategies: --run DIR is required (or --plan)")
	case o.durationS < 2:
		return nil, fmt.Errorf("wait-strategies: --duration must be at least 2 s, got %g", o.durationS)
	case o.warmupS < 0 || o.idleS < 1:
		return nil, fmt.Errorf("wait-strategies: --warmup must be ≥ 0 and --idle ≥ 1, got %g and %g", o.warmupS, o.idleS)
	case o.concurrency < 1 || o.loadThreads < 1 || o.ioThreads < 1 || o.release < 1 || o.idleConns < 0 || o.okIterations < 0:
		return nil, errors.New("wait-strategies: --concurrency, --load-threads, --io-threads and --release-threads must be ≥ 1; --idle-conns and --ok-iterations ≥ 0")
	}
	return o, nil
}

// params turns the flags into the planner's input.
func (o *waitOptions) params() (reports.WaitPlanParams, error) {
	p := reports.WaitPlanParams{PipelineStages: 2, IOThreads: o.ioThreads, ReleaseThreads: o.release, LoadThreads: o.loadThreads}
	for _, s := range strings.Split(o.strategies, ",") {
		s = strings.TrimSpace(s)
		if !containsString(reports.WaitStrategyNames, s) {
			return p, fmt.Errorf("wait-strategies: unknown strategy %q (allowed: %s)", s, strings.Join(reports.WaitStrategyNames, ", "))
		}
		p.Strategies = append(p.Strategies, s)
	}
	for _, c := range strings.Split(o.cores, ",") {
		switch strings.TrimSpace(c) {
		case reports.CoresShared:
		case reports.CoresDedicated:
			p.Dedicated = true
		default:
			return p, fmt.Errorf("wait-strategies: --cores takes shared and/or dedicated, got %q", c)
		}
	}
	return p, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// waitStrategies runs the comparison: bench_pipeline's wait-strategy family
// and the server under load_tester, per strategy, on shared cores and on
// dedicated cores where the machine has enough.
func waitStrategies(args []string, stdout, stderr io.Writer) error {
	o, err := parseWaitFlags(args, stderr)
	if err != nil {
		return err
	}
	p, err := o.params()
	if err != nil {
		return err
	}
	var allowed []int
	if o.allowed != "" {
		allowed, err = affinity.ParseCPUList(o.allowed)
	} else {
		allowed, err = affinity.AllowedCPUs()
	}
	if err != nil {
		return fmt.Errorf("wait-strategies: %w", err)
	}
	plan := reports.PlanWaitStrategies(allowed, p)
	ws := &reports.WaitStrategies{
		Version: reports.WaitStrategiesVersion, AllowedCPUs: affinity.FormatCPUList(allowed), Simulated: o.allowed != "",
		DurationS: o.durationS, WarmupS: o.warmupS, IdleS: o.idleS, IdleConns: o.idleConns, Concurrency: o.concurrency,
	}
	if o.plan {
		printPlan(stdout, ws, plan)
		return nil
	}
	if err := os.MkdirAll(o.runDir, 0o755); err != nil {
		return fmt.Errorf("wait-strategies: %w", err)
	}
	r := &waitRunner{o: o, ws: ws, log: stderr}
	r.runAll(plan)
	fmt.Fprint(stdout, reports.FormatWaitTable(ws))
	printSkipped(stdout, ws)
	return r.save()
}

// printPlan shows each planned run and its CPUs, or why it would be skipped.
func printPlan(w io.Writer, ws *reports.WaitStrategies, plan []reports.PlannedRun) {
	fmt.Fprintf(w, "plan for allowed CPUs %s%s:\n", ws.AllowedCPUs, map[bool]string{true: " (simulated)"}[ws.Simulated])
	for _, r := range plan {
		what := "run"
		switch {
		case r.Status == reports.StatusSkipped:
			what = "skip: " + r.Reason
		case r.CPUPlan != "":
			what = fmt.Sprintf("run on %d CPUs: %s", r.CPUsNeeded, r.CPUPlan)
		}
		fmt.Fprintf(w, "  %-8s  %-18s  %-9s  %s\n", r.Bench, r.Strategy, r.Cores, what)
	}
}

// printSkipped summarises the skipped runs under the table.
func printSkipped(w io.Writer, ws *reports.WaitStrategies) {
	skipped := ws.SkippedRuns()
	if len(skipped) == 0 {
		return
	}
	fmt.Fprintf(w, "\nskipped %d runs for want of CPUs (this process may use %s):\n", len(skipped), ws.AllowedCPUs)
	for _, r := range skipped {
		fmt.Fprintf(w, "  %s %s on dedicated cores needs %d CPUs\n", r.Bench, r.Strategy, r.CPUsNeeded)
	}
}

// waitRunner executes a plan and records each run in ws.
type waitRunner struct {
	o   *waitOptions
	ws  *reports.WaitStrategies
	log io.Writer
}

func (r *waitRunner) logf(format string, args ...any) {
	fmt.Fprintf(r.log, "=== wait-strategies: "+format+"\n", args...)
}

// save writes wait_strategies.json; called after every run, so an
// interrupted comparison keeps what it measured.
func (r *waitRunner) save() error {
	return writeJSON(filepath.Join(r.o.runDir, reports.WaitStrategiesFile), r.ws)
}

func (r *waitRunner) runAll(plan []reports.PlannedRun) {
	// bench_pipeline runs every strategy in one invocation per kind of cores.
	for _, cores := range []string{reports.CoresShared, reports.CoresDedicated} {
		var group []reports.PlannedRun
		for _, p := range plan {
			if p.Bench == reports.BenchPipeline && p.Cores == cores {
				group = append(group, p)
			}
		}
		if len(group) > 0 {
			r.ws.Runs = append(r.ws.Runs, r.pipelineRuns(group)...)
			r.saveOrLog()
		}
	}
	for _, p := range plan {
		if p.Bench != reports.BenchServer {
			continue
		}
		run := p.WaitRun
		if run.Status == reports.StatusMeasured {
			run = r.serverRun(p)
		} else {
			r.logf("server %s on %s cores: %s: %s", p.Strategy, p.Cores, p.Status, p.Reason)
		}
		r.ws.Runs = append(r.ws.Runs, run)
		r.saveOrLog()
	}
}

func (r *waitRunner) saveOrLog() {
	if err := r.save(); err != nil {
		r.logf("%v", err)
	}
}

// failed marks a run failed with the reason.
func failed(run reports.WaitRun, err error) reports.WaitRun {
	run.Status, run.Reason = reports.StatusFailed, err.Error()
	return run
}

// pipelineRuns runs bench_pipeline's wait_strategy family once and splits
// its cases into one run per planned strategy.
func (r *waitRunner) pipelineRuns(group []reports.PlannedRun) []reports.WaitRun {
	out := make([]reports.WaitRun, len(group))
	var todo []int
	for i, p := range group {
		out[i] = p.WaitRun
		if p.Status == reports.StatusMeasured {
			todo = append(todo, i)
		} else {
			r.logf("bench_pipeline %s on %s cores: %s: %s", p.Strategy, p.Cores, p.Status, p.Reason)
		}
	}
	if len(todo) == 0 {
		return out
	}
	cores := group[todo[0]].Cores
	name := "ws_pipeline_" + cores
	args := []string{"--quick", "--families", "wait_strategy", "--json", filepath.Join(r.o.runDir, name+".json")}
	if cores == reports.CoresDedicated {
		args = append(args, "--cpus", group[todo[0]].PipelineCPUsFlag())
	}
	err := r.command(2*time.Minute, name, filepath.Join(r.o.bin, "bench_pipeline"), args...)
	var pb pipebench.JSONOutput
	if err == nil {
		err = readJSONFile(filepath.Join(r.o.runDir, name+".json"), &pb)
	}
	for _, i := range todo {
		if err != nil {
			out[i] = failed(out[i], err)
			continue
		}
		out[i] = pipelineFigures(out[i], &pb, name+".json")
	}
	return out
}

// pipelineFigures copies one strategy's case and idle CPU out of bench_pipeline's result.
func pipelineFigures(run reports.WaitRun, pb *pipebench.JSONOutput, artifact string) reports.WaitRun {
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

func ptr(v float64) *float64 { return &v }

// command runs one tool to completion, its output in RUN/<name>.log.
func (r *waitRunner) command(timeout time.Duration, name, path string, args ...string) error {
	logFile, err := os.Create(filepath.Join(r.o.runDir, name+".log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.WaitDelay = 5 * time.Second
	r.logf("%s: %s %s", name, path, strings.Join(args, " "))
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: ran past %v (log %s.log)", filepath.Base(path), timeout, name)
		}
		return fmt.Errorf("%s: %w (log %s.log)", filepath.Base(path), err, name)
	}
	return nil
}

func readJSONFile(path string, dst any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, dst); err != nil {
		return fmt.Errorf("decode %s: %w", filepath.Base(path), err)
	}
	return nil
}

// serverConfig is the TOML the server of one run reads, written by the
// encoder (serverproc.EncodeConfig) under a comment saying what it is for.
func serverConfig(p reports.PlannedRun, o *waitOptions, socket string) string {
	server := map[string]any{"interfaces": []map[string]any{serverproc.UnixInterface(socket)}, "io_threads": o.ioThreads}
	if len(p.IOCPUs) > 0 {
		server["io_cpus"] = p.IOCPUs
	}
	commit := map[string]any{"pipeline_wait_strategy": p.Strategy, "pipeline_release_threads": o.release}
	if len(p.PipelineCPUs) > 0 {
		commit["pipeline_cpus"] = p.PipelineCPUs
	}
	doc := map[string]any{"server": server, "commit": commit,
		"benchmark": map[string]any{"ok_resolve_iterations": o.okIterations}}
	head := fmt.Sprintf("# written by report wait-strategies: %s on %s cores\n", p.Strategy, p.Cores)
	data, err := serverproc.EncodeConfig(doc)
	if err != nil {
		// Cannot happen for strings, ints and int lists; were it to, the
		// server refuses this unknown key by name instead of starting with
		// its defaults.
		return head + fmt.Sprintf("config_error = %q\n", err.Error())
	}
	return head + string(data)
}

// serverRun starts weaseldb with the run's strategy (and CPUs), loads it with
// load_tester while sampling its CPU, then measures its idle CPU with
// keep-alive connections open, and stops it.
func (r *waitRunner) serverRun(p reports.PlannedRun) reports.WaitRun {
	run := p.WaitRun
	run.Unit = "req/s"
	name := fmt.Sprintf("ws_server_%s_%s", p.Strategy, p.Cores)
	// A short socket path: unix socket paths are limited to 107 bytes.
	sockDir, err := os.MkdirTemp("", "ws")
	if err != nil {
		return failed(run, err)
	}
	defer os.RemoveAll(sockDir)
	socket := filepath.Join(sockDir, "weaseldb.sock")
	configPath := filepath.Join(r.o.runDir, name+".toml")
	if err := os.WriteFile(configPath, []byte(serverConfig(p, r.o, socket)), 0o644); err != nil {
		return failed(run, err)
	}
	srv, err := startServer(filepath.Join(r.o.bin, "weaseldb"), configPath, filepath.Join(r.o.runDir, name+".server.log"), r.o.readyTimeout)
	if err != nil {
		return failed(run, err)
	}
	defer srv.Stop(serverStopGrace)
	v, _ := srv.StartupValue("weaseldb: GOMAXPROCS=")
	run.GOMAXPROCS, _ = strconv.Atoi(strings.Fields(v + " ")[0])
	r.logf("%s: server pid %d ready (GOMAXPROCS %d)", name, srv.Pid(), run.GOMAXPROCS)
	run, err = r.loadServer(run, p, srv, socket, name)
	if err != nil {
		return failed(run, err)
	}
	idle, note, err := idleCPU(srv.Pid(), socket, r.o.idleConns, seconds2d(r.o.idleS))
	if err != nil {
		return failed(run, err)
	}
	run.IdleCoreFraction = &idle
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
func (r *waitRunner) loadServer(run reports.WaitRun, p reports.PlannedRun, srv *serverproc.Process, socket, name string) (reports.WaitRun, error) {
	path := filepath.Join(r.o.bin, "load_tester")
	args := []string{"--unix-socket", socket, "--path", "/ok", "--concurrency", strconv.Itoa(r.o.concurrency),
		"--network-threads", strconv.Itoa(r.o.loadThreads), "--duration", fmt.Sprint(r.o.durationS),
		"--warmup", fmt.Sprint(r.o.warmupS), "--quiet", "--max-errors", "1000000000",
		"--json", filepath.Join(r.o.runDir, name+".load.json")}
	if len(p.LoadCPUs) > 0 {
		taskset, err := exec.LookPath("taskset")
		if err != nil {
			return run, errors.New("taskset (util-linux) not found: needed to give load_tester its dedicated CPUs")
		}
		args = append([]string{"-c", affinity.FormatCPUList(p.LoadCPUs), path}, args...)
		path = taskset
	}
	// The window skips 0.5 s at each end of the measured load.
	delay, window := seconds2d(r.o.warmupS+0.5), seconds2d(r.o.durationS-1)
	sample := make(chan cpuResult, 1)
	go func() { sample <- sampleCPU(srv.Pid(), delay, window) }()
	timeout := seconds2d(r.o.warmupS+r.o.durationS) + 30*time.Second
	if err := r.command(timeout, name+".load", path, args...); err != nil {
		return run, err
	}
	cpu := <-sample
	if cpu.err != nil {
		return run, fmt.Errorf("server CPU under load: %w", cpu.err)
	}
	var lf loadtester.Result
	if err := readJSONFile(filepath.Join(r.o.runDir, name+".load.json"), &lf); err != nil {
		return run, err
	}
	if lf.RequestsPerSec <= 0 {
		return run, fmt.Errorf("load_tester measured no requests (%s.load.json)", name)
	}
	run.Artifact = name + ".load.json"
	run.Throughput, run.P50Ns, run.P99Ns = ptr(lf.RequestsPerSec), ptr(float64(lf.Latency.P50)), ptr(float64(lf.Latency.P99))
	run.CPUNsPerOp = ptr(cpu.cores * 1e9 / lf.RequestsPerSec)
	if lf.ClientCPUNsPerReq > 0 {
		run.ClientCPUNsPerRequest = ptr(lf.ClientCPUNsPerReq)
	}
	run.Errors, run.ClientBound = lf.Errors, lf.ClientBound
	if lf.Errors > 0 {
		run.Reason = fmt.Sprintf("%d errors of %d requests", lf.Errors, lf.Requests)
	}
	return run, nil
}

type cpuResult struct {
	cores float64
	err   error
}

// sampleCPU waits delay, then returns the process's CPU over window in cores.
func sampleCPU(pid int, delay, window time.Duration) cpuResult {
	time.Sleep(delay)
	c0, err := procstat.PidCPU(pid)
	if err != nil {
		return cpuResult{err: err}
	}
	t0 := time.Now()
	time.Sleep(window)
	c1, err := procstat.PidCPU(pid)
	if err != nil {
		return cpuResult{err: err}
	}
	return cpuResult{cores: (c1 - c0).Seconds() / time.Since(t0).Seconds()}
}

// idleCPU opens conns keep-alive connections (one request each, so each is
// a live connection the server has served), waits a second for the
// strategy's spins to expire, and measures the server's CPU over window.
func idleCPU(pid int, socket string, conns int, window time.Duration) (cores float64, note string, err error) {
	var open []net.Conn
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	for i := 0; i < conns; i++ {
		c, err := net.DialTimeout("unix", socket, 2*time.Second)
		if err != nil {
			note = fmt.Sprintf("idle: %d of %d keep-alive connections opened (%v)", i, conns, err)
			break
		}
		open = append(open, c)
		if err := okRoundTrip(c); err != nil {
			note = fmt.Sprintf("idle: connection %d: %v", i, err)
			break
		}
	}
	res := sampleCPU(pid, time.Second, window)
	return res.cores, note, res.err
}

// okRoundTrip sends GET /ok and reads until the response's headers end (the
// body is short and arrives with them).
func okRoundTrip(c net.Conn) error {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "GET /ok HTTP/1.1\r\nHost: localhost\r\n\r\n"); err != nil {
		return err
	}
	br := bufio.NewReader(c)
	status, err := br.ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(status, "HTTP/1.1 200") {
		return fmt.Errorf("GET /ok answered %q", strings.TrimSpace(status))
	}
	return c.SetDeadline(time.Time{})
}

// serverStopGrace is how long weaseldb may take to stop after SIGTERM
// before it is killed.
const serverStopGrace = 10 * time.Second

// startServer starts weaseldb through the supervisor, every line it prints
// in logPath, and waits until it prints "weaseldb: ready".
func startServer(path, config, logPath string, readyTimeout time.Duration) (*serverproc.Process, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	srv, err := serverproc.Start(serverproc.Spec{Name: "weaseldb", Binary: path, ConfigFile: config,
		Log: logFile, StartTimeout: readyTimeout})
	if err != nil {
		logFile.Close()
		return nil, fmt.Errorf("%w (log %s)", err, filepath.Base(logPath))
	}
	go func() { <-srv.Done(); logFile.Close() }() // nothing is written to the log after Done
	return srv, nil
}
