package bench

import (
	"fmt"
	"strings"

	"weaseldb/artifacts"
	"weaseldb/internal/numfmt"
)

// FormatWaitTable renders the runs as the plain-text table the comparison
// prints: one line per run; skipped and failed runs say why.
func FormatWaitTable(ws *artifacts.WaitStrategies) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s  %-18s  %-9s  %18s  %9s  %9s  %12s  %14s  %10s\n",
		"bench", "strategy", "cores", "throughput", "p50", "p99", "CPU/op", "client CPU/req", "idle CPU")
	for _, r := range ws.Runs {
		fmt.Fprintf(&b, "%-8s  %-18s  %-9s  ", r.Bench, r.Strategy, r.Cores)
		if r.Status != artifacts.StatusMeasured {
			fmt.Fprintf(&b, "%s: %s\n", r.Status, r.Reason)
			continue
		}
		tp := "-"
		if r.Throughput != nil {
			tp = numfmt.Format(*r.Throughput, 0) + " " + r.Unit
		}
		flag := ""
		if r.Unfinished > 0 || r.Dropped > 0 {
			flag = fmt.Sprintf("  NOT CLEAN: %d unfinished, %d dropped", r.Unfinished, r.Dropped)
		}
		fmt.Fprintf(&b, "%18s  %9s  %9s  %12s  %14s  %10s%s\n", tp,
			fmtDuration(r.P50Ns), fmtDuration(r.P99Ns), fmtDuration(r.CPUNsPerOp),
			fmtDuration(r.ClientCPUNsPerRequest), fmtCores(r.IdleCoreFraction), flag)
	}
	return b.String()
}

// FormatWaitSkipped summarises the skipped runs ("" when none was skipped).
func FormatWaitSkipped(ws *artifacts.WaitStrategies) string {
	skipped := ws.SkippedRuns()
	if len(skipped) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nskipped %d runs for want of CPUs (this process may use %s):\n", len(skipped), ws.AllowedCPUs)
	for _, r := range skipped {
		fmt.Fprintf(&b, "  %s %s on dedicated cores needs %d CPUs\n", r.Bench, r.Strategy, r.CPUsNeeded)
	}
	return b.String()
}

// fmtDuration prints nanoseconds in a readable unit, "-" when not measured.
func fmtDuration(ns *float64) string {
	switch {
	case ns == nil:
		return "-"
	case *ns >= 1e6:
		return numfmt.Format(*ns/1e6, 2) + "ms"
	case *ns >= 1e3:
		return numfmt.Format(*ns/1e3, 2) + "µs"
	}
	return numfmt.Format(*ns, 1) + "ns"
}

// fmtCores prints a core fraction as % of one core, "-" when not measured.
func fmtCores(f *float64) string {
	if f == nil {
		return "-"
	}
	return numfmt.Format(*f*100, 2) + "%"
}
