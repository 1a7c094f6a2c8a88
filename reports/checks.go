package reports

import (
	"fmt"
	"slices"
	"strings"

	"weaseldb/artifacts"
	"weaseldb/internal/affinity"
	"weaseldb/loadtester/result"
	"weaseldb/plan"
)

// Idle CPU, in cores, that tells parking from spinning: a strategy that
// parks uses less than IdleParkMaxCores with nothing to do; Never, whose
// stage threads spin always, uses at least IdleSpinMinCores. On any machine
// the gap is a factor of ten or more (docs/wait_strategies.md).
const (
	IdleParkMaxCores = 0.1
	IdleSpinMinCores = 0.5
)

// CheckOptions says what to hold a run to.
type CheckOptions struct {
	// CPUs is how many CPUs the run was to have: the machine's count and
	// every planned allowed set must be this (0: not checked).
	CPUs int
	// RequireDedicated fails a dedicated run skipped for want of CPUs
	// (the many-CPU guest is sized so that none is).
	RequireDedicated bool
}

// CheckRun checks every run of the run directory: the wait-strategy
// comparison (wait_strategies.json) and the report's setups (setups.json),
// with the threads each run read back (<name>.threads.json) and the load
// results. A missing file is a failed check, not an error.
func CheckRun(r *Run, o CheckOptions) *artifacts.Checks {
	c := &checker{r: r, out: &artifacts.Checks{Version: artifacts.ChecksVersion, CPUs: o.CPUs}, o: o}
	c.machine()
	c.waitStrategies()
	c.setups()
	for _, ch := range c.out.Checks {
		if !ch.OK {
			c.out.Failed++
		}
	}
	c.out.Total = len(c.out.Checks)
	c.out.Passed = c.out.Failed == 0 && c.out.Total > 0
	c.out.Summary = fmt.Sprintf("%d of %d checks passed", c.out.Total-c.out.Failed, c.out.Total)
	if c.out.Failed > 0 {
		c.out.Summary += fmt.Sprintf("; %d failed", c.out.Failed)
	}
	return c.out
}

type checker struct {
	r       *Run
	out     *artifacts.Checks
	o       CheckOptions
	printed *printedPlan // the printed plan, once read
}

func (c *checker) add(subject, check string, ok bool, artifact, format string, args ...any) {
	c.out.Checks = append(c.out.Checks, artifacts.Check{Subject: subject, Check: check, OK: ok, Artifact: artifact, Detail: fmt.Sprintf(format, args...)})
}

// machine: the CPUs the guest had, and the sets the runs were planned from.
func (c *checker) machine() {
	if c.o.CPUs == 0 {
		return
	}
	m := c.r.Manifest.Machine
	c.add("machine", artifacts.CheckCPUs, m.Cores == c.o.CPUs, artifacts.ManifestFile, "%d CPUs online (machine.cores), want %d", m.Cores, c.o.CPUs)
	sets := map[string]string{}
	if ws := c.r.WaitStrategies; ws != nil {
		sets[artifacts.WaitStrategiesFile] = ws.AllowedCPUs
	}
	if ss := c.r.Setups; ss != nil {
		sets[artifacts.SetupsFile] = ss.AllowedCPUs
	}
	for _, file := range sortedKeys(sets) {
		cpus, err := affinity.ParseCPUList(sets[file])
		c.add("machine", artifacts.CheckCPUs, err == nil && len(cpus) == c.o.CPUs, file,
			"the runs were planned from allowed CPUs %s (%d), want %d", sets[file], len(cpus), c.o.CPUs)
	}
}

// readThreads reads a run's threads artifact.
func (c *checker) readThreads(name string) (*artifacts.Threads, error) {
	if name == "" {
		return nil, fmt.Errorf("the run names no threads artifact")
	}
	var pl artifacts.Threads
	if err := c.r.readJSON(name, &pl, true); err != nil {
		return nil, err
	}
	return &pl, nil
}

