package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"weaseldb/artifacts"
	"weaseldb/internal/affinity"
	"weaseldb/plan"
)

// roundsDir holds every run's artifacts, under the run directory.
const roundsDir = "rounds"

// Setups measures the seed's setup and the one fitted to the allowed CPUs in
// rounds: each round calibrates the spin work (bench_cpu_work), then runs
// both setups one after the other, the first alternating from round to
// round (seed first in odd rounds), each on a fresh server. It writes
// setups.json after every step, so an interrupted run keeps what it
// measured. A failed run or calibration is recorded with its reason and
// the whole returns an error naming it, after everything else ran. When ctx
// is cancelled (an interrupt) the run in progress is stopped, its server
// with it, no step starts after it, and the error wraps ErrInterrupted.
func Setups(ctx context.Context, o *SetupsOptions, stdout, stderr io.Writer) error {
	if err := o.Validate(); err != nil {
		return err
	}
	seed, seedDoc, err := o.seedSetup()
	if err != nil {
		return err
	}
	allowed, err := allowedCPUs(o.AllowedCPUs)
	if err != nil {
		return fmt.Errorf("setups: %w", err)
	}
	topo := machineTopology(o.AllowedCPUs, allowed)
	fitted := plan.FitSetupOn(topo, seed)
	ss := &artifacts.Setups{Version: artifacts.SetupsVersion, AllowedCPUs: affinity.FormatCPUList(allowed), Rounds: o.Rounds,
		DurationS: o.DurationS, WarmupS: o.WarmupS, IdleS: o.IdleS, IdleConns: o.IdleConns,
		WorkIterations: o.WorkIterations, WorkTargetNs: float64(o.WorkTarget.Nanoseconds()),
		Setups: []artifacts.Setup{seed, fitted}, Topology: plan.RecordTopology(topo)}
	if o.RequireDedicated && fitted.Cores != artifacts.CoresDedicated {
		fmt.Fprint(stderr, formatSetupsPlan(ss))
		return fmt.Errorf("setups: --require-dedicated: %d allowed CPUs give the fitted setup shared cores; %s",
			len(allowed), strings.TrimSpace(plan.DedicatedNeed(ss.AllowedCPUs, fitted)))
	}
	if o.Plan {
		fmt.Fprint(stdout, formatSetupsPlan(ss))
		return nil
	}
	fmt.Fprint(stderr, formatSetupsPlan(ss)) // where every thread will run, before any run
	if err := os.MkdirAll(filepath.Join(o.RunDir, roundsDir), 0o755); err != nil {
		return fmt.Errorf("setups: %w", err)
	}
	sockDir, err := os.MkdirTemp("", "ws")
	if err != nil {
		return fmt.Errorf("setups: %w", err)
	}
	defer os.RemoveAll(sockDir)
	r := &setupsRunner{o: o, ss: ss, t: Tools{Ctx: ctx, Bin: o.Bin, RunDir: o.RunDir, Log: stderr, Prefix: "setups"}, sockets: map[string]string{}}
	for i := range ss.Setups {
		if err := r.writeConfig(&ss.Setups[i], seedDoc, sockDir); err != nil {
			return err
		}
	}
	r.runRounds()
	if o.SustainS > 0 {
		r.runSustained()
	}
	fmt.Fprint(stdout, r.summary())
	if err := r.save(); err != nil {
		return err
	}
	if r.t.interrupted() {
		return fmt.Errorf("setups: %w after %d run(s); what they measured is in %s", ErrInterrupted, len(r.ss.Runs), r.t.Path(artifacts.SetupsFile))
	}
	return r.problems()
}

