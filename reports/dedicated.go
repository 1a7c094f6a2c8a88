package reports

import (
	"weaseldb/artifacts"
	"weaseldb/plan"
)

// dedicatedSection says whether this run measured throughput on dedicated
// cores: where it did, on which CPUs; where the machine was too small, which
// runs it skipped and what a user needs to run them (the plan printed for
// the smallest machine that has them, and the one command).
func (w *writer) dedicatedSection() error {
	ss := w.run.Setups
	if ss == nil || len(w.setups) == 0 {
		return nil // a single result: no plan to report on
	}
	fitted := w.setups[len(w.setups)-1].view.Setup
	w.p("### Dedicated-core throughput\n\n")
	if fitted.Cores == artifacts.CoresDedicated {
		w.p("Measured here: the fitted setup ran on dedicated cores (%s, from the allowed CPUs %s; `%s` setups[%d]).", fitted.CPUPlan, ss.AllowedCPUs, artifacts.SetupsFile, len(w.setups)-1)
		if n := w.waitDedicated(artifacts.StatusMeasured); len(n) > 0 {
			w.p(" The wait-strategy comparison measured %d server run(s) on dedicated cores.", len(n))
		}
		w.p("\n\n")
		return nil
	}
	w.p("**Not run here: throughput on dedicated cores.** This machine allowed CPUs %s (`%s` allowed_cpus), too few for the dedicated setups, so these runs were skipped:\n\n", ss.AllowedCPUs, artifacts.SetupsFile)
	w.p("- the fitted setup on dedicated cores (it ran on shared cores instead: %s)\n", fitted.Why)
	for _, r := range w.waitDedicated(artifacts.StatusSkipped) {
		w.p("- the wait-strategy comparison's %s %s on dedicated cores: %s\n", r.Bench, r.Strategy, r.Reason)
	}
	if w.run.WaitStrategies == nil {
		w.p("- the wait-strategy comparison's dedicated runs (not run at all: no `%s`)\n", artifacts.WaitStrategiesFile)
	}
	w.p("\nWhat they need, as `report setups --plan` prints it:\n\n```\n%s```\n\n", plan.DedicatedNeed(ss.AllowedCPUs, fitted))
	w.p("On a machine with that many CPUs (physical cores), `DEDICATED=1 scripts/reproduce_threading_report.sh` runs the report with them and stops at once, with this plan, where they are missing (docs/report.md, \"Dedicated cores on a bigger machine\").\n\n")
	return nil
}

// waitDedicated is the wait-strategy comparison's dedicated server runs
// with the given status (none without the comparison).
func (w *writer) waitDedicated(status string) []artifacts.WaitRun {
	ws := w.run.WaitStrategies
	if ws == nil {
		return nil
	}
	var out []artifacts.WaitRun
	for _, r := range ws.Runs {
		if r.Cores == artifacts.CoresDedicated && r.Bench == artifacts.BenchServer && r.Status == status {
			out = append(out, r)
		}
	}
	return out
}
