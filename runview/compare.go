package runview

import (
	"errors"
	"fmt"
	"html/template"
	"math"

	"weaseldb/gate/stats"
	"weaseldb/internal/numfmt"
	"weaseldb/loadtester/result"
)

// The comparison page (load_tester compare): two or more runs overlaid —
// latency by percentile, req/s over time — their accounting side by side,
// and each run's difference from the first as a ratio, judged against the
// noise of the runs' own intervals with the gate's statistics (a pure
// package: medians with distribution-free intervals, the rank test).

// ErrFewRuns is a comparison of fewer than two runs.
var ErrFewRuns = errors.New("a comparison needs at least two runs")

// noiseLevel is the confidence of the intervals a difference is judged by.
const noiseLevel = 0.95

// CompareRun is one run to compare, named as the page shows it (its
// label or its file's name).
type CompareRun struct {
	Name   string
	Result *result.Result
}

// compareView is what the comparison page shows.
type compareView struct {
	Runs   []compareRow
	Charts []template.HTML
	Noise  []noiseRow
	Level  string
}

// compareRow is one run's line: its accounting, rate and latency, each
// with its ratio to the first run's.
type compareRow struct {
	Name, Target, DurationS, Instance              string
	Due, Answered, Failed, Unfinished, Dropped     int64
	RPS, P50, P99, P999, Max                       string
	RPSRatio, P50Ratio, P99Ratio, P999Ratio, First string
	IsFirst                                        bool
}

// noiseRow says whether one run's difference from the first stands out
// of the noise of their intervals, for one metric.
type noiseRow struct {
	Run, Metric, Ratio, Interval, RankTest, Verdict string
	Stands                                          bool
}

// ComparePage is the page comparing runs (at least two, the first the
// reference every ratio is against).
func ComparePage(runs []CompareRun, sources []string) (*Page, error) {
	if len(runs) < 2 {
		return nil, ErrFewRuns
	}
	for _, r := range runs {
		if Empty(r.Result) {
			return nil, fmt.Errorf("%s: %w", r.Name, ErrEmpty)
		}
	}
	v := &compareView{Level: numfmt.Format(100*noiseLevel, 0) + "%"}
	first := runs[0].Result
	for i, r := range runs {
		v.Runs = append(v.Runs, compareRowOf(r, first, i == 0))
		if i > 0 {
			v.Noise = append(v.Noise, noiseRows(runs[0], r)...)
		}
	}
	charts, err := compareCharts(runs)
	if err != nil {
		return nil, err
	}
	v.Charts = charts
	title := fmt.Sprintf("load_tester comparison: %d runs", len(runs))
	return &Page{Title: title, Kind: "comparison", Sources: sources, Compare: v}, nil
}

func compareRowOf(r CompareRun, first *result.Result, isFirst bool) compareRow {
	res := r.Result
	l, f := res.Latency, first.Latency
	row := compareRow{Name: r.Name, Target: res.Target, Instance: res.Instance, DurationS: numfmt.Format(res.DurationS, 2),
		Due: res.Due, Answered: res.Answered, Failed: res.Failed, Unfinished: res.Unfinished, Dropped: res.Dropped,
		RPS: numfmt.Format(res.RequestsPerSec, 0), P50: numfmt.Latency(l.P50), P99: numfmt.Latency(l.P99),
		P999: numfmt.Latency(l.P999), Max: numfmt.Latency(l.Max), IsFirst: isFirst}
	if !isFirst {
		row.RPSRatio = ratioText(res.RequestsPerSec, first.RequestsPerSec)
		row.P50Ratio = ratioText(float64(l.P50), float64(f.P50))
		row.P99Ratio = ratioText(float64(l.P99), float64(f.P99))
		row.P999Ratio = ratioText(float64(l.P999), float64(f.P999))
	}
	return row
}

// ratioText is b/a as "×1.05" ("–" when a is 0).
func ratioText(b, a float64) string {
	if a == 0 || math.IsNaN(b/a) {
		return "–"
	}
	return "×" + numfmt.Format(b/a, 3)
}

