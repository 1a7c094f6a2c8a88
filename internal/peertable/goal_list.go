package peertable

// Goals are issue 42 item 3's, for weaseldb with its defaults (what "fast
// by default" promises) and for load_tester, then issue 53 item 5's, for
// load_tester on each engine, then issue 54 item 7's, for the server's own
// work: they are benchmarks, not tests, judged on whatever target the
// client rows ran against (docs/anchors.md).
var Goals = append(append(issue42Goals, issue53Goals()...), issue54Goals...)

// issue54Goals: weaseldb's instructions per request under callgrind (the
// cost tier's filter), and its server CPU per request against nginx
// unpipelined and gnet 16 deep (req/s 16 deep is bounded by wrk -t1 on one
// CPU, so CPU per request is the measure there).
var issue54Goals = []Goal{
	{Issue: issue54, Scenario: "ok", Subject: "weaseldb", Metric: MetricInstructions, Op: "<=", Bar: 3750},
	{Issue: issue54, Scenario: "ok_pipelined16", Subject: "weaseldb", Metric: MetricInstructions, Op: "<=", Bar: 1400},
	{Issue: issue54, Scenario: "ok", Subject: "weaseldb", Peer: "nginx", Metric: MetricCPU, Op: "<=", Bar: 0.9},
	{Issue: issue54, Scenario: "ok_pipelined16", Subject: "weaseldb", Peer: "gnet", Metric: MetricCPU, Op: "<=", Bar: 1.0},
}

var issue42Goals = []Goal{
	{Issue: issue42, Scenario: "ok_pipelined16", Subject: "weaseldb", Peer: "gnet", Metric: MetricRPS, Op: ">=", Bar: 1.2},
	{Issue: issue42, Scenario: "ok_pipelined16", Subject: "weaseldb", Peer: "fasthttp", Metric: MetricRPS, Op: ">=", Bar: 1.5},
	{Issue: issue42, Scenario: "ok_pipelined16", Subject: "weaseldb", Peer: "gnet", Metric: MetricInstructions, Op: "<", Bar: 1.0},
	{Issue: issue42, Scenario: "ok", Subject: "weaseldb", Peer: "nginx", Metric: MetricRPS, Op: ">=", Bar: 1.0},
	{Issue: issue42, Scenario: "ok", Subject: "weaseldb", Peer: "nginx", Metric: MetricCPU, Op: "<=", Bar: 0.9},
	{Issue: issue42, Scenario: "closed", Subject: "load_tester", Peer: "wrk", Metric: MetricCPU, Op: "<=", Bar: 0.8},
	{Issue: issue42, Scenario: "closed_pipelined16", Subject: "load_tester", Peer: "wrk", Metric: MetricCPU, Op: "<=", Bar: 0.8},
	{Issue: issue42, Scenario: "open_loop", Subject: "load_tester", Peer: "wrk2", Metric: MetricCPU, Op: "<=", Bar: 0.8},
	{Issue: issue42, Scenario: "https11", Subject: "load_tester", Peer: "wrk", Metric: MetricCPU, Op: "<=", Bar: 0.8},
	{Issue: issue42, Scenario: "h2", Subject: "load_tester", Peer: "h2load", Metric: MetricRPS, Op: ">=", Bar: 1.0},
	{Issue: issue42, Scenario: "h2", Subject: "load_tester", Peer: "h2load", Metric: MetricCPU, Op: "<=", Bar: 0.8},
}

const (
	issue42 = "42.3"
	issue53 = "53.5"
	issue54 = "54.7"
)

// issue53Goals: per engine, client CPU per request against each peer's at
// no fewer req/s (in the open loop, both clients holding the rate in
// place of the req/s bar: at a fixed rate the req/s are equal), and the
// unpipelined closed loop's system calls per request, a figure of its own.
func issue53Goals() []Goal {
	bars := []struct {
		scenario, peer string
		cpu            float64
		openLoop       bool
	}{
		{"closed", "wrk", 0.6, false},
		{"closed_pipelined16", "wrk", 0.6, false},
		{"open_loop", "wrk2", 0.6, true},
		{"https11", "wrk", 0.6, false},
		{"h2", "h2load", 0.7, false},
	}
	var out []Goal
	for _, subject := range clientSubjects {
		for _, b := range bars {
			out = append(out, Goal{Issue: issue53, Scenario: b.scenario, Subject: subject, Peer: b.peer, Metric: MetricCPU, Op: "<=", Bar: b.cpu, HoldRate: b.openLoop})
			if !b.openLoop {
				out = append(out, Goal{Issue: issue53, Scenario: b.scenario, Subject: subject, Peer: b.peer, Metric: MetricRPS, Op: ">=", Bar: 1.0})
			}
		}
		out = append(out, Goal{Issue: issue53, Scenario: "closed", Subject: subject, Metric: MetricSyscalls, Op: "<=", Bar: 0.3})
	}
	return out
}
