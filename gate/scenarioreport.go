package gate

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"
)

// WriteScenariosTable prints a scenarios run: one row per scenario, each
// scenario's reason and noise, the tolerances, the warnings, which
// scenario decided and the verdict line (always last).
func WriteScenariosTable(w io.Writer, r *ScenariosResult) {
	if len(r.Scenarios) > 0 && ranTime(r) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  scenario\tload\trounds\tA median\tB median\tB/A\tinterval\tverdict")
		for _, s := range r.Scenarios {
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", s.Name, shortLoad(s.Load), s.Rounds,
				formatSample(s.Metric, s.A.MedianRPS), formatSample(s.Metric, s.B.MedianRPS),
				formatRatio(s.CI.Ratio), formatInterval(s.CI), verdictCell(s.Decision))
		}
		tw.Flush()
	}
	if r.A != "" {
		fmt.Fprintf(w, "  A: %s\n", r.A)
	}
	if r.B != "" {
		fmt.Fprintf(w, "  B: %s\n", r.B)
	}
	if st := r.Settings; st.ServerCPUs != "" {
		fmt.Fprintf(w, "  pinned: servers on CPUs %s, load tester (%d thread(s)) on CPUs %s\n", st.ServerCPUs, st.Threads, st.ClientCPUs)
	}
	for _, s := range r.Scenarios {
		if s.Reason != "" {
			fmt.Fprintf(w, "%s: %s\n", s.Name, s.Reason)
		}
		if line := scenarioNoiseLine(&s.Judgement); line != "" {
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
	for _, warn := range scenarioWarnings(r) {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	if r.DecidedBy != "" {
		fmt.Fprintf(w, "decided by: %s (%s)\n", r.DecidedBy, decidedByWhy(r))
	}
	fmt.Fprintf(w, "verdict: %s (exit %d): %s\n", strings.ToUpper(string(r.Verdict)), r.ExitCode, r.Reason)
}

// shortLoad is the load shape for a table cell: a long path is cut.
func shortLoad(l LoadShape) string {
	const most = 36
	if len(l.Path) > most {
		l.Path = l.Path[:most-3] + "..."
	}
	return l.String()
}

// decidedByWhy says how the deciding scenario was chosen.
func decidedByWhy(r *ScenariosResult) string {
	if r.Verdict == Pass {
		return fmt.Sprintf("every one of %d scenarios passed; this is the closest call", len(r.Scenarios))
	}
	return fmt.Sprintf("the worst verdict of %d scenarios", len(r.Scenarios))
}

// scenarioNoiseLine is "rounds 10: stopped: decided ...; per-round ratios
// 0.950 to 1.028, median deviation ±1.2%; Mann-Whitney p=0.74 (n=10+10)".
func scenarioNoiseLine(j *Judgement) string {
	var parts []string
	if line := roundsLine(j); line != "" {
		parts = append(parts, line)
	}
	if j.CI.Paired && j.CI.Samples > 0 {
		parts = append(parts, fmt.Sprintf("B/A per round %s; interval at %.1f%% actual confidence", strings.TrimPrefix(roundRatioRange(j), "rounds "), j.CI.Confidence*100))
	}
	if j.Rank.N1 > 0 && j.Rank.N2 > 0 {
		parts = append(parts, "Mann-Whitney "+j.Rank.String())
	}
	return strings.Join(parts, "; ")
}

// sideNotes flag what a reviewer checks before trusting a scenario's
// verdict: client-bound, failed or unclean runs, a busy idle server.
func sideNotes(j *Judgement) []string {
	var out []string
	for _, s := range []Side{j.A, j.B} {
		if s.Name == "" {
			continue
		}
		n := len(s.SamplesRPS)
		if s.ClientBoundRuns > 0 || s.ErrorRuns > 0 || s.UncleanRuns > 0 {
			out = append(out, fmt.Sprintf("%s: %d of %d runs client-bound, %d with errors, %d unclean", s.Name, s.ClientBoundRuns, n, s.ErrorRuns, s.UncleanRuns))
		}
		if note := targetNote(s); note != "" {
			out = append(out, s.Name+":"+note)
		}
	}
	return out
}

// tolerancesLine states the rule once, with the scenarios whose tolerance
// differs from the most common one named.
func tolerancesLine(scs []ScenarioResult) string {
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
	var ownPolicy *PolicyJSON
	for _, s := range scs {
		if s.Policy.Tolerance != common {
			own = append(own, fmt.Sprintf("%s %.0f%%", s.Name, s.Policy.Tolerance*100))
		} else if ownPolicy == nil {
			ownPolicy = &s.Policy
		}
	}
	line := policyLine(&Judgement{Policy: *ownPolicy})
	if len(own) > 0 {
		line += " (own tolerance: " + strings.Join(own, ", ") + ")"
	}
	return line
}

// scenarioWarnings are the run's warnings and each scenario's, named.
func scenarioWarnings(r *ScenariosResult) []string {
	out := append([]string(nil), r.Warnings...)
	for _, s := range r.Scenarios {
		for _, w := range s.Warnings {
			out = append(out, s.Name+": "+w)
		}
	}
	return out
}

func formatRatio(v float64) string {
	if math.IsNaN(v) || v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

// formatInterval is "99% [0.950, 1.028]", or "-" when nothing was measured.
func formatInterval(ci RatioCI) string {
	if math.IsNaN(ci.Ratio) || ci.Ratio == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%% [%.3f, %.3f]", ci.Level*100, ci.Low, ci.High)
}

// verdictCell is "pass", "REGRESSION (slower)", "could not judge (noisy)".
func verdictCell(d Decision) string {
	switch {
	case d.Verdict == Pass && d.NoiseForgiven:
		return "pass (noise forgiven)"
	case d.Verdict == Pass:
		return "pass"
	case d.Verdict == Regression:
		return "REGRESSION (" + d.ReasonCode + ")"
	default:
		return string(d.Verdict) + " (" + d.ReasonCode + ")"
	}
}

// WriteScenariosJSON writes the result as indented JSON; statistics that
// could not be computed (NaN, infinite interval ends) are written as 0.
func WriteScenariosJSON(path string, r *ScenariosResult) error {
	c := *r
	c.Scenarios = make([]ScenarioResult, len(r.Scenarios))
	for i, s := range r.Scenarios {
		s.Judgement = s.Judgement.jsonSafe()
		c.Scenarios[i] = s
	}
	return writeJSON(path, &c)
}

// WriteScenariosMarkdownFile writes the pull-request summary to path.
func WriteScenariosMarkdownFile(path string, r *ScenariosResult, links MarkdownLinks) error {
	var b strings.Builder
	WriteScenariosMarkdown(&b, r, links)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// WriteScenariosMarkdown writes the summary of a scenarios run: the
// verdict and the scenario that decided it, one table with a row per
// scenario, the checks, and where the JSON is.
func WriteScenariosMarkdown(w io.Writer, r *ScenariosResult, links MarkdownLinks) {
	by := ""
	if r.DecidedBy != "" {
		by = fmt.Sprintf(", decided by `%s`", strings.ReplaceAll(r.DecidedBy, "`", "'"))
	}
	fmt.Fprintf(w, "### Regression gate: %s%s\n\n", verdictBadge(r.Decision), by)
	fmt.Fprintf(w, "> %s\n\n", escapeMarkdown(r.Reason))
	if len(r.Scenarios) > 0 && ranTime(r) {
		fmt.Fprintln(w, "| scenario | load | rounds | A median | B median | B/A | interval | verdict |")
		fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---|---|")
		for _, s := range r.Scenarios {
			name := "`" + s.Name + "`"
			if s.Name == r.DecidedBy {
				name = "**" + name + "**"
			}
			fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s | %s | %s |\n", name, escapeMarkdown(s.Load.String()), s.Rounds,
				formatSample(s.Metric, s.A.MedianRPS), formatSample(s.Metric, s.B.MedianRPS), formatRatio(s.CI.Ratio),
				formatInterval(s.CI), markdownVerdictCell(s.Decision))
		}
		fmt.Fprintln(w)
	}
	if hasCost(r) {
		writeCostMarkdown(w, r)
	}
	for _, item := range scenarioMarkdownChecks(r) {
		fmt.Fprintf(w, "- %s\n", item)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, markdownWhere(r.Decision, links))
}

func markdownVerdictCell(d Decision) string {
	badge := "⚠️"
	switch d.Verdict {
	case Pass:
		badge = "✅"
	case Regression:
		badge = "❌"
	}
	return badge + " " + escapeMarkdown(verdictCell(d))
}

// scenarioMarkdownChecks are the run's checks, each over every scenario.
func scenarioMarkdownChecks(r *ScenariosResult) []string {
	var out []string
	if line := tolerancesLine(r.Scenarios); line != "" {
		out = append(out, "**Rule:** "+escapeMarkdown(line)+".")
	}
	var noise, rounds, clientBound, faults []string
	cbIcon, faultIcon := "✅", "✅"
	idle := 0.0
	for _, s := range r.Scenarios {
		if s.CI.Paired && s.CI.Samples > 0 {
			noise = append(noise, fmt.Sprintf("`%s` %s", s.Name, roundRatioRange(&s.Judgement)))
		}
		if s.Rounds > 0 {
			rounds = append(rounds, fmt.Sprintf("`%s` %d (%s)", s.Name, s.Rounds, s.StopReason))
		}
		cb := clientBoundCheck(&s.Judgement)
		if strings.HasPrefix(cb, "⚠️") {
			cbIcon = "⚠️"
			clientBound = append(clientBound, fmt.Sprintf("`%s` A %d of %d, B %d of %d runs", s.Name,
				s.A.ClientBoundRuns, len(s.A.SamplesRPS), s.B.ClientBoundRuns, len(s.B.SamplesRPS)))
		}
		for _, p := range s.Problems {
			if p.Code != ReasonClientBound && p.Code != ReasonNoisy {
				faultIcon = "❌"
				faults = append(faults, fmt.Sprintf("`%s`: `%s`: %s", s.Name, p.Code, escapeMarkdown(p.Detail)))
			}
		}
		idle = math.Max(idle, math.Max(s.A.MaxOtherIdleCPU, s.B.MaxOtherIdleCPU))
	}
	if len(rounds) > 0 {
		out = append(out, fmt.Sprintf("**Rounds** (%d to start, at most %d, each scenario on fresh servers every round): %s.",
			r.RoundsPlan.Initial, r.RoundsPlan.Max, strings.Join(rounds, ", ")))
	}
	if len(noise) > 0 {
		out = append(out, "**Noise** (B/A per round, and its median deviation): "+strings.Join(noise, "; ")+".")
	}
	if len(clientBound) == 0 {
		clientBound = []string{"no run of any scenario"}
	}
	out = append(out, fmt.Sprintf("%s **Client-bound:** %s.", cbIcon, strings.Join(clientBound, "; ")))
	if len(faults) == 0 {
		faults = []string{"no failed, unfinished or dropped requests; no server failed"}
	}
	out = append(out, fmt.Sprintf("%s **Servers and load tester:** %s.", faultIcon, strings.Join(faults, "; ")))
	if idle > 0 {
		icon := "✅"
		if idle > 0.05 {
			icon = "⚠️"
		}
		out = append(out, fmt.Sprintf("%s **Idle server:** the server not being measured used at most %.0f%% of a core.", icon, idle*100))
	}
	if st := r.Settings; st.ServerCPUs != "" {
		out = append(out, fmt.Sprintf("**Pinned:** servers on CPUs %s, load tester (%d thread(s)) on CPUs %s.", st.ServerCPUs, st.Threads, st.ClientCPUs))
	}
	if r.A != "" || r.B != "" {
		out = append(out, fmt.Sprintf("**A:** `%s`; **B:** `%s`.", strings.ReplaceAll(r.A, "`", "'"), strings.ReplaceAll(r.B, "`", "'")))
	}
	for _, warn := range scenarioWarnings(r) {
		out = append(out, "⚠️ "+escapeMarkdown(warn))
	}
	return out
}
