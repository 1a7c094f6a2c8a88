package gate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"weaseldb/loadtester"
)

// Why the rounds stopped (Result.StopReason).
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
	clientBound  int
	errorRuns    int
	uncleanRuns  int
	maxOtherCPU  float64
	diedEarly    bool
}

// measureRounds starts the servers, warms them up and measures rounds until
// the verdict is decided, --max-rounds is reached or the budget would be
// passed: Rounds to start, then two more at a time (one of each order).
func (m *measurement) measureRounds(ctx context.Context, sides []*sideRun) {
	m.sides = sides
	began := m.now()
	if !m.startAll(sides) || !m.warmUp(ctx, sides) {
		m.stopped(StopProblem, m.r.Problems[0].Detail)
		return
	}
	roundsBegan := m.now()
	target, limit := m.o.Rounds, m.o.maxRounds()
	if m.r.Mode == "update-baseline" {
		target = limit // a baseline is recorded once: as many runs as allowed
	}
	for round := 0; ; {
		for round < target {
			round++
			if !m.measureRound(ctx, round, sides) {
				m.stopped(StopProblem, m.r.Problems[0].Detail)
				return
			}
			m.r.Rounds = round
		}
		if m.r.Mode == "update-baseline" {
			m.stopped(StopMaxRounds, fmt.Sprintf("recorded %d runs", round))
			return
		}
		next := min(round+2, limit)
		overBudget := false
		if m.o.Budget > 0 && round < limit {
			perRound := m.now().Sub(roundsBegan) / time.Duration(round)
			overBudget = m.now().Sub(began)+perRound*time.Duration(next-round) > m.o.Budget
		}
		last := round >= limit || overBudget
		level := InterimLevel
		if m.o.interimLevel > 0 {
			level = m.o.interimLevel
		}
		if last {
			level = m.o.Level
		}
		d := m.judge(false, level)
		m.r.Looks = append(m.r.Looks, Look{Rounds: round, Level: level, Ratio: m.r.CI.Ratio, Low: m.r.CI.Low, High: m.r.CI.High, Reason: d.ReasonCode})
		switch {
		case d.ReasonCode != ReasonNoisy:
			m.stopped(StopDecided, fmt.Sprintf("%s after %d rounds", d.Verdict, round))
			return
		case round >= limit:
			m.stopped(StopMaxRounds, fmt.Sprintf("still undecided after %d rounds, the most --max-rounds allows", round))
			return
		case overBudget:
			m.stopped(StopBudget, fmt.Sprintf("still undecided after %d rounds in %.0f s; %d more would pass the %v budget",
				round, m.now().Sub(began).Seconds(), next-round, m.o.Budget))
			return
		}
		m.logf("undecided after %d rounds (ratio %.3f, CI [%.3f, %.3f]): measuring up to %d",
			round, m.r.CI.Ratio, m.r.CI.Low, m.r.CI.High, next)
		target = next
	}
}

func (m *measurement) stopped(reason, detail string) {
	m.r.StopReason, m.r.StopDetail = reason, detail
}

// startAll (re)starts every side's server.
func (m *measurement) startAll(sides []*sideRun) bool {
	for _, s := range sides {
		if s.server != nil {
			if err := s.server.stop(5 * time.Second); err != nil {
				m.r.Warnings = append(m.r.Warnings, fmt.Sprintf("server %s restart: %v", s.name, err))
			}
			s.server = nil
		}
		srv, err := m.lab.startServer(ServerSpec{Name: s.name, Binary: s.binary, ConfigData: s.config,
			Network: m.o.Network, Dir: m.dir, ReadyLine: m.o.ReadyLine, StartTimeout: m.o.StartTimeout, CPUs: m.plan.Server})
		if err != nil {
			m.fail(ReasonServerStart, "%v", err)
			return false
		}
		s.server, s.target = srv, srv.target().String()
		if !m.o.RestartEachRound {
			m.logf("server %s (%s) ready on %s", s.name, s.binary, s.target)
		}
	}
	return true
}

// warmUp gives each freshly started server one discarded run: first
// connections, page faults, heap growth and the Go scheduler's spin-up stay
// out of the measured rounds.
func (m *measurement) warmUp(ctx context.Context, sides []*sideRun) bool {
	if m.o.WarmupRun <= 0 {
		return true
	}
	for _, s := range sides {
		spec := m.loadSpec(s)
		spec.Duration, spec.Warmup = m.o.WarmupRun, 0
		res, err := m.lab.runLoad(ctx, spec)
		if !m.usable(s, "warm-up", res, err) {
			return false
		}
	}
	return true
}

func (m *measurement) loadSpec(s *sideRun) LoadSpec {
	m.seq++
	return LoadSpec{Binary: m.o.LoadTester, Target: s.server.target(), Duration: m.o.Duration, Warmup: m.o.Warmup,
		Concurrency: m.o.Concurrency, Threads: m.threads, CPUs: m.plan.Client, Path: m.o.Path, Extra: m.o.LoadArgs,
		JSONPath: filepath.Join(m.dir, fmt.Sprintf("run-%03d.json", m.seq))}
}

// measureRound runs one round, alternating the order (A B, B A, A B, ...)
// so that neither side always runs right after the other; the two runs of a
// round are one sample of the paired comparison.
func (m *measurement) measureRound(ctx context.Context, round int, sides []*sideRun) bool {
	order := sides
	if len(sides) == 2 && round%2 == 0 {
		order = []*sideRun{sides[1], sides[0]}
	}
	if m.o.RestartEachRound && round > 1 && !m.startAll(order) {
		return false
	}
	var line []string
	for _, s := range order {
		rec, ok := m.measureOne(ctx, round, s, sides)
		if !ok {
			return false
		}
		line = append(line, fmt.Sprintf("%s %s req/s", s.name, formatRPS(rec.RequestsPerSec)))
	}
	m.logf("round %d: %s", round, strings.Join(line, ", "))
	return true
}

