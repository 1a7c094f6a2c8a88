package gate

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteTable prints the verdict table: one row per side, then the ratio,
// its interval, the rank test, the tolerance and the verdict with its reason.
func WriteTable(w io.Writer, r *Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "side\truns\tmedian req/s\tspread\tclient-bound\terrors\t")
	for _, s := range []Side{r.A, r.B} {
		if s.Name == "" {
			continue
		}
		cb, errs := strconv.Itoa(s.ClientBoundRuns), strconv.Itoa(s.ErrorRuns)
		if s.FromBaselineFile {
			cb, errs = "-", "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t\n", s.Name, len(s.SamplesRPS), formatRPS(s.MedianRPS),
			formatSpread(s.Spread), cb, errs)
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
	if !math.IsNaN(r.CI.Ratio) && r.CI.Ratio != 0 {
		pairing := "unpaired"
		if r.CI.Paired {
			pairing = "paired"
		}
		fmt.Fprintf(w, "ratio B/%s %.3f  %.0f%% CI [%.3f, %.3f] (%s bootstrap, %d resamples)  Mann-Whitney p(B<A)=%.3g\n",
			r.A.Name, r.CI.Ratio, r.CI.Level*100, r.CI.Low, r.CI.High, pairing, r.CI.Resamples, r.Rank.P)
	}
	// A tolerance of 40% or more leaves no floor: say so rather than print a negative ratio.
	passRule := "a pass needs no CI floor"
	if r.Policy.PassFloor > 0 {
		passRule = fmt.Sprintf("a pass needs the CI above %.3f", r.Policy.PassFloor)
	}
	fmt.Fprintf(w, "tolerance %.0f%%: regression below %.3f; %s\n", r.Policy.Tolerance*100, r.Policy.Floor, passRule)
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	fmt.Fprintf(w, "verdict: %s (exit %d): %s\n", strings.ToUpper(string(r.Verdict)), r.ExitCode, r.Reason)
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
	data, err := json.MarshalIndent(jsonSafe(r), "", "  ")
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
	fix := func(f *float64) {
		if math.IsNaN(*f) || math.IsInf(*f, 0) {
			*f = 0
		}
	}
	for _, f := range []*float64{&c.CI.Ratio, &c.CI.Low, &c.CI.High, &c.Rank.P, &c.Rank.U,
		&c.A.MedianRPS, &c.A.Spread, &c.B.MedianRPS, &c.B.Spread} {
		fix(f)
	}
	return &c
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
