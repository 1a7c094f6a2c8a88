package gate

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// MarkdownLinks say where the full result is, for the summary's last line.
type MarkdownLinks struct {
	JSONPath string // the --json file, if one was written
	RunURL   string // the CI run whose artifacts hold it (GitHub/Gitea Actions), if known
}

// WriteMarkdownFile writes the summary to path.
func WriteMarkdownFile(path string, r *Result, links MarkdownLinks) error {
	var b strings.Builder
	WriteMarkdown(&b, r, links)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// WriteMarkdown writes a short summary for a pull-request comment or
// $GITHUB_STEP_SUMMARY: the verdict, the ratio and its interval, the
// rounds and why they stopped, the client-bound and noise checks, and
// where the JSON is.
func WriteMarkdown(w io.Writer, r *Result, links MarkdownLinks) {
	fmt.Fprintf(w, "### Regression gate: %s\n\n", verdictBadge(r.Decision))
	if line := markdownRatio(r); line != "" {
		fmt.Fprintln(w, line)
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "> %s\n\n", escapeMarkdown(r.Reason))
	writeSidesTable(w, r)
	fmt.Fprintln(w)
	for _, item := range markdownChecks(r) {
		fmt.Fprintf(w, "- %s\n", item)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, markdownWhere(r.Decision, links))
}

func verdictBadge(d Decision) string {
	exit := d.ExitCode()
	switch {
	case d.Verdict == Pass && d.NoiseForgiven:
		return fmt.Sprintf("✅ pass, noise forgiven (exit %d)", exit)
	case d.Verdict == Pass:
		return fmt.Sprintf("✅ pass (exit %d)", exit)
	case d.Verdict == Regression:
		return fmt.Sprintf("❌ regression (exit %d)", exit)
	default:
		return fmt.Sprintf("⚠️ could not judge (exit %d)", exit)
	}
}

// markdownRatio is the headline: the ratio, its interval and the rule.
func markdownRatio(r *Result) string {
	ci := r.CI
	if math.IsNaN(ci.Ratio) || ci.Ratio == 0 {
		return ""
	}
	rule := fmt.Sprintf("Tolerance %.0f%%: a regression needs the ratio below %.3f and the interval below 1", r.Policy.Tolerance*100, r.Policy.Floor)
	if r.Policy.PassFloor > 0 {
		rule += fmt.Sprintf("; a pass needs the interval above %.3f", r.Policy.PassFloor)
	}
	return fmt.Sprintf("**B/%s = %.3f**, %.0f%% CI [%.3f, %.3f]. %s.", r.A.Name, ci.Ratio, ci.Level*100, ci.Low, ci.High, rule)
}

func writeSidesTable(w io.Writer, r *Result) {
	fmt.Fprintln(w, "| side | binary | runs | median req/s | spread |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|")
	for _, s := range []Side{r.A, r.B} {
		if s.Name == "" {
			continue
		}
		bin := "`" + strings.ReplaceAll(s.Binary, "`", "'") + "`"
		if s.FromBaselineFile {
			bin += " (recorded baseline)"
		}
		fmt.Fprintf(w, "| %s | %s | %d | %s | %s |\n", s.Name, bin, len(s.SamplesRPS), formatRPS(s.MedianRPS), formatSpread(s.Spread))
	}
}

// markdownChecks are the lines a reviewer checks before trusting the verdict.
func markdownChecks(r *Result) []string {
	var out []string
	if r.Rounds > 0 {
		out = append(out, fmt.Sprintf("**Rounds:** %d (%d to start, at most %d), stopped: %s, %s.",
			r.Rounds, r.RoundsPlan.Initial, r.RoundsPlan.Max, r.StopReason, escapeMarkdown(r.StopDetail)))
	}
	if r.CI.Paired && r.CI.Samples > 0 {
		out = append(out, fmt.Sprintf("**Noise:** B/A per round (fresh servers each round): %s; the interval is distribution-free over those %d ratios (%.1f%% actual confidence).",
			roundRatioRange(&r.Judgement), r.CI.Samples, r.CI.Confidence*100))
	} else if r.B.Name != "" && len(r.B.SamplesRPS) > 0 {
		out = append(out, fmt.Sprintf("**Noise:** B's runs spread %s, the baseline's %s (unpaired: the machine's drift since the baseline is not cancelled).",
			formatSpread(r.B.Spread), formatSpread(r.A.Spread)))
	}
	out = append(out, clientBoundCheck(&r.Judgement), faultCheck(&r.Judgement))
	if idle := math.Max(r.A.MaxOtherIdleCPU, r.B.MaxOtherIdleCPU); idle > 0 {
		icon := "✅"
		if idle > 0.05 {
			icon = "⚠️"
		}
		out = append(out, fmt.Sprintf("%s **Idle server:** the server not being measured used at most %.0f%% of a core.", icon, idle*100))
	}
	if st := r.Settings; st.ServerCPUs != "" {
		out = append(out, fmt.Sprintf("**Pinned:** servers on CPUs %s, load tester (%d thread(s)) on CPUs %s.", st.ServerCPUs, st.Threads, st.ClientCPUs))
	}
	for _, warn := range r.Warnings {
		out = append(out, "⚠️ "+escapeMarkdown(warn))
	}
	return out
}

func clientBoundCheck(r *Judgement) string {
	var parts []string
	worst := 0.0
	for _, s := range []Side{r.A, r.B} {
		if s.Name == "" || s.FromBaselineFile || len(s.SamplesRPS) == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %d of %d runs", s.Name, s.ClientBoundRuns, len(s.SamplesRPS)))
		worst = math.Max(worst, float64(s.ClientBoundRuns)/float64(len(s.SamplesRPS)))
	}
	if len(parts) == 0 {
		return "**Client-bound:** nothing measured."
	}
	icon := "✅"
	if worst > 0 {
		icon = "⚠️"
	}
	rule := fmt.Sprintf("a side is not judged above %.0f%%", r.Policy.MaxClientBound*100)
	if r.Policy.MaxClientBound == 0 {
		rule = "--allow-client-bound: judged whatever the share"
	}
	return fmt.Sprintf("%s **Client-bound:** %s (%s).", icon, strings.Join(parts, ", "), rule)
}

func faultCheck(r *Judgement) string {
	var faults []string
	for _, p := range r.Problems {
		if p.Code != ReasonClientBound && p.Code != ReasonNoisy {
			faults = append(faults, fmt.Sprintf("`%s`: %s", p.Code, escapeMarkdown(p.Detail)))
		}
	}
	if len(faults) == 0 {
		return "✅ **Servers and load tester:** no failed, unfinished or dropped requests; no server failed."
	}
	return "❌ **Servers and load tester:** " + strings.Join(faults, "; ")
}

func markdownWhere(d Decision, links MarkdownLinks) string {
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