// loopsAdvisory is why a run's loops are reported but not required to have
// all taken connections, "" when they are: Never on shared cores spins its
// four stage threads on the CPUs the loops need, which starves some loops
// (what the comparison is there to show), so they take few connections or
// none. A loop that cannot accept at all would fail every other run.
func loopsAdvisory(run artifacts.WaitRun) string {
	if run.Cores == artifacts.CoresShared && run.Strategy == "Never" {
		return "not required here: Never's spinning stages share the loops' CPUs and starve some loops, which is what this run shows"
	}
	return ""
}

// pinning checks a run's threads (and, for a server, its loops; advisory
// says why its loops are reported but not required).
func (c *checker) pinning(subject, name string, server bool, advisory string) PinningResult {
	pl, err := c.readThreads(name)
	if err != nil {
		c.add(subject, artifacts.CheckPinning, false, name, "%v", err)
		if server {
			c.add(subject, artifacts.CheckLoops, false, name, "%v", err)
		}
		return PinningResult{}
	}
	res := VerifyPinning(pl)
	c.add(subject, artifacts.CheckPinning, res.OK(), name, "%s", res.Summary())
	if !server {
		return res
	}
	summary, problems := VerifyLoops(pl)
	detail := joinDetail(summary, problems)
	if advisory == "" || len(problems) == 0 {
		c.add(subject, artifacts.CheckLoops, len(problems) == 0, name, "%s", detail)
		return res
	}
	c.add(subject, artifacts.CheckLoops, true, name, "%s (%s)", detail, advisory)
	c.out.Checks[len(c.out.Checks)-1].Advisory = true
	return res
}

// accounting checks a load result: every due request answered.
func (c *checker) accounting(subject, name string, lf *result.Result) {
	if lf == nil {
		var read result.Result
		if err := c.r.readJSON(name, &read, true); err != nil {
			c.add(subject, artifacts.CheckAccounting, false, name, "%v", err)
			return
		}
		lf = &read
	}
	ok := lf.Due > 0 && lf.Due == lf.Answered && lf.Failed == 0 && lf.Unfinished == 0 && lf.Dropped == 0 && lf.Errors == 0
	c.add(subject, artifacts.CheckAccounting, ok, name, "due %d = answered %d + failed %d + unfinished %d + dropped %d; %d errors",
		lf.Due, lf.Answered, lf.Failed, lf.Unfinished, lf.Dropped, lf.Errors)
}

// gomaxprocs checks the server's GOMAXPROCS against the plan.
func (c *checker) gomaxprocs(subject, artifact string, got, io, release int, strategy string, pinned int) {
	want := PlannedGOMAXPROCS(io, release, strategy, pinned)
	c.add(subject, artifacts.CheckGOMAXPROCS, got == want, artifact, "GOMAXPROCS %d, planned %d (%d I/O loops, %s, %d pinned threads)",
		got, want, io, strategy, pinned)
}

// idle checks a strategy's idle CPU: parking strategies park, Never spins.
func (c *checker) idle(subject, artifact, strategy string, cores *float64) {
	if cores == nil {
		c.add(subject, artifacts.CheckIdle, false, artifact, "idle CPU not measured")
		return
	}
	if strategy == "Never" {
		c.add(subject, artifacts.CheckIdle, *cores >= IdleSpinMinCores, artifact,
			"%.3f cores with nothing to do: Never spins (want at least %.1f)", *cores, IdleSpinMinCores)
		return
	}
	c.add(subject, artifacts.CheckIdle, *cores < IdleParkMaxCores, artifact,
		"%.3f cores with nothing to do: %s parks (want under %.1f)", *cores, strategy, IdleParkMaxCores)
}

// stageSleeps checks how often the pinned stage threads slept while idle.
func (c *checker) stageSleeps(subject, name string) {
	pl, err := c.readThreads(name)
	if err != nil {
		c.add(subject, artifacts.CheckStageSleeps, false, name, "%v", err)
		return
	}
	summary, problems := VerifyIdleSleeps(pl)
	if summary == "" && len(problems) == 0 {
		return // nothing pinned
	}
	c.add(subject, artifacts.CheckStageSleeps, len(problems) == 0, name, "%s", joinDetail(summary, problems))
}

