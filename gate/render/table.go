package render

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"weaseldb/gate/result"
	"weaseldb/gate/stats"
	"weaseldb/gate/verdict"
)

// WriteTable prints a result: one row per scenario (the one workload's
// alone without --scenarios), the binaries, each scenario's reason, rounds
// and noise, the tolerances, the cost tier's rows, the warnings, which
// scenario decided and the verdict line, always last.
func WriteTable(w io.Writer, r *result.Result) {
	if len(r.Scenarios) > 0 && ranTime(r) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  scenario\tload\trounds\tA median\tB median\tB/A\tinterval\tverdict")
		for _, s := range r.Scenarios {
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", s.Name, shortLoad(s.Load), s.Rounds,
				medianCell(s.Metric, s.A), medianCell(s.Metric, s.B),
				formatRatio(s.CI.Ratio), formatInterval(s.CI), verdictCell(s.Decision))
		}
		tw.Flush()
	}
	if r.A != "" {
		fmt.Fprintf(w, "  A: %s%s\n", r.A, baselineNote(r))
	}
	if r.B != "" {
		fmt.Fprintf(w, "  B: %s\n", r.B)
	}
	if st := r.Settings; st.ServerCPUs != "" {
		fmt.Fprintf(w, "  pinned: servers on CPUs %s, load tester (%d thread(s)) on CPUs %s\n", st.ServerCPUs, st.Threads, st.ClientCPUs)
	}
	for _, s := range r.Scenarios {
		if s.Reason != "" && named(r) {
			fmt.Fprintf(w, "%s: %s\n", s.Name, s.Reason)
		}
		if line := noiseLine(&s.Judgement); line != "" {
			fmt.Fprintf(w, "  %s\n", line)
		}
		for _, note := range sideNotes(&s.Judgement) {
			fmt.Fprintf(w, "  %s\n", note)
		}
	}
	if line := tolerancesLine(r.Scenarios); line != "" && ranTime(r) {
		fmt.Fprintln(w, line)
	}
	if hasCost(r) {
		writeCostTable(w, r)
	}
	for _, warn := range allWarnings(r) {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	if r.DecidedBy != "" {
		fmt.Fprintf(w, "decided by: %s (%s)\n", r.DecidedBy, decidedByWhy(r))
	}
	fmt.Fprintf(w, "verdict: %s (exit %d): %s\n", strings.ToUpper(string(r.Verdict)), r.ExitCode, r.Reason)
}

// named reports whether the scenarios are a file's, whose names the
// renderers print; the one scenario of a one-workload run goes unnamed.
func named(r *result.Result) bool { return r.Mode == result.ModeScenarios }

// baselineNote marks A as the recorded baseline, and names its file.
func baselineNote(r *result.Result) string {
	if r.Mode != result.ModeBaseline {
		return ""
	}
	return fmt.Sprintf(" (recorded baseline %s)", r.Baseline)
}

// shortLoad is the load shape for a table cell: a long path is cut.
func shortLoad(l result.LoadShape) string {
	const most = 36
	if len(l.Path) > most {
		l.Path = l.Path[:most-3] + "..."
	}
	return l.String()
}

// decidedByWhy says how the deciding scenario was chosen.
func decidedByWhy(r *result.Result) string {
	if r.Verdict == verdict.Pass {
		return fmt.Sprintf("every one of %d scenarios passed; this is the closest call", len(r.Scenarios))
	}
	return fmt.Sprintf("the worst verdict of %d scenarios", len(r.Scenarios))
}

// noiseLine is "rounds 10 (...): stopped: decided ...; B/A per round 0.950
// to 1.028, median deviation ±1.2%; ...; Mann-Whitney p=0.74 (n=10+10)".
func noiseLine(j *result.Judgement) string {
	var parts []string
	if line := roundsLine(j); line != "" {
		parts = append(parts, line)
	}
	if n := noiseText(j); n != "" {
		parts = append(parts, n)
	}
	if j.Rank.N1 > 0 && j.Rank.N2 > 0 {
		parts = append(parts, "Mann-Whitney "+j.Rank.String())
	}
	return strings.Join(parts, "; ")
}

// noiseText says how far the samples moved: B/A per round when paired,
// else each side's spread (and, against a baseline, that the machine's
// drift since it was recorded is not cancelled).
func noiseText(j *result.Judgement) string {
	switch {
	case j.CI.Paired && j.CI.Samples > 0:
		return fmt.Sprintf("B/A per round %s; interval at %.1f%% actual confidence",
			strings.TrimPrefix(roundRatioRange(j), "rounds "), j.CI.Confidence*100)
	case len(j.B.SamplesRPS) == 0:
		return ""
	case j.A.Name == "":
		return "B's runs spread " + formatSpread(j.B.Spread)
	default:
		return fmt.Sprintf("B's runs spread %s, %s's %s (unpaired, the ratio of medians, each median's interval at %.1f%%: "+
			"the machine's drift between the sides is not cancelled)", formatSpread(j.B.Spread), j.A.Name, formatSpread(j.A.Spread),
			math.Sqrt(j.CI.Level)*100)
	}
}

