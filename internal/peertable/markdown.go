package peertable

import (
	"fmt"
	"strings"

	"weaseldb/internal/numfmt"
)

// Markdown renders the table: a line naming the machine and the run, then
// per scenario the peers' figures and the subjects' ratios, then the goals.
func Markdown(t Table) string {
	var b strings.Builder
	m, r := t.Machine, t.Run
	fmt.Fprintf(&b, "Measured by `scripts/compare_peers.sh` on %s: %s (CPU family %s), %d CPUs, Linux %s, %s; "+
		"%d interleaved rounds of %s s, medians, and the median of each round's ratio.",
		r.Date, orDash(m.CPUModel), orDash(m.CPUFamily), m.CPUs, orDash(m.Kernel), orDash(m.GoVersion), r.Rounds, numfmt.Format(r.DurationS, 1))
	if r.Setup != "" {
		fmt.Fprintf(&b, " Setup: %s", r.Setup)
	}
	b.WriteString("\n")
	for _, sc := range Scenarios {
		peers := scenarioPeers(t.Peers, sc)
		if len(peers) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n**%s: %s**\n\n", sideTitle(sc.Side), sc.heading(r.ClientTarget))
		writePeers(&b, sc, peers)
		writeRatios(&b, sc, t.Ratios)
	}
	writeGoals(&b, t.Goals)
	return b.String()
}

func sideTitle(side string) string {
	if side == "server" {
		return "Server"
	}
	return "Client"
}

func scenarioPeers(all []PeerEntry, sc Scenario) []PeerEntry {
	var out []PeerEntry
	for _, p := range all {
		if p.Side == sc.Side && p.Scenario == sc.Name {
			out = append(out, p)
		}
	}
	return out
}

func writePeers(b *strings.Builder, sc Scenario, peers []PeerEntry) {
	fmt.Fprintf(b, "| %s | req/s | %s CPU / request | kernel's share | context switches / request | instructions / request | system calls / request |\n", sc.Side, sc.Side)
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, p := range peers {
		if p.Skipped != "" {
			fmt.Fprintf(b, "| %s | skipped: %s | | | | | |\n", p.Peer, p.Skipped)
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", peerCell(p), fig(p.RequestsPerSec, 0), nanos(p.CPUNsPerRequest),
			percent(p.KernelShare), fig(p.SwitchesPerRequest, 3), fig(p.InstructionsPerRequest, 0), fig(p.SyscallsPerRequest, 2))
	}
}

// peerCell is the peer's name with any measurement it lacks, and why.
func peerCell(p PeerEntry) string {
	if len(p.Notes) == 0 {
		return p.Peer
	}
	return p.Peer + " (" + strings.Join(p.Notes, "; ") + ")"
}

func writeRatios(b *strings.Builder, sc Scenario, all []Ratio) {
	type pair struct{ subject, peer string }
	var order []pair
	cells := map[pair]map[string]Ratio{}
	for _, r := range all {
		if r.Scenario != sc.Name || !containsSubject(sc, r.Subject) {
			continue
		}
		k := pair{r.Subject, r.Peer}
		if cells[k] == nil {
			cells[k] = map[string]Ratio{}
			order = append(order, k)
		}
		cells[k][r.Metric] = r
	}
	if len(order) == 0 {
		return
	}
	b.WriteString("\n| ratio | req/s | CPU / request | context switches / request | instructions / request | system calls / request |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, k := range order {
		c := cells[k]
		fmt.Fprintf(b, "| %s / %s | %s | %s | %s | %s | %s |\n", k.subject, k.peer, ratioCell(c, MetricRPS), ratioCell(c, MetricCPU),
			ratioCell(c, MetricSwitches), ratioCell(c, MetricInstructions), ratioCell(c, MetricSyscalls))
	}
}

func containsSubject(sc Scenario, name string) bool {
	for _, s := range sc.Subjects {
		if s == name {
			return true
		}
	}
	return false
}

// ratioCell: "1.05× (0.98–1.10)", the median and the range of the rounds'.
func ratioCell(c map[string]Ratio, metric string) string {
	r, ok := c[metric]
	if !ok {
		return "–"
	}
	s := fmt.Sprintf("%.2f×", r.Value)
	if len(r.PerRound) > 1 {
		lo, hi := r.PerRound[0], r.PerRound[0]
		for _, x := range r.PerRound {
			lo, hi = min(lo, x), max(hi, x)
		}
		s += fmt.Sprintf(" (%.2f–%.2f)", lo, hi)
	}
	return s
}

func writeGoals(b *strings.Builder, goals []GoalVerdict) {
	if len(goals) == 0 {
		return
	}
	b.WriteString("\n**Goals (issue 42 item 3; issue 53 item 5)**\n\n| issue | goal | measured | verdict |\n|---|---|---|---|\n")
	for _, g := range goals {
		measured := "–"
		if g.Ratio != nil {
			measured = g.figure(*g.Ratio)
		}
		verdict := g.Verdict
		if verdict != VerdictMet {
			verdict = "**" + verdict + "**"
		}
		if g.Note != "" {
			verdict += ": " + g.Note
		}
		fmt.Fprintf(b, "| %s | %s %s, %s %s | %s | %s |\n", g.Issue, goalSubject(g.Goal), metricWords[g.Metric], g.Scenario, g, measured, verdict)
	}
}

// goalSubject: "load_tester / wrk", or the subject alone for a figure of
// its own.
func goalSubject(g Goal) string {
	if g.Absolute() {
		return g.Subject
	}
	return g.Subject + " / " + g.Peer
}

var metricWords = map[string]string{
	MetricRPS: "req/s", MetricCPU: "CPU per request", MetricSwitches: "context switches per request",
	MetricInstructions: "instructions per request", MetricSyscalls: "system calls per request",
}

func fig(x *float64, prec int) string {
	if x == nil {
		return "–"
	}
	return numfmt.Format(*x, prec)
}

// percent prints a share (0..1) as a whole percentage.
func percent(x *float64) string {
	if x == nil {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", *x*100)
}

// nanos prints a CPU time per request in the unit that reads best.
func nanos(x *float64) string {
	if x == nil {
		return "–"
	}
	if *x >= 1000 {
		return numfmt.Format(*x/1000, 2) + " µs"
	}
	return numfmt.Format(*x, 0) + " ns"
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
