package peertable

import (
	"strings"
	"testing"
)

// issue53Samples: three rounds of the client rows, shaped as
// compare_peers.sh records them (figures of the order issue 53 measured):
// epoll load_tester at 0.94× wrk's CPU unpipelined, io_uring at 0.55×;
// 16 deep io_uring cheaper but slower than wrk; wrk2 not installed; h2
// load_tester at 0.65× h2load's CPU and more req/s; system calls counted
// for both engines unpipelined.
func issue53Samples() []Sample {
	var out []Sample
	for round := 1; round <= 3; round++ {
		out = append(out,
			load("client", "closed", "load_tester", round, 100_000, 1, 100_000*6800),
			load("client", "closed", "load_tester_io_uring", round, 100_000, 1, 100_000*3960),
			load("client", "closed", "wrk", round, 100_000, 1, 100_000*7200),
			load("client", "closed_pipelined16", "load_tester_io_uring", round, 900_000, 1, 900_000*300),
			load("client", "closed_pipelined16", "wrk", round, 1_000_000, 1, 1_000_000*700),
			load("client", "open_loop", "load_tester", round, 50_000, 1, 50_000*10_200),
			load("client", "h2", "load_tester", round, 110_000, 1, 110_000*6500),
			load("client", "h2", "h2load", round, 100_000, 1, 100_000*10_000),
		)
	}
	return append(out,
		Sample{Kind: KindSkip, Side: "client", Scenario: "open_loop", Peer: "wrk2", Note: "wrk2 not installed"},
		Sample{Kind: KindSkip, Side: "client", Scenario: "closed", Peer: "load_tester_io_uring", Metric: MetricInstructions,
			Note: "not counted: valgrind 3.19 hangs in io_uring_enter"},
		count(KindSyscalls, "client", "closed", "load_tester", 10_000, 23_200),
		count(KindSyscalls, "client", "closed", "load_tester_io_uring", 10_000, 700),
	)
}

func TestIssue53GoalsJudged(t *testing.T) {
	tab, err := Build(issue53Samples(), Machine{}, Run{Rounds: 3, ClientTarget: TargetWeaseldb})
	if err != nil {
		t.Fatal(err)
	}
	verdicts := map[Goal]GoalVerdict{}
	for _, v := range tab.Goals {
		verdicts[v.Goal] = v
	}
	goal := func(scen, subject, peer, metric, op string, bar float64) Goal {
		return Goal{Issue: issue53, Scenario: scen, Subject: subject, Peer: peer, Metric: metric, Op: op, Bar: bar}
	}
	for _, c := range []struct {
		name    string
		goal    Goal
		verdict string
		figure  *float64
	}{
		{"epoll unpipelined CPU", goal("closed", "load_tester", "wrk", MetricCPU, "<=", 0.6), VerdictNotMet, ptr(6800.0 / 7200)},
		{"io_uring unpipelined CPU", goal("closed", "load_tester_io_uring", "wrk", MetricCPU, "<=", 0.6), VerdictMet, ptr(0.55)},
		{"io_uring unpipelined req/s", goal("closed", "load_tester_io_uring", "wrk", MetricRPS, ">=", 1.0), VerdictMet, ptr(1)},
		{"io_uring 16 deep CPU", goal("closed_pipelined16", "load_tester_io_uring", "wrk", MetricCPU, "<=", 0.6), VerdictMet, ptr(300.0 / 700)},
		{"io_uring 16 deep req/s", goal("closed_pipelined16", "load_tester_io_uring", "wrk", MetricRPS, ">=", 1.0), VerdictNotMet, ptr(0.9)},
		{"epoll 16 deep not run", goal("closed_pipelined16", "load_tester", "wrk", MetricCPU, "<=", 0.6), VerdictNotMeasured, nil},
		{"open loop without wrk2", Goal{Issue: issue53, Scenario: "open_loop", Subject: "load_tester", Peer: "wrk2", Metric: MetricCPU, Op: "<=", Bar: 0.6, HoldRate: true}, VerdictNotMeasured, nil},
		{"open loop has no req/s bar", goal("open_loop", "load_tester", "wrk2", MetricRPS, ">=", 1.0), "", nil},
		{"https not run", goal("https11", "load_tester_io_uring", "wrk", MetricCPU, "<=", 0.6), VerdictNotMeasured, nil},
		{"h2 CPU at 0.7", goal("h2", "load_tester", "h2load", MetricCPU, "<=", 0.7), VerdictMet, ptr(0.65)},
		{"h2 req/s", goal("h2", "load_tester", "h2load", MetricRPS, ">=", 1.0), VerdictMet, ptr(1.1)},
		{"epoll system calls", goal("closed", "load_tester", "", MetricSyscalls, "<=", 0.3), VerdictNotMet, ptr(2.32)},
		{"io_uring system calls", goal("closed", "load_tester_io_uring", "", MetricSyscalls, "<=", 0.3), VerdictMet, ptr(0.07)},
		{"h2 system calls not a goal", goal("h2", "load_tester", "", MetricSyscalls, "<=", 0.3), "", nil},
	} {
		v, ok := verdicts[c.goal]
		if c.verdict == "" {
			if ok {
				t.Errorf("%s: judged, but is no goal of issue 53", c.name)
			}
			continue
		}
		if !ok {
			t.Errorf("%s: not among Goals", c.name)
			continue
		}
		if v.Verdict != c.verdict {
			t.Errorf("%s: %s, want %s", c.name, v.Verdict, c.verdict)
		}
		if (v.Ratio == nil) != (c.figure == nil) || (v.Ratio != nil && !near(*v.Ratio, *c.figure)) {
			t.Errorf("%s: figure %v, want %v", c.name, deref(v.Ratio), deref(c.figure))
		}
	}
}

