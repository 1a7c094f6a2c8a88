package gate

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteTable prints the verdict table: one row per side, then the ratio,
// its interval, the rounds and why they stopped, the tolerance and the
// verdict with its reason.
func WriteTable(w io.Writer, r *Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "side\truns\tmedian req/s\tspread\tclient-bound\terrors\tunclean\t")
	for _, s := range []Side{r.A, r.B} {
		if s.Name == "" {
			continue
		}
		cb, errs, unclean := strconv.Itoa(s.ClientBoundRuns), strconv.Itoa(s.ErrorRuns), strconv.Itoa(s.UncleanRuns)
		if s.FromBaselineFile {
			cb, errs, unclean = "-", "-", "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n", s.Name, len(s.SamplesRPS), formatRPS(s.MedianRPS),
			formatSpread(s.Spread), cb, errs, unclean)
	}
	tw.Flush()
	for _, s := range []Side{r.A, r.B} {
		if s.Name != "" {
			fmt.Fprintf(w, "  %s: %s%s\n", s.Name, s.Binary, targetNote(s))
		}
	}
	if st := r.Settings; st.ServerCPUs != "" {
		fmt.Fprintf(w, "  pinned: servers on CPUs %s, load tester (%d thread(s)) on CPUs %s\n", st.ServerCPUs, st.Threads, st.ClientCPUs)
	}
	if line := ratioLine(&r.Judgement); line != "" {
		fmt.Fprintln(w, line)
	}
	if line := roundsLine(&r.Judgement); line != "" {
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w, policyLine(&r.Judgement))
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	fmt.Fprintf(w, "verdict: %s (exit %d): %s\n", strings.ToUpper(string(r.Verdict)), r.ExitCode, r.Reason)
}

// ratioLine is "ratio B/A 0.981  95% CI [...] (how)  Mann-Whitney ...", or
// "" when nothing was measured.
func ratioLine(r *Judgement) string {
	ci := r.CI
	if math.IsNaN(ci.Ratio) || ci.Ratio == 0 {
		return ""
	}
	how := fmt.Sprintf("ratio of medians, unpaired; each median's interval at %.1f%%", math.Sqrt(ci.Level)*100)
	if ci.Paired {
		how = fmt.Sprintf("median of %d per-round ratios, %s; distribution-free interval, %.1f%% actual",
			ci.Samples, roundRatioRange(r), ci.Confidence*100)
	}
	return fmt.Sprintf("ratio B/%s %.3f  %.0f%% CI [%.3f, %.3f] (%s)  Mann-Whitney %s",
		r.A.Name, ci.Ratio, ci.Level*100, ci.Low, ci.High, how, r.Rank)
}

// roundRatioRange says how far B/A moved between rounds: the whole range,
// which a reviewer reads as "how noisy", beside the robust spread (the
// median absolute deviation) that one outlier round cannot inflate.
func roundRatioRange(r *Judgement) string {
	if len(r.RoundRatios) == 0 {
		return "round to round " + formatSpread(r.RatioSpread)
	}
	lo, hi := r.RoundRatios[0], r.RoundRatios[0]
	for _, x := range r.RoundRatios {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return fmt.Sprintf("rounds %.3f to %.3f, median deviation %s", lo, hi, formatSpread(r.RatioSpread))
}

// roundsLine says how many rounds ran and why they stopped.
func roundsLine(r *Judgement) string {
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

// policyLine states the thresholds.
func policyLine(r *Judgement) string {
	// A tolerance of 50% or more leaves no floor: say so rather than print a negative ratio.
	passRule := "a pass needs no CI floor"
	if r.Policy.PassFloor > 0 {
		passRule = fmt.Sprintf("a pass needs the CI above %.3f", r.Policy.PassFloor)
	}
	return fmt.Sprintf("tolerance %.0f%%: regression below %.3f and the CI below 1; %s", r.Policy.Tolerance*100, r.Policy.Floor, passRule)
}

func targetNote(s Side) string {
	if s.FromBaselineFile {
		return " (recorded baseline)"
	}
	if s.MaxOtherIdleCPU > 0.05 {
		return fmt.Sprintf(" (the other server used %.0f%% of a core while this one was measured)", s.MaxOtherIdleCPU*100)
	}
	return ""
}

// WriteJSON writes the result as indented JSON; a statistic that could not
// be computed (NaN, which JSON lacks) is written as 0.
func WriteJSON(path string, r *Result) error {
	return writeJSON(path, jsonSafe(r))
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding result: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// jsonSafe returns a copy of r whose NaN and Inf floats are zeroed in the
// summary fields (encoding/json refuses them); samples are always finite.
func jsonSafe(r *Result) *Result {
	c := *r
	c.Judgement = r.Judgement.jsonSafe()
	return &c
}

// jsonSafe is a copy of j with its NaN and Inf statistics written as 0.
func (j Judgement) jsonSafe() Judgement {
	c := j
	fix := func(f *float64) {
		if math.IsNaN(*f) || math.IsInf(*f, 0) {
			*f = 0
		}
	}
	for _, f := range []*float64{&c.CI.Ratio, &c.CI.Low, &c.CI.High, &c.CI.Confidence, &c.Rank.P, &c.RatioSpread,
		&c.A.MedianRPS, &c.A.Spread, &c.B.MedianRPS, &c.B.Spread} {
		fix(f)
	}
	c.Looks = slices.Clone(j.Looks)
	for i := range c.Looks {
		fix(&c.Looks[i].Ratio)
		fix(&c.Looks[i].Low)
		fix(&c.Looks[i].High)
	}
	return c
}

func formatRPS(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	s := strconv.FormatInt(int64(math.Round(v)), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func formatSpread(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("±%.1f%%", v*100)
}
