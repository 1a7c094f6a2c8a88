package reports

import (
	"math"

	"weaseldb/artifacts"
	"weaseldb/internal/numfmt"
)

// commitStages are the commit pipeline's stages in order, the label
// values of the server's stage metrics.
var commitStages = []string{"sequence", "resolve", "persist", "release"}

// stageWaitSection shows where a request waits inside the server, beside
// the latency curve: per setup and commit stage, how long a batch waited
// before the stage took it (weaseldb_pipeline_stage_wait_seconds over each
// round's measured window, the rounds the setup's figures use merged).
// A run whose server did not export the histogram has no such section.
func (w *writer) stageWaitSection() error {
	if !w.hasStageWaits() {
		return nil
	}
	w.p("## Where a request waits in the server\n\n")
	w.p("How long a batch waited before each commit stage took it, from the server's `weaseldb_pipeline_stage_wait_seconds` "+
		"(two `/metrics` scrapes around each round's measured window; the rounds each setup's figures use, merged). "+
		"For sequence the wait runs from the read that carried the batch's first request, so it includes the event loop's turn; "+
		"for the other stages, from the stage before releasing the batch. A batch's wait is its oldest request's. "+
		"p50 and p99 are interpolated within the histogram's buckets (×3 apart) as Prometheus's `histogram_quantile` does. "+
		"Rows: `stage_wait.<stage>` of each round's sample (`rounds/<setup>-r<k>.sample.json`, named in %s). "+
		"The histogram is off by default; this run's servers had it on (`commit.pipeline_stage_waits`, `STAGE_WAITS=1`), "+
		"which costs them CPU (docs/weaseldb.md, Metrics), so every figure of this report was measured with it.\n\n", artifacts.SetupsFile)
	w.p("| setup | stage | batches | mean | p50 | p99 |\n|---|---|---|---|---|---|\n")
	for _, n := range w.setups {
		waits := mergedStageWaits(n.used)
		for _, stage := range commitStages {
			sw, ok := waits[stage]
			if !ok || sw.Batches() == 0 {
				w.p("| %s | %s | not measured | | | |\n", n.view.Setup.Name, stage)
				continue
			}
			p50, _ := sw.Quantile(0.5)
			p99, _ := sw.Quantile(0.99)
			w.p("| %s | %s | %s | %s | %s | %s |\n", n.view.Setup.Name, stage, numfmt.Format(float64(sw.Batches()), 0),
				fmtWait(sw.SumS/float64(sw.Batches())), fmtWait(p50), fmtWait(p99))
		}
	}
	w.p("\n")
	return nil
}

// hasStageWaits says whether any round's sample holds stage waits.
func (w *writer) hasStageWaits() bool {
	for _, n := range w.setups {
		for _, r := range n.used {
			if r.Sample != nil && r.Sample.StageWait != nil {
				return true
			}
		}
	}
	return false
}

// mergedStageWaits adds the rounds' waits stage by stage; a stage whose
// rounds' buckets differ is left out (rounds of different builds).
func mergedStageWaits(rounds []*Round) map[string]artifacts.StageWait {
	out := map[string]artifacts.StageWait{}
	bad := map[string]bool{}
	for _, r := range rounds {
		if r.Sample == nil {
			continue
		}
		for stage, sw := range r.Sample.StageWait {
			sum := out[stage]
			if !sum.Add(sw) {
				bad[stage] = true
			}
			out[stage] = sum
		}
	}
	for stage := range bad {
		delete(out, stage)
	}
	return out
}

// fmtWait prints a wait in seconds in the unit that suits it.
func fmtWait(s float64) string {
	ns := s * 1e9
	switch {
	case math.Abs(ns) >= 1e9:
		return numfmt.Format(ns/1e9, 2) + " s"
	case math.Abs(ns) >= 1e6:
		return numfmt.Format(ns/1e6, 2) + " ms"
	case math.Abs(ns) >= 1e3:
		return numfmt.Format(ns/1e3, 1) + " µs"
	}
	return numfmt.Format(ns, 0) + " ns"
}