func (m *measurement) measureOne(ctx context.Context, round int, s *sideRun, sides []*sideRun) (RunRecord, bool) {
	var other *sideRun
	for _, o := range sides {
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
	res, err := m.lab.runLoad(ctx, m.loadSpec(s))
	var exit *LoadExitError
	if err == nil || errors.As(err, &exit) {
		m.record(round, s, other, res, began, selfBefore, selfErr, otherBefore)
	}
	if !m.usable(s, fmt.Sprintf("round %d", round), res, err) {
		return RunRecord{}, false
	}
	rec := m.r.Runs[len(m.r.Runs)-1]
	s.samples = append(s.samples, res.RequestsPerSec)
	if res.ClientBound && !rec.ServerSaturated {
		s.clientBound++
	}
	return rec, true
}

// record adds the run to the result, with the CPU both servers used.
func (m *measurement) record(round int, s, other *sideRun, res loadtester.Result, began time.Time,
	selfBefore time.Duration, selfErr error, otherBefore time.Duration) {
	rec := RunRecord{Round: round, Side: s.name, RequestsPerSec: res.RequestsPerSec, Requests: res.Requests,
		Errors: res.Errors, Unfinished: res.Unfinished, Dropped: res.Dropped, ClientBound: res.ClientBound,
		ClientBoundWhy: res.ClientBoundReason, ClientCPU: res.ClientCPUFraction, ClientCPUS: res.ClientCPUS}
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
	m.r.Runs = append(m.r.Runs, rec)
}

// usable tells whether a run is a clean sample of the server's speed, and
// records why not: no result, the server died, failed requests, requests
// unfinished or dropped (issue 12: such a run is not judged as a sample),
// or load_tester failing for another reason.
func (m *measurement) usable(s *sideRun, what string, res loadtester.Result, err error) bool {
	var exit *LoadExitError
	if err != nil && !errors.As(err, &exit) {
		m.runFailed(s, what, err)
		return false
	}
	troubled := err != nil || res.Errors > 0 || !res.Clean()
	if !s.server.alive() || troubled && s.server.exitedWithin(500*time.Millisecond) {
		s.diedEarly = true
		m.fail(ReasonServerDied, "%s", s.server.diedReason())
		return false
	}
	switch {
	case res.Errors > 0:
		s.errorRuns++
		m.fail(ReasonErrors, "server %s: %d errors in %s (of %d requests)", s.name, res.Errors, what, res.Requests)
	case !res.Clean():
		s.uncleanRuns++
		due := res.Due
		if due == 0 {
			due = res.Requests + res.Unfinished + res.Dropped
		}
		m.fail(ReasonUnclean, "server %s, %s: %d unfinished and %d dropped of %d due requests: not a clean sample, not judged",
			s.name, what, res.Unfinished, res.Dropped, due)
	case exit != nil:
		m.fail(ReasonLoadFailed, "server %s, %s: %v", s.name, what, err)
	default:
		return true
	}
	return false
}

// runFailed records why a run gave no result: the server died, or
// load_tester failed.
func (m *measurement) runFailed(s *sideRun, what string, err error) {
	if s.server.exitedWithin(500 * time.Millisecond) {
		s.diedEarly = true
		m.fail(ReasonServerDied, "%s", s.server.diedReason())
		return
	}
	m.fail(ReasonLoadFailed, "server %s, %s: %v", s.name, what, err)
}

// samples returns A's (the baseline's, in baseline mode) and B's samples.
func (m *measurement) samples() (a, b []float64) {
	for _, s := range m.sides {
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

// judge computes the ratio and its interval at level over what was
// measured so far and gives the verdict, problems first. final records the
// client-bound check among the problems; a look only consults it.
func (m *measurement) judge(final bool, level float64) Decision {
	r := m.r
	a, b := m.samples()
	if r.Mode == "ab" {
		r.CI = PairedRatio(a, b, level)
	} else {
		r.CI = UnpairedRatio(a, b, level)
	}
	r.Rank = CompareRuns(a, b)
	problems := append(slices.Clone(r.Problems), m.clientBoundProblems()...)
	if final {
		r.Problems = problems
	}
	return DecideWithProblems(r.CI, Policy{Tolerance: m.o.Tolerance, NoiseOK: m.o.NoiseOK}, problems)
}

// clientBoundProblems turns a side measured mostly at the client's limit
// into a problem: its req/s says how fast the load tester is, not the server.
func (m *measurement) clientBoundProblems() []Problem {
	if m.o.AllowClientBound {
		return nil
	}
	var out []Problem
	for _, s := range m.sides {
		n := len(s.samples)
		if n > 0 && float64(s.clientBound) > m.o.MaxClientBoundFraction*float64(n) {
			out = append(out, Problem{Code: ReasonClientBound, Detail: fmt.Sprintf(
				"the load tester was the bottleneck in %d of %d runs of %s%s", s.clientBound, n, s.name, m.clientBoundWhy(s.name))})
		}
	}
	return out
}

// clientBoundWhy is ": <load_tester's reason>" from the side's last
// client-bound run, or "".
func (m *measurement) clientBoundWhy(side string) string {
	for i := len(m.r.Runs) - 1; i >= 0; i-- {
		if run := m.r.Runs[i]; run.Side == side && run.ClientBound && run.ClientBoundWhy != "" {
			return ": " + run.ClientBoundWhy
		}
	}
	return " (client_bound)"
}
