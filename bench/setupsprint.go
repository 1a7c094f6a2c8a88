package bench

import (
	"fmt"
	"strings"

	"weaseldb/artifacts"
	"weaseldb/internal/numfmt"
	"weaseldb/loadtester/result"
	"weaseldb/plan"
)

// formatSetupsPlan shows both setups and the order of the runs.
func formatSetupsPlan(ss *artifacts.Setups) string {
	var b strings.Builder
	fmt.Fprintf(&b, "allowed CPUs %s; %d rounds of %g s (after %g s of warm-up) per run\n", ss.AllowedCPUs, ss.Rounds, ss.DurationS, ss.WarmupS)
	for _, s := range ss.Setups {
		fmt.Fprintf(&b, "  %-7s %s\n          %s\n", s.Name, artifacts.DescribeSetup(s), s.Why)
		b.WriteString(plan.FormatPlacement("          ", s.Placement, s.PlacementGaveUp, s.IRQWarnings))
	}
	if n := len(ss.Setups); n > 0 && ss.Setups[n-1].Cores != artifacts.CoresDedicated {
		b.WriteString("  dedicated-core throughput: not run here: " + plan.DedicatedNeed(ss.AllowedCPUs, ss.Setups[n-1]))
	}
	for round := 1; round <= ss.Rounds; round++ {
		names := []string{"calibrate"}
		for _, s := range order(ss.Setups, round) {
			names = append(names, s.Name)
		}
		fmt.Fprintf(&b, "  round %d: %s\n", round, strings.Join(names, ", "))
	}
	return b.String()
}

// summary prints one line per run: its throughput and whether every due
// request was answered.
func (r *setupsRunner) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-7s %5s  %14s  %s\n", "setup", "round", "req/s", "accounting")
	for _, run := range r.ss.Runs {
		fmt.Fprintf(&b, "%-7s %5d  ", run.Setup, run.Round)
		if run.Status != artifacts.StatusMeasured {
			fmt.Fprintf(&b, "%14s  %s: %s\n", "-", run.Status, run.Reason)
			continue
		}
		lf, err := result.ReadResult(r.t.Path(run.Load))
		if err != nil {
			fmt.Fprintf(&b, "%14s  %v\n", "-", err)
			continue
		}
		if lf.Due == 0 && lf.Answered == 0 {
			fmt.Fprintf(&b, "%14s  %d requests (a result without the accounting)\n", numfmt.Format(lf.RequestsPerSec, 0), lf.Requests)
			continue
		}
		verdict := "clean"
		if !lf.Clean() {
			verdict = "NOT CLEAN"
		}
		fmt.Fprintf(&b, "%14s  %s: due %d = answered %d + failed %d + unfinished %d + dropped %d\n",
			numfmt.Format(lf.RequestsPerSec, 0), verdict, lf.Due, lf.Answered, lf.Failed, lf.Unfinished, lf.Dropped)
	}
	return b.String()
}
