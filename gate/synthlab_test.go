package gate

// A lab without processes: servers are records, a load run returns what
// the test's model says, and a fake clock advances by each run's length.
// The rounds, the stopping rule, the statistics and every failure path run
// through it in microseconds; e2e_test.go and realbin_test.go keep a few
// real-process runs that prove the wiring.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"weaseldb/gate/launch"
	"weaseldb/gate/render"
	"weaseldb/gate/result"
	loadresult "weaseldb/loadtester/result"
)

// synthRun is what the model is told about one load run.
type synthRun struct {
	Side     string // "A" or "B"
	Scenario string // the scenario's name ("" without --scenarios)
	Instance int    // which start of this side's server for this scenario (1, 2, ...)
	Run      int    // runs of this instance so far, this one included
	Warmup   bool   // the discarded warm-up run
	Setup    bool   // a scenario's setup load
}

// synthOutcome is the model's answer: the result (an error instead, or a
// result with a *loadrun.ExitError), the CPU the server used, and whether the
// server dies during the run.
type synthOutcome struct {
	Result    loadresult.Result
	Err       error
	ServerCPU float64 // cores while measured; default 0.5
	Dies      bool
}

type synthLab struct {
	clock    time.Time
	model    func(synthRun) synthOutcome
	startErr func(side string, instance int) error
	starts   map[string]int          // by side, every scenario's
	instance map[string]int          // by side and scenario
	servers  map[string]*synthServer // by target path
	order    []string                // sides of the measured runs, in order
	loads    []launch.LoadSpec       // every load run, in order
}

func newSynthLab(model func(synthRun) synthOutcome) *synthLab {
	if model == nil {
		model = steady(100000, 100000)
	}
	return &synthLab{clock: time.Unix(1_700_000_000, 0), model: model, starts: map[string]int{}, instance: map[string]int{},
		servers: map[string]*synthServer{}}
}

func (l *synthLab) now() time.Time { return l.clock }

func (l *synthLab) startServer(spec launch.ServerSpec) (server, error) {
	l.clock = l.clock.Add(20 * time.Millisecond)
	l.starts[spec.Name]++
	key := spec.Name + "/" + spec.Scenario
	l.instance[key]++
	n := l.instance[key]
	if l.startErr != nil {
		if err := l.startErr(spec.Name, n); err != nil {
			return nil, err
		}
	}
	s := &synthServer{lab: l, side: spec.Name, scenario: spec.Scenario, instance: n, path: fmt.Sprintf("synth/%s/%d", key, n)}
	l.servers[s.path] = s
	return s, nil
}

func (l *synthLab) tracesCPU() bool { return false }

func (l *synthLab) runLoad(ctx context.Context, spec launch.LoadSpec) (loadresult.Result, error) {
	if ctx.Err() != nil {
		return loadresult.Result{}, fmt.Errorf("interrupted")
	}
	s := l.servers[spec.Target.Path]
	if s == nil || s.dead {
		return loadresult.Result{}, fmt.Errorf("load_tester: exit status 1: connect: no such server %s", spec.Target.Path)
	}
	s.runs++
	l.loads = append(l.loads, spec)
	wall := spec.Warmup + spec.Duration + 50*time.Millisecond
	l.clock = l.clock.Add(wall)
	out := l.model(synthRun{Side: s.side, Scenario: s.scenario, Instance: s.instance, Run: s.runs,
		Warmup: spec.Phase == launch.PhaseWarmup, Setup: spec.Phase == launch.PhaseSetup})
	if out.ServerCPU == 0 {
		out.ServerCPU = 0.5
	}
	s.busy += time.Duration(out.ServerCPU * float64(wall))
	if out.Dies {
		s.dead = true
	}
	if spec.Phase == launch.PhaseMeasured {
		l.order = append(l.order, s.side)
	}
	return out.Result, out.Err
}

type synthServer struct {
	lab      *synthLab
	side     string
	scenario string
	instance int
	path     string
	runs     int
	busy     time.Duration
	dead     bool
	stopped  bool
}

func (s *synthServer) target() launch.Target           { return launch.Target{Network: "unix", Path: s.path} }
func (s *synthServer) alive() bool                     { return !s.dead && !s.stopped }
func (s *synthServer) ExitedWithin(time.Duration) bool { return !s.alive() }
func (s *synthServer) cpu() (time.Duration, error)     { return s.busy, nil }
func (s *synthServer) diedReason() string {
	return fmt.Sprintf("server %s exited during the runs (status 3): synthetic crash", s.side)
}
func (s *synthServer) stop(time.Duration) error {
	if s.dead {
		return fmt.Errorf("server %s exited with status 3", s.side)
	}
	s.stopped = true
	return nil
}

