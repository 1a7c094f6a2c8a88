package gate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"weaseldb/gate/launch"
	"weaseldb/gate/result"
	"weaseldb/gate/verdict"
	"weaseldb/internal/loadrun"
	loadresult "weaseldb/loadtester/result"
)

// Why the rounds stopped (Judgement.StopReason).
const (
	StopDecided   = "decided"    // the rule gave a verdict (or a check, e.g. client-bound, did)
	StopMaxRounds = "max_rounds" // still undecided at --max-rounds
	StopBudget    = "budget"     // still undecided, and two more rounds would pass --budget
	StopProblem   = "problem"    // a server or the load tester failed, or the input was bad
)

type sideRun struct {
	name, binary string
	label        string // the binary as the result names it
	config       []byte
	server       server
	target       string // where its last server listened
	samples      []float64
	cpuPerReq    []float64 // server CPU ns per request of each measured window (NaN: unread)
	clientBound  int
	errorRuns    int
	uncleanRuns  int
	maxOtherCPU  float64
	diedEarly    bool
}

// measureRounds measures every scenario's rounds until each is decided,
// --max-rounds is reached or the budget would be passed: Rounds to start,
// then, for the scenarios still undecided, two more at a time (one of each
// order). A round runs every scenario still measuring, in the file's
// order, each on its own fresh pair of servers.
func (m *measurement) measureRounds(ctx context.Context) {
	began := m.now()
	target, limit := m.o.Rounds, m.o.maxRounds()
	if m.mode == result.ModeUpdateBaseline {
		target = limit // a baseline is recorded once: as many runs as allowed
	}
	defer m.expectLeft(0, 0)
	for round := 0; ; {
		for round < target {
			round++
			for _, sc := range m.active() {
				if sc.done { // interrupted while an earlier scenario of the round ran
					continue
				}
				if !m.measureRound(ctx, sc, round) {
					m.stopped(sc, StopProblem, sc.r.Problems[0].Detail)
					if ctx.Err() != nil {
						m.interrupted()
					}
					continue
				}
				sc.r.Rounds = round
			}
			if len(m.active()) == 0 {
				return
			}
			m.expectLeft(round, target)
		}
		active := m.active()
		if m.mode == result.ModeUpdateBaseline {
			m.stopped(active[0], StopMaxRounds, fmt.Sprintf("recorded %d runs", round))
			return
		}
		next := min(round+2, limit)
		m.look(active, round, next, limit, began)
		if len(m.active()) == 0 {
			return
		}
		target = next
		m.expectLeft(round, target)
	}
}

// look judges every active scenario after round rounds: a scenario whose
// rule decides stops; one still undecided gets the rounds up to next,
// unless this is its last look. A look is the last for a scenario when
// round is the limit, or when the next rounds of the scenarios that would
// go on (the undecided ones, with it) would end past the budget; the last
// look uses --level, the others InterimLevel (Haybittle-Peto). The budget
// counts only the scenarios that go on: a decided scenario costs nothing
// more, so four decided scenarios do not starve one undecided one.
func (m *measurement) look(active []*scenarioRun, round, next, limit int, began time.Time) {
	interim := InterimLevel
	if m.o.interimLevel > 0 {
		interim = m.o.interimLevel
	}
	// Tentative verdicts at the interim level say which scenarios go on.
	tentative := make([]verdict.Decision, len(active))
	goOn := map[*scenarioRun]bool{}
	for i, sc := range active {
		tentative[i] = m.judge(sc, false, interim)
		if tentative[i].ReasonCode == verdict.ReasonNoisy {
			goOn[sc] = true
		}
	}
	perRound := func(sc *scenarioRun) time.Duration { return sc.spent / time.Duration(max(sc.r.Rounds, 1)) }
	var more time.Duration
	for sc := range goOn {
		more += perRound(sc) * time.Duration(next-round)
	}
	elapsed := m.now().Sub(began)
	for i, sc := range active {
		overBudget := false
		if m.o.Budget > 0 && round < limit {
			own := more
			if !goOn[sc] {
				own += perRound(sc) * time.Duration(next-round)
			}
			overBudget = elapsed+own > m.o.Budget
		}
		level, d := interim, tentative[i]
		if round >= limit || overBudget {
			level = m.o.Level
			d = m.judge(sc, false, level)
		}
		r := sc.r
		r.Looks = append(r.Looks, result.Look{Rounds: round, Level: level, Ratio: r.CI.Ratio, Low: r.CI.Low, High: r.CI.High, Reason: d.ReasonCode})
		switch {
		case d.ReasonCode != verdict.ReasonNoisy:
			m.stopped(sc, StopDecided, fmt.Sprintf("%s after %d rounds", d.Verdict, round))
		case round >= limit:
			m.stopped(sc, StopMaxRounds, fmt.Sprintf("still undecided after %d rounds, the most --max-rounds allows", round))
		case overBudget:
			m.stopped(sc, StopBudget, fmt.Sprintf("still undecided after %d rounds in %.0f s; %d more would pass the %v budget",
				round, elapsed.Seconds(), next-round, m.o.Budget))
		default:
			m.logf(sc, "undecided after %d rounds (ratio %.3f, CI [%.3f, %.3f]): measuring up to %d",
				round, r.CI.Ratio, r.CI.Low, r.CI.High, next)
		}
	}
}