// waitStrategies checks every run of the comparison.
func (c *checker) waitStrategies() {
	ws := c.r.WaitStrategies
	if ws == nil {
		c.add("wait-strategies", artifacts.CheckStatus, false, artifacts.WaitStrategiesFile, "no wait_strategies.json")
		return
	}
	replanned := c.replanWait(ws)
	for _, run := range ws.Runs {
		subject := fmt.Sprintf("wait-strategies %s %s %s", run.Bench, run.Strategy, run.Cores)
		switch {
		case run.Status == artifacts.StatusMeasured:
			c.add(subject, artifacts.CheckStatus, true, artifacts.WaitStrategiesFile, "measured%s", orEmpty("; ", run.Reason))
		case run.Status == artifacts.StatusSkipped && !c.o.RequireDedicated:
			continue // a machine too small for it: nothing ran, nothing to check
		default:
			c.add(subject, artifacts.CheckStatus, false, artifacts.WaitStrategiesFile, "%s: %s", run.Status, run.Reason)
			continue
		}
		if run.Cores == artifacts.CoresDedicated && replanned != nil {
			want := replanned[run.Bench+" "+run.Strategy]
			c.add(subject, artifacts.CheckPlan, want == run.CPUPlan, artifacts.WaitStrategiesFile, "CPUs %q; the planner gives %q for %s", run.CPUPlan, want, ws.AllowedCPUs)
		}
		res := c.pinning(subject, run.Threads, run.Bench == artifacts.BenchServer, loopsAdvisory(run))
		if run.Cores == artifacts.CoresDedicated {
			c.topology(subject, run.Threads, res, ws.Topology, ws.AllowedCPUs, run.PlacementGaveUp)
		}
		if run.Cores == artifacts.CoresDedicated && run.Bench == artifacts.BenchPipeline {
			c.printedPlan(subject, res, ws)
		}
		c.idle(subject, artifacts.WaitStrategiesFile, run.Strategy, run.IdleCoreFraction)
		if run.Bench == artifacts.BenchServer && run.Cores == artifacts.CoresDedicated {
			c.stageSleeps(subject, run.Threads)
		}
		if run.Bench != artifacts.BenchServer {
			continue
		}
		pinned := 0
		if run.Cores == artifacts.CoresDedicated {
			pinned = ws.IOThreads + plan.ServerStageThreads(ws.ReleaseThreads)
		}
		c.gomaxprocs(subject, artifacts.WaitStrategiesFile, run.GOMAXPROCS, ws.IOThreads, ws.ReleaseThreads, run.Strategy, pinned)
		c.accounting(subject, run.Artifact, nil)
	}
}

// replanWait plans the dedicated runs again from the recorded set and
// sizes: "bench strategy" -> its CPU plan; nil when the file predates the
// recorded sizes.
func (c *checker) replanWait(ws *artifacts.WaitStrategies) map[string]string {
	allowed, err := affinity.ParseCPUList(ws.AllowedCPUs)
	if err != nil || ws.IOThreads == 0 || ws.LoadThreads == 0 || ws.ReleaseThreads == 0 {
		return nil
	}
	var strategies []string
	for _, r := range ws.Runs {
		if !slices.Contains(strategies, r.Strategy) {
			strategies = append(strategies, r.Strategy)
		}
	}
	out := map[string]string{}
	for _, p := range plan.WaitStrategiesOn(plan.TopologyOf(ws.Topology, allowed), plan.WaitParams{Strategies: strategies, PipelineStages: 2,
		IOThreads: ws.IOThreads, ReleaseThreads: ws.ReleaseThreads, LoadThreads: ws.LoadThreads, Dedicated: true}) {
		if p.Cores == artifacts.CoresDedicated {
			out[p.Bench+" "+p.Strategy] = p.CPUPlan
		}
	}
	return out
}