// cleanResult is a clean load_tester result at rps.
func cleanResult(rps float64) loadresult.Result {
	n := int64(rps)
	return loadresult.Result{Version: 1, Requests: n, Successes: n, Due: n, Answered: n, DurationS: 1, RequestsPerSec: rps}
}

// steady serves A at a and B at b, every run.
func steady(a, b float64) func(synthRun) synthOutcome {
	return func(r synthRun) synthOutcome {
		if r.Side == "A" {
			return synthOutcome{Result: cleanResult(a)}
		}
		return synthOutcome{Result: cleanResult(b)}
	}
}

// noisy is a model of a shared machine: each server process has a speed of
// its own (log-normal, sd process), each round a drift both sides share
// (sd drift), each run its own noise (sd run), and a run now and then hit
// by a neighbour's burst. B is slower by slowdown.
type noisy struct {
	rng                 *rand.Rand
	slowdown            float64
	process, drift, run float64
	burstP, burst       float64
	speeds              map[string]float64
	drifts              map[int]float64
}

func newNoisy(seed uint64, slowdown, process, drift, run float64) *noisy {
	return &noisy{rng: rand.New(rand.NewPCG(seed, seed^0x5eed)), slowdown: slowdown, process: process, drift: drift, run: run,
		burstP: 0.05, burst: 0.7, speeds: map[string]float64{}, drifts: map[int]float64{}}
}

func (n *noisy) outcome(r synthRun) synthOutcome {
	key := fmt.Sprintf("%s/%d", r.Side, r.Instance)
	if _, ok := n.speeds[key]; !ok {
		n.speeds[key] = math.Exp(n.rng.NormFloat64() * n.process)
	}
	if _, ok := n.drifts[r.Instance]; !ok {
		n.drifts[r.Instance] = math.Exp(n.rng.NormFloat64() * n.drift)
	}
	v := 100000 * n.speeds[key] * n.drifts[r.Instance] * math.Exp(n.rng.NormFloat64()*n.run)
	if n.rng.Float64() < n.burstP {
		v *= n.burst
	}
	if r.Side == "B" {
		v *= 1 - n.slowdown
	}
	return synthOutcome{Result: cleanResult(v)}
}

// synthOptions are the defaults aimed at a synthetic lab.
func synthOptions(t testing.TB) Options {
	t.Helper()
	o := DefaultOptions()
	o.A, o.B = "synth/weaseldb-a", "synth/weaseldb-b"
	o.LoadTester = os.Args[0] // it must exist; the synthetic lab never runs it
	o.Pin = "off"
	// The synthetic models were written for strict alternation; the
	// random order has its own tests.
	o.Order = OrderAlternate
	return o
}

// oneRun is a one-workload run's result read through its one scenario
// (the judgement the tests look at), with the whole result beside it.
type oneRun struct {
	*result.ScenarioResult
	Run *result.Result
}

// one is r's one scenario, checked to be the only one and to carry the
// run's verdict.
func one(t testing.TB, r *result.Result) oneRun {
	t.Helper()
	if len(r.Scenarios) != 1 || r.Scenarios[0].Name != result.ImplicitScenarioName {
		t.Fatalf("a one-workload run has %d scenarios (%+v), want one named %s", len(r.Scenarios), r.Scenarios, result.ImplicitScenarioName)
	}
	s := &r.Scenarios[0]
	if s.Decision != r.Decision || s.ExitCode != r.ExitCode || r.DecidedBy != "" {
		t.Fatalf("the run's decision %+v (exit %d, by %q) is not its scenario's %+v (exit %d)", r.Decision, r.ExitCode, r.DecidedBy, s.Decision, s.ExitCode)
	}
	return oneRun{ScenarioResult: s, Run: r}
}

// runSynth runs the gate against the lab and logs its table.
func runSynth(t testing.TB, o Options, l *synthLab) oneRun {
	t.Helper()
	r := run(context.Background(), o, nil, l, l.now)
	if tb, ok := t.(*testing.T); ok && testing.Verbose() {
		var table strings.Builder
		render.WriteTable(&table, r)
		tb.Logf("table:\n%s", table.String())
	}
	return one(t, r)
}