func TestIssue53GoalsRendered(t *testing.T) {
	tab, err := Build(issue53Samples(), Machine{}, Run{Rounds: 3, ClientTarget: TargetWeaseldb})
	if err != nil {
		t.Fatal(err)
	}
	md := Markdown(tab)
	for _, want := range []string{
		"**Client: closed loop unpipelined against weaseldb**",
		"**Client: h2 (10 connections × 10 streams) against nginx**",
		"| load_tester_io_uring / wrk |",
		"| load_tester / load_tester_io_uring |",
		"| 53.5 | load_tester_io_uring / wrk CPU per request, closed ≤ 0.60× | 0.55× | met |",
		"| 53.5 | load_tester / wrk CPU per request, closed ≤ 0.60× | 0.94× | **not met** |",
		"| 53.5 | load_tester / wrk2 CPU per request, open_loop ≤ 0.60× | – | **not measured** |",
		"| 53.5 | load_tester_io_uring system calls per request, closed ≤ 0.30 | 0.07 | met |",
		"| 53.5 | load_tester system calls per request, closed ≤ 0.30 | 2.32 | **not met** |",
		"| 53.5 | load_tester / h2load CPU per request, h2 ≤ 0.70× | 0.65× | met |",
		"| 42.3 | load_tester / wrk CPU per request, closed ≤ 0.80× | 0.94× | **not met** |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestScenarioHeading(t *testing.T) {
	for _, c := range []struct {
		scenario, target, want string
	}{
		{"closed", "", "closed loop unpipelined against nginx"},
		{"closed", TargetNginx, "closed loop unpipelined against nginx"},
		{"open_loop", TargetWeaseldb, "open loop at a fixed rate against weaseldb"},
		{"https11", TargetWeaseldb, "HTTPS/1.1 (TLS 1.3) against nginx"},
		{"ok", TargetWeaseldb, "GET /ok unpipelined (wrk -t1, closed loop)"},
	} {
		var sc Scenario
		for _, s := range Scenarios {
			if s.Name == c.scenario {
				sc = s
			}
		}
		if got := sc.heading(c.target); got != c.want {
			t.Errorf("%s against %q: %q, want %q", c.scenario, c.target, got, c.want)
		}
	}
}