// problems is an error naming the runs and calibrations that failed or
// whose server did not stop cleanly, nil when there were none.
func (r *setupsRunner) problems() error {
	var bad []string
	for _, c := range r.ss.Calibrations {
		if c.Status != artifacts.StatusMeasured {
			bad = append(bad, fmt.Sprintf("calibration of round %d: %s", c.Round, c.Reason))
		}
	}
	for _, run := range r.ss.Runs {
		if run.Status != artifacts.StatusMeasured || run.Reason != "" {
			bad = append(bad, fmt.Sprintf("%s round %d: %s", run.Setup, run.Round, run.Reason))
		}
	}
	if r.sus != nil {
		for _, run := range r.sus.Runs {
			if run.Status != artifacts.StatusMeasured || run.Reason != "" || run.SampleError != "" {
				bad = append(bad, fmt.Sprintf("%s sustained: %s", run.Setup, strings.Trim(run.Reason+"; "+run.SampleError, "; ")))
			}
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("setups: %d problem(s), recorded in %s: %s", len(bad), artifacts.SetupsFile, strings.Join(bad, "; "))
}

// setupsRunner runs the rounds and records them in ss; one goroutine.
type setupsRunner struct {
	o       *SetupsOptions
	ss      *artifacts.Setups
	t       Tools
	sockets map[string]string    // setup name -> its servers' unix socket
	sus     *artifacts.Sustained // the sustained runs (nil when not asked for)
}

func (r *setupsRunner) save() error { return r.t.WriteJSON(artifacts.SetupsFile, r.ss) }

func (r *setupsRunner) saveOrLog() {
	if err := r.save(); err != nil {
		r.t.Logf("%v", err)
	}
}

// writeConfig writes the config every server of the setup reads.
func (r *setupsRunner) writeConfig(s *artifacts.Setup, seedDoc map[string]any, sockDir string) error {
	socket := filepath.Join(sockDir, s.Name+".sock")
	doc, err := setupConfig(seedDoc, *s, socket)
	if err != nil {
		return fmt.Errorf("setups: %s config: %w", s.Name, err)
	}
	if r.o.StageWaits {
		withStageWaits(doc)
	}
	s.Config = "setup_" + s.Name + ".toml"
	head := fmt.Sprintf("# written by report setups: %s (%s)\n", s.Title, s.Why)
	if err := writeServerConfig(r.t.Path(s.Config), head, doc); err != nil {
		return fmt.Errorf("setups: %w", err)
	}
	r.sockets[s.Name] = socket
	return nil
}

// order is the setups of one round, in the order they run: the seed's first
// in odd rounds, the fitted one first in even rounds.
func order(setups []artifacts.Setup, round int) []artifacts.Setup {
	if round%2 == 1 {
		return setups
	}
	out := make([]artifacts.Setup, 0, len(setups))
	for i := len(setups) - 1; i >= 0; i-- {
		out = append(out, setups[i])
	}
	return out
}

func (r *setupsRunner) runRounds() {
	for round := 1; round <= r.o.Rounds && !r.t.interrupted(); round++ {
		r.ss.Calibrations = append(r.ss.Calibrations, r.calibrate(round))
		r.saveOrLog()
		for i, s := range order(r.ss.Setups, round) {
			if r.t.interrupted() {
				return
			}
			r.ss.Runs = append(r.ss.Runs, r.run(s, round, i+1))
			r.saveOrLog()
		}
	}
}

// calibrate times the configured work and calibrates the target, once each.
func (r *setupsRunner) calibrate(round int) artifacts.CalibrationRun {
	c := artifacts.CalibrationRun{Round: round, Status: artifacts.StatusMeasured,
		Timed:  fmt.Sprintf("%s/r%d.cpu_work.json", roundsDir, round),
		Target: fmt.Sprintf("%s/r%d.cpu_work_target.json", roundsDir, round)}
	var problems []string
	if err := r.t.Command(time.Minute, strings.TrimSuffix(c.Timed, ".json"), nil, "bench_cpu_work",
		fmt.Sprint(r.o.WorkIterations), "--json", r.t.Path(c.Timed)); err != nil {
		problems = append(problems, err.Error())
		c.Timed = ""
	}
	// A calibration whose passes never agreed exits 1 but writes its JSON
	// (target_agreed false): that is a measurement of a machine whose speed
	// moved, which the report shows with its spread, not a failure.
	if err := r.t.Command(2*time.Minute, strings.TrimSuffix(c.Target, ".json"), nil, "bench_cpu_work",
		"--target", r.o.WorkTarget.String(), "--json", r.t.Path(c.Target)); err != nil {
		var cw artifacts.CPUWork
		switch readErr := r.t.ReadJSON(c.Target, &cw); {
		case readErr == nil && cw.TargetAgreed != nil && !*cw.TargetAgreed:
			c.Reason = fmt.Sprintf("no two calibration passes agreed within 5%% (%d passes)", len(cw.TargetPasses))
		case readErr == nil:
			problems = append(problems, err.Error())
		default:
			problems = append(problems, err.Error())
			c.Target = ""
		}
	}
	if len(problems) > 0 {
		c.Status, c.Reason = artifacts.StatusFailed, strings.Join(problems, "; ")
	}
	if c.Reason != "" {
		r.t.Logf("calibration of round %d: %s", round, c.Reason)
	}
	return c
}

// run is one run of one setup: a fresh server, the load while the server is
// measured, its idle CPU after the last round, and a clean stop.
func (r *setupsRunner) run(s artifacts.Setup, round, ord int) artifacts.SetupRun {
	base := fmt.Sprintf("%s/%s-r%d", roundsDir, s.Name, round)
	run := artifacts.SetupRun{Setup: s.Name, Round: round, Order: ord, Status: artifacts.StatusMeasured}
	fail := func(err error) artifacts.SetupRun {
		run.Status, run.Reason = artifacts.StatusFailed, err.Error()
		r.t.Logf("%s round %d: %v", s.Name, round, err)
		return run
	}
	srv, err := r.t.startServer(r.t.Path(s.Config), base+".server.log", r.o.ReadyTimeout)
	if err != nil {
		return fail(err)
	}
	defer srv.Stop(serverStopGrace)
	sample := &artifacts.ServerSample{Version: 1, GOMAXPROCS: serverGOMAXPROCS(srv)}
	r.t.Logf("%s round %d: server pid %d ready (GOMAXPROCS %d)", s.Name, round, srv.Pid(), sample.GOMAXPROCS)
	socket := r.sockets[s.Name]
	pl := &artifacts.Threads{Version: artifacts.ThreadsVersion, Plan: artifacts.PinPlan{AllowedCPUs: r.ss.AllowedCPUs,
		IOThreads: s.IOThreads, IOCPUs: s.IOCPUs, PipelineCPUs: s.PipelineCPUs, LoadCPUs: s.LoadCPUs}}
	run.Threads = base + ".threads.json"
	lf, err := r.t.loadWhile(base+".load", r.loadArgs(s, socket, base), s.LoadCPUs, r.loadTimeout(),
		withThreads(r.measureServer(srv.Pid(), socket, sample, pl), srv.Pid(), measuredWindow(r.o.WarmupS, r.o.DurationS), pl))
	if err != nil {
		r.writeThreads(&run, pl)
		return fail(err)
	}
	run.Load, run.HdrLog = base+".load.json", base+".load.hlog"
	if lf.Requests == 0 {
		run.Reason = "load_tester measured no requests"
	}
	// Each loop's connections and requests, after the load and its drain.
	if loops, err := scrapeLoops(r.t.ctx(), socket); err == nil {
		pl.Loops, pl.MetricsError = loops, ""
	} else if pl.MetricsError == "" {
		pl.MetricsError = err.Error()
	}
	r.writeThreads(&run, pl)
	if round == r.o.Rounds {
		idle, note, err := idleCPU(r.t.ctx(), srv.Pid(), socket, r.o.IdleConns, seconds(r.o.IdleS), nil, nil)
		if err != nil {
			return fail(fmt.Errorf("idle CPU: %w", err))
		}
		sample.Idle, sample.IdleConns, sample.IdleNote = idle, r.o.IdleConns, note
	}
	if err := srv.Stop(serverStopGrace); err != nil {
		run.Reason = strings.TrimPrefix(run.Reason+"; after SIGTERM: "+err.Error(), "; ")
	}
	sample.ExitCode = srv.ExitCode()
	run.Sample = base + ".sample.json"
	if err := r.t.WriteJSON(run.Sample, sample); err != nil {
		return fail(err)
	}
	return run
}

// writeThreads writes a run's threads artifact (run.Threads), or logs why
// it could not and forgets it.
func (r *setupsRunner) writeThreads(run *artifacts.SetupRun, pl *artifacts.Threads) {
	if err := r.t.WriteJSON(run.Threads, pl); err != nil {
		r.t.Logf("%v", err)
		run.Threads = ""
	}
}

// loadArgs are load_tester's flags for one run of a setup.
func (r *setupsRunner) loadArgs(s artifacts.Setup, socket, base string) []string {
	return r.loadArgsFor(s, socket, base, r.o.DurationS)
}

// loadArgsFor are load_tester's flags for durationS s of measured load.
func (r *setupsRunner) loadArgsFor(s artifacts.Setup, socket, base string, durationS float64) []string {
	args := []string{"--unix-socket", socket, "--path", "/ok",
		"--concurrency", fmt.Sprint(s.Connections), "--requests-per-conn", fmt.Sprint(s.RequestsPerConn),
		"--connect-threads", fmt.Sprint(s.ConnectThreads), "--network-threads", fmt.Sprint(s.LoadThreads),
		"--duration", fmt.Sprint(durationS), "--warmup", fmt.Sprint(r.o.WarmupS),
		"--stats-interval", fmt.Sprint(r.o.StatsIntervalS),
		// Every due request is kept and counted: the report, not the exit
		// status, says when a run was not clean.
		"--max-errors", "1000000000",
		"--instance", base[len(roundsDir)+1:], "--hdr-log", r.t.Path(base + ".load.hlog")}
	return append(args, r.o.slowMachineArgs()...)
}

func (r *setupsRunner) loadTimeout() time.Duration {
	return seconds(r.o.WarmupS+r.o.DurationS+r.o.DrainS) + 60*time.Second
}

// measureServer samples the server's CPU over the measured window and
// scrapes its stage busy counters at the window's edges, into sample, and
// each loop's counts at the end into pl (read again after the load).
func (r *setupsRunner) measureServer(pid int, socket string, sample *artifacts.ServerSample, pl *artifacts.Threads) func(context.Context, func() int) error {
	win := measuredWindow(r.o.WarmupS, r.o.DurationS)
	return func(ctx context.Context, client func() int) error {
		var before, after *serverMetrics
		var errBefore, errAfter error
		var t0, t1 time.Time
		s, err := SampleCPU(ctx, SampleOptions{Pid: pid, Phase: "loaded", Delay: win.delay, Window: win.length,
			AtStart: func() { before, errBefore = scrapeStageMetrics(ctx, socket); t0 = time.Now() },
			AtEnd:   func() { t1 = time.Now(); after, errAfter = scrapeMetrics(ctx, socket) }})
		switch {
		case errAfter != nil:
			pl.MetricsError = errAfter.Error()
		case after == nil:
			pl.MetricsError = "not scraped: the window did not close"
		case after.loopsErr != nil:
			pl.MetricsError = after.loopsErr.Error()
		default:
			pl.Loops = after.loops
		}
		if err != nil {
			return err
		}
		sample.Loaded = *s
		if errAfter == nil && after.stageBusy == nil {
			errAfter = fmt.Errorf("GET /metrics: no %s", stageBusyMetric)
		}
		if err := errors.Join(errBefore, errAfter); err != nil {
			sample.MetricsError = err.Error() // the CPU figures stand without it
			return nil
		}
		sample.StageBusyWindowS = t1.Sub(t0).Seconds()
		sample.StageBusy = busyShares(before.stageBusy, after.stageBusy, sample.StageBusyWindowS)
		sample.StageWait = waitDeltas(before.stageWait, after.stageWait)
		return nil
	}
}
