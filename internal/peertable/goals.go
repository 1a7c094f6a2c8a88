package peertable

import "fmt"

// The metrics a ratio is taken of.
const (
	MetricRPS          = "requests_per_sec"
	MetricCPU          = "cpu_ns_per_request"
	MetricSwitches     = "context_switches_per_request"
	MetricInstructions = "instructions_per_request"
	MetricSyscalls     = "syscalls_per_request"
)

// Goal is a bar on subject/peer of one metric in one scenario.
type Goal struct {
	Scenario string  `json:"scenario"`
	Subject  string  `json:"subject"`
	Peer     string  `json:"peer"`
	Metric   string  `json:"metric"`
	Op       string  `json:"op"` // ">=", "<=" or "<"
	Bar      float64 `json:"bar"`
}

// Goals are issue 42 item 3's, for weaseldb with its defaults (what "fast
// by default" promises) and for load_tester.
var Goals = []Goal{
	{Scenario: "ok_pipelined16", Subject: "weaseldb", Peer: "gnet", Metric: MetricRPS, Op: ">=", Bar: 1.2},
	{Scenario: "ok_pipelined16", Subject: "weaseldb", Peer: "fasthttp", Metric: MetricRPS, Op: ">=", Bar: 1.5},
	{Scenario: "ok_pipelined16", Subject: "weaseldb", Peer: "gnet", Metric: MetricInstructions, Op: "<", Bar: 1.0},
	{Scenario: "ok", Subject: "weaseldb", Peer: "nginx", Metric: MetricRPS, Op: ">=", Bar: 1.0},
	{Scenario: "ok", Subject: "weaseldb", Peer: "nginx", Metric: MetricCPU, Op: "<=", Bar: 0.9},
	{Scenario: "closed", Subject: "load_tester", Peer: "wrk", Metric: MetricCPU, Op: "<=", Bar: 0.8},
	{Scenario: "closed_pipelined16", Subject: "load_tester", Peer: "wrk", Metric: MetricCPU, Op: "<=", Bar: 0.8},
	{Scenario: "open_loop", Subject: "load_tester", Peer: "wrk2", Metric: MetricCPU, Op: "<=", Bar: 0.8},
	{Scenario: "https11", Subject: "load_tester", Peer: "wrk", Metric: MetricCPU, Op: "<=", Bar: 0.8},
	{Scenario: "h2", Subject: "load_tester", Peer: "h2load", Metric: MetricRPS, Op: ">=", Bar: 1.0},
	{Scenario: "h2", Subject: "load_tester", Peer: "h2load", Metric: MetricCPU, Op: "<=", Bar: 0.8},
}

// Met says whether ratio passes the goal's bar.
func (g Goal) Met(ratio float64) bool {
	switch g.Op {
	case ">=":
		return ratio >= g.Bar
	case "<=":
		return ratio <= g.Bar
	case "<":
		return ratio < g.Bar
	}
	return false
}

// String is the bar in the table's words: "≥ 1.20×".
func (g Goal) String() string {
	op := map[string]string{">=": "≥", "<=": "≤", "<": "<"}[g.Op]
	return fmt.Sprintf("%s %.2f×", op, g.Bar)
}

// GoalVerdict is one goal judged against a table.
type GoalVerdict struct {
	Goal
	Ratio   *float64 `json:"ratio"` // nil: not measured
	Verdict string   `json:"verdict"`
}

// The verdicts.
const (
	VerdictMet         = "met"
	VerdictNotMet      = "not met"
	VerdictNotMeasured = "not measured"
)

// judge finds the goal's ratio among ratios.
func judge(g Goal, ratios []Ratio) GoalVerdict {
	v := GoalVerdict{Goal: g, Verdict: VerdictNotMeasured}
	for _, r := range ratios {
		if r.Scenario == g.Scenario && r.Subject == g.Subject && r.Peer == g.Peer && r.Metric == g.Metric {
			x := r.Value
			v.Ratio = &x
			v.Verdict = VerdictNotMet
			if g.Met(x) {
				v.Verdict = VerdictMet
			}
		}
	}
	return v
}