// noiseRows judges run b against the reference a on the series both
// have per interval: req/s and p99.
func noiseRows(a, b CompareRun) []noiseRow {
	metrics := []struct {
		name string
		of   func(result.Interval) float64
	}{
		{"req/s", func(iv result.Interval) float64 { return iv.RequestsPerSec }},
		{"p99", func(iv result.Interval) float64 { return float64(iv.P99NS) }},
	}
	var rows []noiseRow
	for _, m := range metrics {
		xa, xb := intervalSeries(a.Result, m.of), intervalSeries(b.Result, m.of)
		rows = append(rows, noiseRowOf(b.Name, m.name, xa, xb))
	}
	return rows
}

// intervalSeries is a metric of the run's whole intervals: a short last
// one (an interrupt, the window's end) and an empty one are left out.
func intervalSeries(res *result.Result, of func(result.Interval) float64) []float64 {
	longest := 0.0
	for _, iv := range res.Intervals {
		longest = max(longest, iv.LengthS)
	}
	var xs []float64
	for _, iv := range res.Intervals {
		if v := of(iv); iv.LengthS >= 0.9*longest && iv.Requests > 0 && v > 0 {
			xs = append(xs, v)
		}
	}
	return xs
}

// noiseRowOf is the ratio of b's median interval to a's with its interval
// at noiseLevel, and the rank test beside it: the difference stands out
// of the noise when the interval excludes 1.
func noiseRowOf(run, metric string, a, b []float64) noiseRow {
	row := noiseRow{Run: run, Metric: metric}
	if len(a) < 2 || len(b) < 2 {
		row.Ratio, row.Verdict = "–", fmt.Sprintf("not judged: %d and %d whole intervals (each run needs at least 2)", len(a), len(b))
		return row
	}
	ci := stats.UnpairedRatio(a, b, noiseLevel)
	rank := stats.CompareRuns(a, b)
	row.Ratio = "×" + numfmt.Format(ci.Ratio, 3)
	row.Interval = fmt.Sprintf("[%s, %s]", boundText(ci.Low), boundText(ci.High))
	row.RankTest = rank.String()
	switch {
	case math.IsInf(ci.Low, 0) || math.IsInf(ci.High, 0):
		row.Verdict = "not judged: too few intervals for a finite interval"
	case ci.Low > 1 || ci.High < 1:
		row.Stands, row.Verdict = true, "stands out of the noise"
	default:
		row.Verdict = "within the noise"
	}
	return row
}

func boundText(v float64) string {
	if math.IsInf(v, 0) {
		return "∞"
	}
	return numfmt.Format(v, 3)
}

// compareCharts overlays the runs: latency by percentile, req/s and p99
// over time.
func compareCharts(runs []CompareRun) ([]template.HTML, error) {
	var hists []namedHist
	withLatency := 0
	rps := Chart{ID: "compare-throughput", Title: "Requests per second, per interval",
		X: Axis{Label: "time since the measured start", Format: fmtSeconds}, Y: Axis{Label: "req/s", Format: fmtCount}}
	p99 := Chart{ID: "compare-p99", Title: "p99 latency, per interval",
		X: Axis{Label: "time since the measured start", Format: fmtSeconds}, Y: Axis{Label: "latency (log)", Log: true, Format: fmtLatency}}
	for _, r := range runs {
		h, err := decodeHist(r.Result.Histogram)
		if err != nil {
			return nil, fmt.Errorf("%s: histogram: %w", r.Name, err)
		}
		if h != nil && h.TotalCount() > 0 {
			withLatency++
		}
		hists = append(hists, namedHist{r.Name, h}) // one per run, so a run keeps its colour in every chart
		s, p := Series{Name: r.Name}, Series{Name: r.Name}
		for _, iv := range r.Result.Intervals {
			s.Points = append(s.Points, Point{iv.TS, iv.RequestsPerSec})
			if iv.P99NS > 0 {
				p.Points = append(p.Points, Point{iv.TS, float64(iv.P99NS)})
			}
		}
		rps.Series, p99.Series = append(rps.Series, s), append(p99.Series, p)
	}
	out := []template.HTML{}
	if withLatency > 0 {
		spectrum := spectrumChart("compare-spectrum", hists)
		out = append(out, spectrum.SVG())
	}
	return append(out, rps.SVG(), p99.SVG()), nil
}