// active are the scenarios still measuring.
func (m *measurement) active() []*scenarioRun {
	var out []*scenarioRun
	for _, sc := range m.scenarios {
		if !sc.done {
			out = append(out, sc)
		}
	}
	return out
}

// stopped ends a scenario's rounds and says why.
func (m *measurement) stopped(sc *scenarioRun, reason, detail string) {
	sc.r.StopReason, sc.r.StopDetail = reason, detail
	sc.done = true
}

// interrupted stops every scenario still measuring: the run was cancelled
// (SIGINT), and what each had measured is judged as it stands.
func (m *measurement) interrupted() {
	for _, sc := range m.active() {
		m.fail(sc, verdict.ReasonLoadFailed, "interrupted")
		m.stopped(sc, StopProblem, "interrupted")
	}
}

// startAll (re)starts the scenario's servers, in order.
func (m *measurement) startAll(sc *scenarioRun, order []*sideRun) bool {
	m.stopAll(sc, "restart")
	for _, s := range order {
		srv, err := m.lab.startServer(launch.ServerSpec{Name: s.name, Binary: s.binary, ConfigData: s.config, Network: m.o.Network,
			Dir: m.dir, ReadyLine: m.o.ReadyLine, StartTimeout: m.o.StartTimeout, CPUs: m.plan.Server, Scenario: m.scenarioTag(sc)})
		if err != nil {
			m.fail(sc, verdict.ReasonServerStart, "%v", err)
			return false
		}
		s.server, s.target = srv, srv.target().String()
		if !m.o.RestartEachRound {
			m.logf(sc, "server %s (%s) ready on %s", s.name, s.binary, s.target)
		}
	}
	return true
}

// scenarioTag is the scenario's name in server file names ("" without
// --scenarios, so those keep their names).
func (m *measurement) scenarioTag(sc *scenarioRun) string {
	if !m.multi {
		return ""
	}
	return sc.sc.Name
}

// setUp runs the scenario's setup loads on each freshly started server,
// unmeasured: the state its measured load needs (the ids a status load
// asks for). A setup that fails, errs or holds requests is a problem like
// a measured run's.
func (m *measurement) setUp(ctx context.Context, sc *scenarioRun, order []*sideRun) bool {
	for _, s := range order {
		for i, u := range sc.sc.Setup {
			spec := m.loadSpec(sc, s, u.LoadShape, launch.PhaseSetup)
			spec.Duration, spec.Warmup = u.Duration.Duration, 0
			res, err := m.lab.runLoad(ctx, spec)
			if !m.usable(sc, s, fmt.Sprintf("setup %d", i+1), res, err) {
				return false
			}
		}
	}
	return true
}

// warmUp gives each freshly started server one discarded run: first
// connections, page faults, heap growth and the Go scheduler's spin-up stay
// out of the measured rounds.
func (m *measurement) warmUp(ctx context.Context, sc *scenarioRun) bool {
	if m.o.WarmupRun <= 0 {
		return true
	}
	for _, s := range sc.sides {
		spec := m.loadSpec(sc, s, sc.sc.LoadShape, launch.PhaseWarmup)
		spec.Duration, spec.Warmup = m.o.WarmupRun, 0
		res, err := m.lab.runLoad(ctx, spec)
		if !m.usable(sc, s, "warm-up", res, err) {
			return false
		}
	}
	return true
}

