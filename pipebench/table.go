package pipebench

// The tables bench_pipeline prints: the throughput families' (a title and
// a column header per family, a row per case), the idle CPU's, and the
// latency family's, each with the legend that says what its columns mean.

import (
	"fmt"
	"io"
	"time"

	"weaseldb/artifacts"
	"weaseldb/internal/numfmt"
)

// CaseTable writes the throughput families' table to its writer: Begin
// ahead of each case (a family's first gets its title and the columns),
// Row after it.
type CaseTable struct {
	w      io.Writer
	family string
}

// NewCaseTable is a table on w.
func NewCaseTable(w io.Writer) *CaseTable { return &CaseTable{w: w} }

// Begin writes the title and the column header where c starts a family.
func (t *CaseTable) Begin(c Case) {
	if c.Family == t.family {
		return
	}
	t.family = c.Family
	fmt.Fprintf(t.w, "\n%s\n", familyTitle(c))
	fmt.Fprintf(t.w, "%-16s %-19s %6s %5s %11s %17s %14s %12s %8s\n",
		"impl", "strategy", "batch", "spin", "ns/item", "spread(min-max)", "items/s", "cpu-ns/item", "ratio")
}

// Row writes one case's result.
func (t *CaseTable) Row(res Result) {
	fmt.Fprintf(t.w, "%-16s %-19s %6d %5d %11.1f %17s %14.0f %12.1f %7.2fx\n",
		res.Impl, res.StrategyName(), res.Batch, res.SpinIters, res.NsPerItem,
		fmt.Sprintf("%.1f-%.1f", res.NsPerItemMin, res.NsPerItemMax), res.ItemsPerSec, res.CPUNsPerItem, res.RatioToFirst)
}

func familyTitle(c Case) string {
	switch c.Family {
	case FamilySingleStage:
		return fmt.Sprintf("== single_stage: 1 stage, %d spin iterations per item, pushes of %d, ring %d, %d items per run",
			c.SpinIters, c.Batch, 1<<c.LgSlots, c.Items)
	case FamilyBatch:
		return fmt.Sprintf("== batch: 1 stage, no spin work (the hand-off cost), ring %d, %d items per run", 1<<c.LgSlots, c.Items)
	case FamilyBatchSpin:
		return fmt.Sprintf("== batch_spin: 1 stage, %d spin iterations per item, ring %d, %d items per run", c.SpinIters, 1<<c.LgSlots, c.Items)
	default:
		return fmt.Sprintf("== wait_strategy: 2 stages, batch %d, %d spin iterations per item per stage, ring %d, %d items per run",
			c.Batch, c.SpinIters, 1<<c.LgSlots, c.Items)
	}
}

// WriteIdleHeader writes the idle table's title (the pipeline idle for d)
// and its columns.
func WriteIdleHeader(w io.Writer, d time.Duration) {
	fmt.Fprintf(w, "\nidle CPU: the wait_strategy pipeline (2 stages) idle for %v after a run; process CPU over wall time\n", d)
	fmt.Fprintf(w, "%-19s %16s\n", "strategy", "% of one core")
}

// WriteIdleRow writes one strategy's idle CPU.
func WriteIdleRow(w io.Writer, r IdleResult) {
	fmt.Fprintf(w, "%-19s %15.3f%%\n", r.Strategy, 100*r.CoreFraction)
}

// WriteCaseLegend says what the throughput table's columns mean, and how
// long the run took.
func WriteCaseLegend(w io.Writer, took time.Duration) {
	fmt.Fprintf(w, "\nns/item: median wall time per item over the runs; spread: fastest and slowest run;\n"+
		"cpu-ns/item: the process's user+system CPU per item (getrusage), producer and stages together;\n"+
		"ratio: items/s over the family's first case. Took %.1fs.\n", took.Seconds())
}

// WriteLatencyHeader writes the latency family's title (its sizes, from
// its first case c0), what the clock can resolve, and the columns.
func WriteLatencyHeader(w io.Writer, c0 LatencyCase, clock *artifacts.PipelineClock) {
	fmt.Fprintf(w, "\n== latency: single items, producer's publish -> stage's pickup (one_way) and a ping-pong round trip over two pipelines (round_trip);\n"+
		"   low = an item every %v (the stage idle between), saturation = back to back; ring %d; %d samples at low rate, %d at saturation (at most %v a case)\n",
		c0.Interval, 1<<c0.LgSlots, c0.Samples, c0.Samples*SaturationFactor, c0.MaxDuration)
	fmt.Fprintf(w, "   clock: %.1f ns a read (%d back-to-back reads), resolution %d ns, clocksource %s: figures below ~%.0f ns resolve nothing\n",
		clock.ReadNs, clock.Reads, clock.ResolutionNs, orDash(clock.Source), 2*clock.ReadNs)
	fmt.Fprintf(w, "%-9s %-19s %-9s %-10s %-10s %7s %9s %9s %9s %9s %12s\n",
		"impl", "strategy", "cores", "kind", "rate", "n", "p50", "p99", "p99.9", "max", "cpu-ns/item")
}

// WriteLatencyRow writes one case on one kind of cores: its percentiles,
// or why it was skipped.
func WriteLatencyRow(w io.Writer, r LatencyRow) {
	head := fmt.Sprintf("%-9s %-19s %-9s %-10s %-10s", r.Case.Impl, r.Case.StrategyName(), r.Cores, r.Case.Kind, r.Case.Rate)
	if r.Skip != "" {
		fmt.Fprintf(w, "%s skipped: %s\n", head, r.Skip)
		return
	}
	h := r.Result.Hist
	trunc := ""
	if r.Result.Truncated {
		trunc = " (time limit)"
	}
	fmt.Fprintf(w, "%s %7d %9s %9s %9s %9s %12.0f%s\n", head, r.Result.Measured,
		numfmt.Latency(h.ValueAtQuantile(50)), numfmt.Latency(h.ValueAtQuantile(99)), numfmt.Latency(h.ValueAtQuantile(99.9)), numfmt.Latency(h.Max()),
		float64(r.Result.CPU.Nanoseconds())/float64(max(r.Result.Measured, 1)), trunc)
}

// WriteLatencyLegend says where the dedicated and the shared cases ran
// and what the columns mean.
func WriteLatencyLegend(w io.Writer, plan LatencyPlan, sharedPlan string) {
	fmt.Fprintf(w, "dedicated: %s\nshared: %s\n", orDash(firstNonEmpty(plan.Why, "skipped: "+plan.Skip)), sharedPlan)
	fmt.Fprintf(w, "p50..max: one_way the hand-off, round_trip two hand-offs; cpu-ns/item: the process's CPU per item or round trip over the case\n")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
