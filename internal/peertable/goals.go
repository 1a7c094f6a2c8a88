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

// Goal is a bar on subject/peer of one metric in one scenario or, with no
// Peer, on the subject's own figure (system calls per request).
type Goal struct {
	Issue    string  `json:"issue"` // "42.3": issue 42 item 3
	Scenario string  `json:"scenario"`
	Subject  string  `json:"subject"`
	Peer     string  `json:"peer,omitempty"`
	Metric   string  `json:"metric"`
	Op       string  `json:"op"` // ">=", "<=" or "<"
	Bar      float64 `json:"bar"`
	// HoldRate: an open-loop goal that counts only where both clients
	// held the run's rate (goal_rate.go).
	HoldRate bool `json:"hold_rate,omitempty"`
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

// Absolute says the bar is on the subject's own figure, not a ratio.
func (g Goal) Absolute() bool { return g.Peer == "" }

// String is the bar in the table's words: "≥ 1.20×", or "≤ 0.30" on the
// subject's own figure.
func (g Goal) String() string {
	op := map[string]string{">=": "≥", "<=": "≤", "<": "<"}[g.Op]
	return op + " " + g.figure(g.Bar)
}

// figure prints x as the goal measures it: a ratio with its ×, or a
// figure of its own.
func (g Goal) figure(x float64) string {
	switch {
	case g.Absolute() && g.Metric == MetricInstructions:
		return fmt.Sprintf("%.0f", x) // a count: "≤ 3750", not "≤ 3750.00"
	case g.Absolute():
		return fmt.Sprintf("%.2f", x)
	}
	return fmt.Sprintf("%.2f×", x)
}

// GoalVerdict is one goal judged against a table.
type GoalVerdict struct {
	Goal
	// Ratio is what was measured: subject/peer, or for an Absolute goal
	// the subject's own figure; nil: not measured.
	Ratio   *float64 `json:"ratio"`
	Verdict string   `json:"verdict"`
	Note    string   `json:"note,omitempty"` // why, where the figures alone do not say
}

// The verdicts.
const (
	VerdictMet         = "met"
	VerdictNotMet      = "not met"
	VerdictNotMeasured = "not measured"
)

// judge finds the goal's figure among ratios (or, for an Absolute goal,
// the subject's entry among peers); rate is the open loop's, for a
// HoldRate goal.
func judge(g Goal, ratios []Ratio, peers []PeerEntry, rate float64) GoalVerdict {
	v := GoalVerdict{Goal: g, Verdict: VerdictNotMeasured}
	if x := goalFigure(g, ratios, peers); x != nil {
		v.Ratio = x
		v.Verdict = VerdictNotMet
		if g.Met(*x) {
			v.Verdict = VerdictMet
		}
	}
	return holdRate(v, peers, rate)
}

func goalFigure(g Goal, ratios []Ratio, peers []PeerEntry) *float64 {
	if g.Absolute() {
		for _, p := range peers {
			if p.Scenario == g.Scenario && p.Peer == g.Subject {
				return metricOf(p, g.Metric)
			}
		}
		return nil
	}
	for _, r := range ratios {
		if r.Scenario == g.Scenario && r.Subject == g.Subject && r.Peer == g.Peer && r.Metric == g.Metric {
			x := r.Value
			return &x
		}
	}
	return nil
}

// metricOf is one of an entry's medians by the metric's name.
func metricOf(p PeerEntry, metric string) *float64 {
	switch metric {
	case MetricRPS:
		return p.RequestsPerSec
	case MetricCPU:
		return p.CPUNsPerRequest
	case MetricSwitches:
		return p.SwitchesPerRequest
	case MetricInstructions:
		return p.InstructionsPerRequest
	case MetricSyscalls:
		return p.SyscallsPerRequest
	}
	return nil
}
