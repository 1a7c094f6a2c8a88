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

// FormatWaitLatency renders the comparison's latency parts: bench_pipeline's
// hand-off latency per strategy and kind of cores, and each server run's
// open-loop steps ("" when neither was measured).
func FormatWaitLatency(ws *artifacts.WaitStrategies) string {
	var b strings.Builder
	if len(ws.PipelineLatency) > 0 || ws.LatencyReason != "" {
		fmt.Fprintf(&b, "\npipeline hand-off latency (bench_pipeline --families latency, %s; one clock read %s)\n",
			orDash(ws.LatencyArtifact), fmtDuration(nonZero(ws.LatencyClockReadNs)))
		if ws.LatencyReason != "" {
			fmt.Fprintf(&b, "  note: %s\n", ws.LatencyReason)
		}
	}
	if len(ws.PipelineLatency) > 0 {
		fmt.Fprintf(&b, "%-8s  %-18s  %-10s  %-10s  %-9s  %9s  %9s  %9s  %9s  %10s\n",
			"impl", "strategy", "kind", "rate", "cores", "p50", "p99", "p99.9", "max", "CPU/item")
		for _, l := range ws.PipelineLatency {
			fmt.Fprintf(&b, "%-8s  %-18s  %-10s  %-10s  %-9s  ", l.Impl, l.Strategy, l.Kind, l.Rate, l.Cores)
			if l.Skipped {
				fmt.Fprintf(&b, "skipped: %s\n", l.Reason)
				continue
			}
			fmt.Fprintf(&b, "%9s  %9s  %9s  %9s  %10s\n", fmtNs(l.P50Ns), fmtNs(l.P99Ns), fmtNs(l.P999Ns), fmtNs(l.MaxNs),
				fmtDuration(nonZero(l.CPUNsPerItem)))
		}
	}
	var steps []artifacts.WaitRun
	for _, r := range ws.Runs {
		if r.Bench == artifacts.BenchServer && r.Status == artifacts.StatusMeasured && (len(r.RateSteps) > 0 || r.RateStepsReason != "") {
			steps = append(steps, r)
		}
	}
	if len(steps) == 0 {
		return b.String()
	}
	fmt.Fprintf(&b, "\nserver at fixed open-loop rates (fractions of each run's closed-loop req/s; latency corrected for coordinated omission)\n")
	fmt.Fprintf(&b, "%-18s  %-9s  %8s  %12s  %12s  %9s  %9s  %9s  %s\n",
		"strategy", "cores", "fraction", "rate asked", "achieved", "p50", "p99", "p99.9", "server CPU/req over the steps")
	for _, r := range steps {
		if len(r.RateSteps) == 0 {
			fmt.Fprintf(&b, "%-18s  %-9s  not measured: %s\n", r.Strategy, r.Cores, r.RateStepsReason)
			continue
		}
		for i, s := range r.RateSteps {
			cpu := ""
			if i == 0 {
				cpu = fmtDuration(r.RateStepsCPUNsPerRequest)
			}
			flag := ""
			if s.Unfinished > 0 || s.Dropped > 0 {
				flag = fmt.Sprintf("  NOT CLEAN: %d unfinished, %d dropped", s.Unfinished, s.Dropped)
			}
			fmt.Fprintf(&b, "%-18s  %-9s  %8s  %12s  %12s  %9s  %9s  %9s  %s%s\n", r.Strategy, r.Cores,
				numfmt.Format(s.Fraction, 2), numfmt.Format(s.RateAsked, 0), numfmt.Format(s.RateAchieved, 0),
				fmtNs(s.P50Ns), fmtNs(s.P99Ns), fmtNs(s.P999Ns), cpu, flag)
		}
		if r.RateStepsReason != "" {
			fmt.Fprintf(&b, "%-18s  %-9s  note: %s\n", r.Strategy, r.Cores, r.RateStepsReason)
		}
	}
	return b.String()
}

func fmtNs(ns int64) string {
	v := float64(ns)
	return fmtDuration(&v)
}

// nonZero is v's address, or nil (not measured) when v is 0.
func nonZero(v float64) *float64 {
	if v == 0 {
		return nil
	}
	return &v
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