// roundRatioRange says how far B/A moved between rounds: the whole range,
// which a reviewer reads as "how noisy", beside the robust spread (the
// median absolute deviation) that one outlier round cannot inflate.
func roundRatioRange(r *result.Judgement) string {
	if len(r.RoundRatios) == 0 {
		return "round to round " + formatSpread(r.RatioSpread)
	}
	lo, hi := slices.Min(r.RoundRatios), slices.Max(r.RoundRatios)
	return fmt.Sprintf("rounds %.3f to %.3f, median deviation %s", lo, hi, formatSpread(r.RatioSpread))
}

// roundsLine says how many rounds ran and why they stopped.
func roundsLine(r *result.Judgement) string {
	if r.StopReason == "" || r.Rounds == 0 {
		return ""
	}
	budget := ""
	if r.RoundsPlan.BudgetS > 0 {
		budget = fmt.Sprintf(", budget %gs", r.RoundsPlan.BudgetS)
	}
	return fmt.Sprintf("rounds %d (%d to start, at most %d%s): stopped: %s: %s",
		r.Rounds, r.RoundsPlan.Initial, r.RoundsPlan.Max, budget, r.StopReason, r.StopDetail)
}

// sideNotes flag what a reviewer checks before trusting a scenario's
// verdict: client-bound, failed or unclean runs, a busy idle server.
func sideNotes(j *result.Judgement) []string {
	var out []string
	for _, s := range []result.Side{j.A, j.B} {
		if s.Name == "" || s.FromBaselineFile {
			continue
		}
		n := len(s.SamplesRPS)
		if s.ClientBoundRuns > 0 || s.ErrorRuns > 0 || s.UncleanRuns > 0 {
			out = append(out, fmt.Sprintf("%s: %d of %d runs client-bound, %d with errors, %d unclean", s.Name, s.ClientBoundRuns, n, s.ErrorRuns, s.UncleanRuns))
		}
		if s.MaxOtherIdleCPU > 0.05 {
			out = append(out, fmt.Sprintf("%s: the other server used %.0f%% of a core while this one was measured", s.Name, s.MaxOtherIdleCPU*100))
		}
	}
	return out
}

// tolerancesLine states the rule once, with the scenarios whose tolerance
// differs from the most common one named.
func tolerancesLine(scs []result.ScenarioResult) string {
	if len(scs) == 0 {
		return ""
	}
	count := map[float64]int{}
	common := scs[0].Policy.Tolerance
	for _, s := range scs {
		count[s.Policy.Tolerance]++
		if count[s.Policy.Tolerance] > count[common] {
			common = s.Policy.Tolerance
		}
	}
	var own []string
	var ownPolicy *result.PolicyJSON
	for _, s := range scs {
		if s.Policy.Tolerance != common {
			own = append(own, fmt.Sprintf("%s %.0f%%", s.Name, s.Policy.Tolerance*100))
		} else if ownPolicy == nil {
			ownPolicy = &s.Policy
		}
	}
	// A tolerance of 50% or more leaves no floor: say so rather than print a negative ratio.
	passRule := "a pass needs no CI floor"
	if ownPolicy.PassFloor > 0 {
		passRule = fmt.Sprintf("a pass needs the CI above %.3f", ownPolicy.PassFloor)
	}
	line := fmt.Sprintf("tolerance %.0f%%: regression below %.3f and the CI below 1; %s", ownPolicy.Tolerance*100, ownPolicy.Floor, passRule)
	if len(own) > 0 {
		line += " (own tolerance: " + strings.Join(own, ", ") + ")"
	}
	return line
}

// allWarnings are the run's warnings and each scenario's (named, in a
// scenarios run).
func allWarnings(r *result.Result) []string {
	out := slices.Clone(r.Warnings)
	for _, s := range r.Scenarios {
		for _, w := range s.Warnings {
			if named(r) {
				w = s.Name + ": " + w
			}
			out = append(out, w)
		}
	}
	return out
}

// verdictCell is "pass", "REGRESSION (slower)", "could not judge (noisy)".
func verdictCell(d verdict.Decision) string {
	switch {
	case d.Verdict == verdict.Pass && d.NoiseForgiven:
		return "pass (noise forgiven)"
	case d.Verdict == verdict.Pass:
		return "pass"
	case d.Verdict == verdict.Regression:
		return "REGRESSION (" + d.ReasonCode + ")"
	default:
		return string(d.Verdict) + " (" + d.ReasonCode + ")"
	}
}

// medianCell is a side's median, or "-" for a side not measured (A when
// a baseline is written).
func medianCell(metric string, s result.Side) string {
	if len(s.SamplesRPS) == 0 {
		return "-"
	}
	return result.FormatSample(metric, s.MedianRPS)
}

func formatRatio(v float64) string {
	if math.IsNaN(v) || v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

// formatInterval is "99% [0.950, 1.028]", or "-" when nothing was measured.
func formatInterval(ci stats.RatioCI) string {
	if math.IsNaN(ci.Ratio) || ci.Ratio == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%% [%.3f, %.3f]", ci.Level*100, ci.Low, ci.High)
}

func formatSpread(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("±%.1f%%", v*100)
}
