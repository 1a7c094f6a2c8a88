package render

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"weaseldb/gate/result"
)

// The cost tier's part of a result's table and markdown.

// hasCost reports whether any scenario was judged by the cost tier.
func hasCost(r *result.Result) bool {
	for _, s := range r.Scenarios {
		if s.Cost != nil {
			return true
		}
	}
	return false
}

// ranTime reports whether the time tier ran (the rounds' table is empty
// otherwise).
func ranTime(r *result.Result) bool {
	for _, s := range r.Scenarios {
		if len(s.Tiers) == 0 || slices.Contains(s.Tiers, result.TierTime) {
			return true
		}
	}
	return len(r.Scenarios) == 0
}

// costHeadline says how the cost was counted, from the first judged scenario.
func costHeadline(r *result.Result) string {
	for _, s := range r.Scenarios {
		if c := s.Cost; c != nil && c.Requests > 0 {
			return fmt.Sprintf("cost tier: instructions per request under callgrind, filtered (docs/gate.md); %d requests at %g/s a run, A and B at once, tolerance %.2f%%",
				c.Requests, c.Rate, 100*c.Tolerance)
		}
	}
	return "cost tier: instructions per request under callgrind"
}

// writeCostTable prints the cost tier's rows and each scenario's reason.
func writeCostTable(w io.Writer, r *result.Result) {
	fmt.Fprintf(w, "  %s\n", costHeadline(r))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  scenario\truns\tA instr/req\tB instr/req\tB/A\trun pairs\tunfiltered B/A\tallocs/req A, B\tsyscalls/req A, B\tverdict")
	for _, s := range r.Scenarios {
		c := s.Cost
		if c == nil {
			continue
		}
		fmt.Fprintf(tw, "  %s\t%d+%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, len(c.A.Runs), len(c.B.Runs),
			costNumber(c.A.InstructionsPerRequest), costNumber(c.B.InstructionsPerRequest), costRatio(c.Ratio), costPairs(c),
			costRatio(c.UnfilteredRatio), costPair2(c.A.AllocsPerRequest, c.B.AllocsPerRequest),
			costPair2(c.A.SyscallsPerRequest, c.B.SyscallsPerRequest), costVerdictCell(c))
	}
	tw.Flush()
	for _, s := range r.Scenarios {
		if s.Cost != nil {
			fmt.Fprintf(w, "%s cost: %s\n", s.Name, s.Cost.Reason)
		}
	}
}

// writeCostMarkdown is the cost tier's table for a pull-request comment.
func writeCostMarkdown(w io.Writer, r *result.Result) {
	fmt.Fprintf(w, "%s.\n\n", escapeMarkdown(strings.ToUpper(costHeadline(r)[:1])+costHeadline(r)[1:]))
	fmt.Fprintln(w, "| scenario | A instr/req | B instr/req | B/A | run pairs | unfiltered B/A | allocs/req A, B | verdict |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---|---:|---|---|")
	for _, s := range r.Scenarios {
		c := s.Cost
		if c == nil {
			continue
		}
		fmt.Fprintf(w, "| `%s` | %s | %s | %s | %s | %s | %s | %s |\n", s.Name, costNumber(c.A.InstructionsPerRequest),
			costNumber(c.B.InstructionsPerRequest), costRatio(c.Ratio), costPairs(c), costRatio(c.UnfilteredRatio),
			costPair2(c.A.AllocsPerRequest, c.B.AllocsPerRequest), markdownVerdictCell(c.Decision()))
	}
	fmt.Fprintln(w)
	for _, s := range r.Scenarios {
		if s.Cost != nil && s.Cost.Verdict != result.CostPass {
			fmt.Fprintf(w, "- `%s` cost: %s\n", s.Name, escapeMarkdown(s.Cost.Reason))
		}
	}
}

func costNumber(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", v)
}

func costRatio(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.4f", v)
}

func costPairs(c *result.CostJudgement) string {
	if c.High <= 0 {
		return "-"
	}
	return fmt.Sprintf("[%.4f, %.4f]", c.Low, c.High)
}

func costPair2(a, b float64) string { return fmt.Sprintf("%.2f, %.2f", a, b) }

func costVerdictCell(c *result.CostJudgement) string {
	v := strings.ToUpper(strings.ReplaceAll(string(c.Verdict), "_", " "))
	if c.NoiseForgiven {
		v += " (noise forgiven)"
	}
	return v
}
