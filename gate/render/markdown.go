package render

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"weaseldb/gate/result"
	"weaseldb/gate/verdict"
)

// MarkdownLinks say where the full result is, for the summary's last line.
type MarkdownLinks struct {
	JSONPath string // the --json file, if one was written
	RunURL   string // the CI run whose artifacts hold it (GitHub/Gitea Actions), if known
}

// WriteMarkdownFile writes the summary to path.
func WriteMarkdownFile(path string, r *result.Result, links MarkdownLinks) error {
	var b strings.Builder
	WriteMarkdown(&b, r, links)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// WriteMarkdown writes a short summary for a pull-request comment or
// $GITHUB_STEP_SUMMARY: the verdict (and the scenario that decided it),
// one table with a row per scenario, the cost tier's table, the checks a
// reviewer makes before trusting the verdict, and where the JSON is.
func WriteMarkdown(w io.Writer, r *result.Result, links MarkdownLinks) {
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
				medianCell(s.Metric, s.A), medianCell(s.Metric, s.B), formatRatio(s.CI.Ratio),
				formatInterval(s.CI), markdownVerdictCell(s.Decision))
		}
		fmt.Fprintln(w)
	}
	if hasCost(r) {
		writeCostMarkdown(w, r)
	}
	for _, item := range markdownChecks(r) {
		fmt.Fprintf(w, "- %s\n", item)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, markdownWhere(r.Decision, links))
}

func verdictBadge(d verdict.Decision) string {
	exit := d.ExitCode()
	switch {
	case d.Verdict == verdict.Pass && d.NoiseForgiven:
		return fmt.Sprintf("✅ pass, noise forgiven (exit %d)", exit)
	case d.Verdict == verdict.Pass:
		return fmt.Sprintf("✅ pass (exit %d)", exit)
	case d.Verdict == verdict.Regression:
		return fmt.Sprintf("❌ regression (exit %d)", exit)
	default:
		return fmt.Sprintf("⚠️ could not judge (exit %d)", exit)
	}
}

func markdownVerdictCell(d verdict.Decision) string {
	badge := "⚠️"
	switch d.Verdict {
	case verdict.Pass:
		badge = "✅"
	case verdict.Regression:
		badge = "❌"
	}
	return badge + " " + escapeMarkdown(verdictCell(d))
}

// markdownChecks are the run's checks, each over every scenario.
func markdownChecks(r *result.Result) []string {
	var out []string
	if line := tolerancesLine(r.Scenarios); line != "" && ranTime(r) {
		out = append(out, "**Rule:** "+escapeMarkdown(line)+".")
	}
	var noise, rounds, clientBound, faults []string
	cbIcon, faultIcon := "✅", "✅"
	idle := 0.0
	for _, s := range r.Scenarios {
		if n := noiseText(&s.Judgement); n != "" {
			noise = append(noise, fmt.Sprintf("`%s` %s", s.Name, escapeMarkdown(n)))
		}
		if s.Rounds > 0 {
			rounds = append(rounds, fmt.Sprintf("`%s` %d (%s: %s)", s.Name, s.Rounds, s.StopReason, escapeMarkdown(s.StopDetail)))
		}
		var cb []string
		for _, side := range []result.Side{s.A, s.B} {
			if side.ClientBoundRuns > 0 && !side.FromBaselineFile {
				cb = append(cb, fmt.Sprintf("%s %d of %d", side.Name, side.ClientBoundRuns, len(side.SamplesRPS)))
			}
		}
		if len(cb) > 0 {
			cbIcon = "⚠️"
			clientBound = append(clientBound, fmt.Sprintf("`%s` %s runs", s.Name, strings.Join(cb, ", ")))
		}
		for _, p := range s.Problems {
			if p.Code != verdict.ReasonClientBound && p.Code != verdict.ReasonNoisy {
				faultIcon = "❌"
				faults = append(faults, fmt.Sprintf("`%s`: `%s`: %s", s.Name, p.Code, escapeMarkdown(p.Detail)))
			}
		}
		idle = math.Max(idle, math.Max(s.A.MaxOtherIdleCPU, s.B.MaxOtherIdleCPU))
	}
	if len(rounds) > 0 {
		out = append(out, fmt.Sprintf("**Rounds** (%d to start, at most %d): %s.",
			r.RoundsPlan.Initial, r.RoundsPlan.Max, strings.Join(rounds, ", ")))
	}
	if len(noise) > 0 {
		out = append(out, "**Noise:** "+strings.Join(noise, "; ")+".")
	}
	if len(clientBound) == 0 {
		clientBound = []string{"no run"}
	}
	rule := "a side is not judged above the share in the JSON's policy"
	if len(r.Scenarios) > 0 {
		rule = fmt.Sprintf("a side is not judged above %.0f%%", r.Scenarios[0].Policy.MaxClientBound*100)
		if r.Scenarios[0].Policy.MaxClientBound == 0 {
			rule = "--allow-client-bound: judged whatever the share"
		}
	}
	out = append(out, fmt.Sprintf("%s **Client-bound:** %s (%s).", cbIcon, strings.Join(clientBound, "; "), rule))
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
		out = append(out, fmt.Sprintf("**A:** `%s`%s; **B:** `%s`.", strings.ReplaceAll(r.A, "`", "'"), escapeMarkdown(baselineNote(r)),
			strings.ReplaceAll(r.B, "`", "'")))
	}
	for _, warn := range allWarnings(r) {
		out = append(out, "⚠️ "+escapeMarkdown(warn))
	}
	return out
}

func markdownWhere(d verdict.Decision, links MarkdownLinks) string {
	line := fmt.Sprintf("Exit %d (`%s`)", d.ExitCode(), d.ReasonCode)
	if links.JSONPath != "" {
		line += fmt.Sprintf("; every run is in `%s`", strings.ReplaceAll(links.JSONPath, "`", "'"))
		if links.RunURL != "" {
			line += fmt.Sprintf(" (in the [artifacts of this run](%s))", links.RunURL)
		}
	} else if links.RunURL != "" {
		line += fmt.Sprintf("; [this run](%s)", links.RunURL)
	}
	return line + "."
}

// escapeMarkdown keeps a reason on one line and stops it from opening
// markup (a server's output can contain anything).
func escapeMarkdown(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	r := strings.NewReplacer("|", "\\|", "<", "&lt;", ">", "&gt;", "*", "\\*", "_", "\\_", "`", "\\`", "[", "\\[", "]", "\\]")
	return r.Replace(s)
}