// loadSpec is one load_tester run of shape against the side's server.
func (m *measurement) loadSpec(sc *scenarioRun, s *sideRun, shape result.LoadShape, phase string) launch.LoadSpec {
	m.seq++
	name := fmt.Sprintf("run-%03d.json", m.seq)
	if m.multi {
		name = fmt.Sprintf("run-%03d-%s-%s-%s.json", m.seq, sc.sc.Name, s.name, phase)
	}
	return launch.LoadSpec{Binary: m.o.LoadTester, Target: s.server.target(), Duration: m.o.Duration, Warmup: m.o.Warmup,
		Concurrency: shape.Concurrency, Threads: m.threads, CPUs: m.plan.Client, Path: shape.Path, Extra: launch.ShapeArgs(shape),
		JSONPath: filepath.Join(m.dir, name), Scenario: sc.sc.Name, Phase: phase}
}

// measureRound runs one round of a scenario, alternating the order (A B,
// B A, A B, ...) so that neither side always runs right after the other;
// the two runs of a round are one sample of the paired comparison. Its
// first round runs on the servers its warm-up started; later ones on
// fresh servers (unless --restart=false), which are stopped again at the
// round's end so that only the pair being measured exists.
func (m *measurement) measureRound(ctx context.Context, sc *scenarioRun, round int) bool {
	order := sc.sides
	if len(order) == 2 && m.o.swapped(round) {
		order = []*sideRun{order[1], order[0]}
	}
	if !sc.warm {
		if !m.startAll(sc, sc.sides) || !m.setUp(ctx, sc, sc.sides) || !m.warmUp(ctx, sc) {
			return false
		}
		sc.warm = true
	} else if m.o.RestartEachRound {
		began := m.now()
		ok := m.startAll(sc, order) && m.setUp(ctx, sc, order)
		sc.spent += m.now().Sub(began)
		if !ok {
			return false
		}
	}
	began := m.now()
	defer func() { sc.spent += m.now().Sub(began) }()
	var line []string
	for _, s := range order {
		rec, ok := m.measureOne(ctx, sc, round, s)
		if !ok {
			return false
		}
		line = append(line, fmt.Sprintf("%s %s", s.name, result.FormatSample(sc.sc.Metric, rec.sample)))
	}
	if m.o.RestartEachRound {
		m.stopAll(sc, "stop")
	}
	unit := ""
	if sc.sc.Metric == result.MetricRPS {
		unit = " req/s"
	}
	m.logf(sc, "round %d: %s", round, strings.Join(line, unit+", ")+unit)
	return true
}

// measured is a run's record and its sample.
type measured struct {
	result.RunRecord
	sample float64
}

func (m *measurement) measureOne(ctx context.Context, sc *scenarioRun, round int, s *sideRun) (measured, bool) {
	var other *sideRun
	for _, o := range sc.sides {
		if o != s {
			other = o
		}
	}
	var otherBefore time.Duration
	if other != nil {
		otherBefore, _ = other.server.cpu()
	}
	selfBefore, selfErr := s.server.cpu()
	began := m.now()
	var trace *cpuTrace
	if m.lab.tracesCPU() {
		trace = startCPUTrace(s.server.cpu, time.Now)
	}
	res, err := m.lab.runLoad(ctx, m.loadSpec(sc, s, sc.sc.LoadShape, launch.PhaseMeasured))
	if trace != nil {
		trace.stop()
	}
	var exit *loadrun.ExitError
	if err == nil || errors.As(err, &exit) {
		m.record(sc, round, s, other, res, began, selfBefore, selfErr, otherBefore)
		rec := &sc.r.Runs[len(sc.r.Runs)-1]
		if ns, cores, ok := windowCPU(trace, res); ok {
			rec.ServerCPUNSPerRequest, rec.ServerCPUWindow = ns, cores
		}
	}
	if !m.usable(sc, s, fmt.Sprintf("round %d", round), res, err) {
		return measured{}, false
	}
	v, err := sc.sc.sample(res)
	if err != nil {
		m.fail(sc, verdict.ReasonLoadFailed, "server %s, round %d: %v", s.name, round, err)
		return measured{}, false
	}
	rec := sc.r.Runs[len(sc.r.Runs)-1]
	s.samples = append(s.samples, v)
	s.cpuPerReq = append(s.cpuPerReq, cmp.Or(rec.ServerCPUNSPerRequest, math.NaN()))
	if res.ClientBound && !rec.ServerSaturated {
		s.clientBound++
	}
	return measured{rec, v}, true
}

