package history

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"weaseldb/gate/result"
	"weaseldb/gate/stats"
)

// WriteReport prints every step found, then one line per series: gate
// history's output.
func WriteReport(w io.Writer, entries int, series []Series, o stats.ChangePointOptions) {
	o = o.WithDefaults()
	fmt.Fprintf(w, "history: %d runs; change points by E-divisive means, each split kept at p <= %g (%d permutations)\n",
		entries, o.Alpha, o.Permutations)
	steps := 0
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  scenario\tmetric\tbetween\tbefore\tafter\tchange\tp\t")
	for _, s := range series {
		for _, st := range s.Steps {
			steps++
			word := "better"
			if st.Worse {
				word = "WORSE"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s..%s\t%.6g\t%.6g\t%+.2f%% %s\t%.3f\t\n", s.Scenario, s.Metric, result.ShortHash(st.Prev), result.ShortHash(st.Commit),
				st.Before, st.After, 100*st.Change, word, st.PValue)
		}
	}
	if steps > 0 {
		tw.Flush()
	} else {
		fmt.Fprintln(w, "  no step found")
	}
	var skipped []string
	for _, s := range series {
		if s.Skipped != "" {
			skipped = append(skipped, fmt.Sprintf("%s %s (%s)", s.Scenario, s.Metric, s.Skipped))
		}
	}
	if len(skipped) > 0 {
		fmt.Fprintf(w, "not searched: %s\n", strings.Join(skipped, "; "))
	}
}