// setups checks the report's setups: the plan, and every run and calibration.
func (c *checker) setups() {
	ss := c.r.Setups
	if ss == nil {
		c.add("setups", artifacts.CheckStatus, false, artifacts.SetupsFile, "no setups.json")
		return
	}
	setups := map[string]artifacts.Setup{}
	for _, s := range ss.Setups {
		setups[s.Name] = s
	}
	seed, okSeed := setups[artifacts.SetupSeed]
	fitted, okFitted := setups[artifacts.SetupFitted]
	if okSeed {
		c.add("setups seed", artifacts.CheckPlan, seed.IOThreads == SeedIOThreads, artifacts.SetupsFile,
			"the seed's setup runs %d I/O loops (the seed's %d), %s", seed.IOThreads, SeedIOThreads, artifacts.DescribeSetup(seed))
	}
	if okSeed && okFitted {
		c.fittedPlan(ss, seed, fitted)
	}
	for _, cal := range ss.Calibrations {
		c.add(fmt.Sprintf("setups calibration round %d", cal.Round), artifacts.CheckCalibration, cal.Status == artifacts.StatusMeasured, cal.Timed,
			"%s%s", cal.Status, orEmpty(": ", cal.Reason))
	}
	for _, run := range ss.Runs {
		subject := fmt.Sprintf("setups %s round %d", run.Setup, run.Round)
		s := setups[run.Setup]
		if run.Status != artifacts.StatusMeasured || run.Reason != "" {
			c.add(subject, artifacts.CheckStatus, false, artifacts.SetupsFile, "%s: %s", run.Status, run.Reason)
			if run.Status != artifacts.StatusMeasured {
				continue
			}
		}
		var sample artifacts.ServerSample
		if err := c.r.readJSON(run.Sample, &sample, true); err != nil {
			c.add(subject, artifacts.CheckStatus, false, run.Sample, "%v", err)
			continue
		}
		if run.Reason == "" {
			c.add(subject, artifacts.CheckStatus, sample.ExitCode == 0, run.Sample, "measured; the server stopped with exit %d after SIGTERM", sample.ExitCode)
		}
		res := c.pinning(subject, run.Threads, true, "")
		if s.Cores == artifacts.CoresDedicated {
			c.topology(subject, run.Threads, res, ss.Topology, ss.AllowedCPUs, s.PlacementGaveUp)
		}
		pinned := 0
		if s.Cores == artifacts.CoresDedicated {
			pinned = len(s.IOCPUs)
			for _, cpus := range s.PipelineCPUs {
				pinned += len(cpus)
			}
		}
		c.gomaxprocs(subject, run.Sample, sample.GOMAXPROCS, s.IOThreads, s.ReleaseThreads, s.WaitStrategy, pinned)
		c.accounting(subject, run.Load, nil)
	}
}

// fittedPlan checks the fitted setup against FitSetup for the recorded set.
func (c *checker) fittedPlan(ss *artifacts.Setups, seed, fitted artifacts.Setup) {
	allowed, err := affinity.ParseCPUList(ss.AllowedCPUs)
	if err != nil {
		c.add("setups fitted", artifacts.CheckPlan, false, artifacts.SetupsFile, "allowed CPUs %q: %v", ss.AllowedCPUs, err)
		return
	}
	want := plan.FitSetupOn(plan.TopologyOf(ss.Topology, allowed), seed)
	same := want.IOThreads == fitted.IOThreads && want.LoadThreads == fitted.LoadThreads &&
		want.WaitStrategy == fitted.WaitStrategy && want.Cores == fitted.Cores && want.Connections == fitted.Connections &&
		slices.Equal(want.IOCPUs, fitted.IOCPUs) && slices.Equal(want.LoadCPUs, fitted.LoadCPUs) &&
		slices.EqualFunc(want.PipelineCPUs, fitted.PipelineCPUs, func(a, b []int) bool { return slices.Equal(a, b) })
	detail := fmt.Sprintf("%s; FitSetup gives the same for %s", artifacts.DescribeSetup(fitted), ss.AllowedCPUs)
	if !same {
		detail = fmt.Sprintf("ran %s; FitSetup gives %s for %s", artifacts.DescribeSetup(fitted), artifacts.DescribeSetup(want), ss.AllowedCPUs)
	}
	c.add("setups fitted", artifacts.CheckPlan, same, artifacts.SetupsFile, "%s", detail)
}

// joinDetail is a summary followed by its problems, if any.
func joinDetail(summary string, problems []string) string {
	parts := problems
	if summary != "" {
		parts = append([]string{summary}, problems...)
	}
	return strings.Join(parts, "; ")
}

func orEmpty(sep, s string) string {
	if s == "" {
		return ""
	}
	return sep + s
}
