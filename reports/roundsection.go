package reports

import (
	"fmt"
	"slices"
	"strings"

	"weaseldb/artifacts"
	"weaseldb/internal/numfmt"
)

// RoundsPNG is the plot of every round's throughput, setup by setup.
const RoundsPNG = "rounds.png"

// roundsSection lists every run in the order it ran, with the numbers the
// bound rule reads. Each row's numbers are fields of the artifacts in its
// last column.
func (w *writer) roundsSection() error {
	w.p("## Rounds\n\n")
	if w.run.Setups == nil {
		w.p("This run has one load result (`%s`), not rounds of `report setups`: no spread over rounds can be given.\n\n", w.setups[0].view.Rounds[0].LoadName)
	} else {
		w.p("Every run in the order it ran (`%s` runs). Each is a fresh server; req/s, p99 and the request accounting come from the run's load result, the CPU figures from its sample (the server's CPU over the measured window less 0.5 s at each end, the whole machine's beside it, the resolve stage's busy share from two `/metrics` scrapes around that window).\n\n", artifacts.SetupsFile)
	}
	w.p("| round | setup | req/s | p99 µs | server CPU cores | machine busy cores | resolve busy %% | load tester CPU %% | accounting | artifacts |\n")
	w.p("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range w.runOrder() {
		v := r.view
		if r.Status != artifacts.StatusMeasured {
			w.p("| %d.%d | %s | **%s**: %s | | | | | | | |\n", r.Number, r.Order, v.Setup.Name, r.Status, r.Reason)
			continue
		}
		l := r.Load
		cores, busy, resolve := "not measured", "not measured", "not measured"
		if r.Loaded != nil {
			cores, busy = numfmt.Format(r.Loaded.CoreFraction, 2), numfmt.Format(r.Loaded.MachineBusyCores, 2)
		}
		if r.Sample != nil && r.Sample.StageBusy != nil {
			resolve = numfmt.Format(r.Sample.StageBusy["resolve"]*100, 0)
		}
		artifacts := "`" + r.LoadName + "`"
		if r.LoadedName != "" && r.LoadedName != r.LoadName {
			artifacts += ", `" + r.LoadedName + "`"
		}
		w.p("| %d.%d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Number, r.Order, v.Setup.Name,
			numfmt.Format(l.RequestsPerSec, 0), numfmt.Format(float64(l.Latency.P99)/1e3, 1), cores, busy, resolve,
			numfmt.Format(l.ClientCPUFraction*100, 0), accounting(l.Due, l.Answered, l.Failed, l.Unfinished, l.Dropped), artifacts)
	}
	w.p("\nRound `k.1` ran first in round k. Accounting: every request due in the measured window is answered, failed, unfinished (sent, no complete response by the end of the drain) or dropped (never sent); a run with unfinished or dropped requests is **not clean** and is left out of the setup's figures. Resolve busy: wall time the resolve stage spent processing, preemption included; load tester CPU: its CPU over what its network threads could use.\n\n")
	if len(w.run.Views) == 0 || w.run.Setups == nil {
		return nil
	}
	return w.image(RoundsPNG, "Throughput of every round, per setup", func(p string) error { return plotRounds(p, w.setups) })
}

// accounting prints a run's request accounting, flagged when not clean.
func accounting(due, answered, failed, unfinished, dropped int64) string {
	if due == 0 && answered == 0 {
		return "not recorded (a result before the accounting)"
	}
	s := fmt.Sprintf("due %s = answered %s + failed %s + unfinished %s + dropped %s", numfmt.Format(float64(due), 0),
		numfmt.Format(float64(answered), 0), numfmt.Format(float64(failed), 0), numfmt.Format(float64(unfinished), 0), numfmt.Format(float64(dropped), 0))
	if unfinished > 0 || dropped > 0 {
		return "**not clean**: " + s
	}
	return s
}

// viewRound is a round with its setup.
type viewRound struct {
	*Round
	view *SetupView
}

// runOrder is every round of every setup in the order they ran.
func (w *writer) runOrder() []viewRound {
	var out []viewRound
	for _, v := range w.run.Views {
		for _, r := range v.Rounds {
			out = append(out, viewRound{r, v})
		}
	}
	slices.SortStableFunc(out, func(a, b viewRound) int {
		if a.Number != b.Number {
			return a.Number - b.Number
		}
		return a.Order - b.Order
	})
	return out
}

// calibrationSection shows each round's bench_cpu_work pair.
func (w *writer) calibrationSection() error {
	w.p("## Calibration\n\n")
	c := w.cal
	if len(c.cals) == 0 {
		w.p("_Not measured: no bench_cpu_work result in this run._\n\n")
		return nil
	}
	w.p("Once a round, between the runs: `bench_cpu_work %d` times the server's spin work (the measuring thread's CPU time per call, median of its timed runs), and `bench_cpu_work --target` searches the count that costs the target, repeating its search until two passes agree within 5%% (at most 6 passes). The cost per iteration of the two should match: it is linear in the count.\n\n", c.timedIters)
	w.p("| round | timed: ns per call (min–max) | ns per iteration | calibrated iterations | its passes | ns per iteration | artifacts |\n|---|---|---|---|---|---|---|\n")
	for _, cal := range c.cals {
		if cal.Status != artifacts.StatusMeasured && cal.Timed == nil && cal.Target == nil {
			w.p("| %d | **%s**: %s | | | | | |\n", cal.Round, cal.Status, cal.Reason)
			continue
		}
		timed, timedIter, target, passes, targetIter := "not measured", "", "not measured", "", ""
		var names []string
		if t := cal.Timed; t != nil && t.Iterations > 0 {
			timed = fmt.Sprintf("%s (%s–%s)", numfmt.Format(t.NsPerCallMedian, 1), numfmt.Format(t.NsPerCallMin, 1), numfmt.Format(t.NsPerCallMax, 1))
			timedIter = numfmt.Format(t.NsPerCallMedian/float64(t.Iterations), 3)
			names = append(names, "`"+cal.TimedName+"`")
		}
		if t := cal.Target; t != nil && t.Iterations > 0 {
			target = numfmt.Format(float64(t.Iterations), 0)
			passes = describeCalibrationPasses(t)
			targetIter = numfmt.Format(t.NsPerCallMedian/float64(t.Iterations), 3)
			names = append(names, "`"+cal.TargetName+"`")
		}
		w.p("| %d | %s | %s | %s | %s | %s | %s |\n", cal.Round, timed, timedIter, target, passes, targetIter, strings.Join(names, ", "))
	}
	w.p("\n")
	return nil
}

// describeCalibrationPasses lists a calibration's passes and whether two agreed.
func describeCalibrationPasses(t *artifacts.CPUWork) string {
	if len(t.TargetPasses) == 0 {
		return "one pass (a bench_cpu_work that did not repeat its search)"
	}
	counts := make([]string, len(t.TargetPasses))
	for i, p := range t.TargetPasses {
		counts[i] = numfmt.Format(float64(p.Iterations), 0)
	}
	if t.TargetAgreed != nil && !*t.TargetAgreed {
		return fmt.Sprintf("**none agreed**: %s", strings.Join(counts, ", "))
	}
	return fmt.Sprintf("%s (two agreed)", strings.Join(counts, ", "))
}