// record adds the run to the result, with the CPU both servers used.
func (m *measurement) record(sc *scenarioRun, round int, s, other *sideRun, res loadresult.Result, began time.Time,
	selfBefore time.Duration, selfErr error, otherBefore time.Duration) {
	rec := result.RunRecord{Round: round, Side: s.name, RequestsPerSec: res.RequestsPerSec, Requests: res.Requests,
		Errors: res.Errors, Unfinished: res.Unfinished, Dropped: res.Dropped, ClientBound: res.ClientBound,
		ClientBoundWhy: res.ClientBoundReason, ClientCPU: res.ClientCPUFraction, ClientCPUS: res.ClientCPUS,
		P50NS: res.Latency.P50, P99NS: res.Latency.P99}
	wall := m.now().Sub(began).Seconds()
	if after, err := s.server.cpu(); err == nil && selfErr == nil && wall > 0 {
		rec.ServerCPU = (after - selfBefore).Seconds() / wall
		rec.ServerSaturated = m.plan.Pinned() && rec.ServerCPU >= saturatedServerCPU*float64(len(m.plan.Server))
	}
	if other != nil && wall > 0 {
		if after, err := other.server.cpu(); err == nil {
			rec.OtherServerCPU = (after - otherBefore).Seconds() / wall
			s.maxOtherCPU = math.Max(s.maxOtherCPU, rec.OtherServerCPU)
		}
	}
	sc.r.Runs = append(sc.r.Runs, rec)
}

// usable tells whether a run is a clean sample of the server's speed, and
// records why not: no result, the server died, failed requests, requests
// unfinished or dropped (issue 12: such a run is not judged as a sample),
// or load_tester failing for another reason.
func (m *measurement) usable(sc *scenarioRun, s *sideRun, what string, res loadresult.Result, err error) bool {
	var exit *loadrun.ExitError
	if err != nil && !errors.As(err, &exit) {
		m.runFailed(sc, s, what, err)
		return false
	}
	troubled := err != nil || res.Errors > 0 || !res.Clean()
	if !s.server.alive() || troubled && s.server.ExitedWithin(500*time.Millisecond) {
		s.diedEarly = true
		m.fail(sc, verdict.ReasonServerDied, "%s", s.server.diedReason())
		return false
	}
	switch {
	case res.Errors > 0:
		s.errorRuns++
		m.fail(sc, verdict.ReasonErrors, "server %s: %d errors in %s (of %d requests)%s", s.name, res.Errors, what, res.Requests, launch.StatusNote(res))
	case !res.Clean():
		s.uncleanRuns++
		due := res.Due
		if due == 0 {
			due = res.Requests + res.Unfinished + res.Dropped
		}
		m.fail(sc, verdict.ReasonUnclean, "server %s, %s: %d unfinished and %d dropped of %d due requests: not a clean sample, not judged",
			s.name, what, res.Unfinished, res.Dropped, due)
	case exit != nil:
		m.fail(sc, verdict.ReasonLoadFailed, "server %s, %s: %v", s.name, what, err)
	default:
		return true
	}
	return false
}

// runFailed records why a run gave no result: the server died, or
// load_tester failed.
func (m *measurement) runFailed(sc *scenarioRun, s *sideRun, what string, err error) {
	if s.server.ExitedWithin(500 * time.Millisecond) {
		s.diedEarly = true
		m.fail(sc, verdict.ReasonServerDied, "%s", s.server.diedReason())
		return
	}
	m.fail(sc, verdict.ReasonLoadFailed, "server %s, %s: %v", s.name, what, err)
}

// samples returns A's (the baseline's, in baseline mode) and B's samples.
func (m *measurement) samples(sc *scenarioRun) (a, b []float64) {
	for _, s := range sc.sides {
		if s.name == "A" {
			a = s.samples
		} else {
			b = s.samples
		}
	}
	if m.baseline != nil {
		a = m.baseline.SamplesRPS
	}
	return a, b
}

// InterimLevel is the confidence level of the interval at a look after
// which more rounds may follow; the last look uses --level. Stopping at the
// first of several looks that each allow a 5% error would add those errors
// up (on the synthetic noisy machine of power_test.go, six looks at 95%
// took A/A false alarms from 2% to 5%); a strict interim level lets only a
// clear verdict stop the rounds early and keeps the overall rates near the
// last look's (the Haybittle-Peto rule of clinical trials).
const InterimLevel = 0.99
