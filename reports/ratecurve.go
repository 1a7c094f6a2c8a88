package reports

import (
	"errors"
	"fmt"
	"image/color"
	"io/fs"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"weaseldb/internal/numfmt"
	"weaseldb/loadtester/result"
)

// The throughput-latency curve of the fitted setup's shape and the highest
// rate that meets a p99 objective (scripts/rate_curve.sh writes the two
// artifacts: load_tester --rate-steps and --find-rate documents). Every
// figure the section prints names its artifact and field; the curve's PNG
// is drawn from the same rows.

// Artifacts of scripts/rate_curve.sh, in the run directory.
const (
	RateCurveFile = "rate_curve.json" // load_tester --rate-steps: a row per rate
	KneeFile      = "knee.json"       // load_tester --find-rate: the search and its steps
	RateCurvePNG  = "rate_curve.png"
	// RateCurveServerConfig is the config the curve's server read: the
	// fitted setup's shape (one I/O loop, WaitIfStageEmpty) on the seed's work.
	RateCurveServerConfig = "rate_curve_server.toml"
)

var colorGreen = color.RGBA{R: 44, G: 160, B: 44, A: 255}

// RateCurve is what the section draws from: the curve's steps and, when the
// search ran, its document.
type RateCurve struct {
	Curve *result.StepsResult
	Knee  *result.StepsResult // nil when not measured
}

// ReadRateCurve reads the run directory's curve and knee documents; a
// missing curve is fs.ErrNotExist (the section then says "not measured"),
// a missing knee leaves Knee nil.
func ReadRateCurve(dir string) (*RateCurve, error) {
	curve, err := result.ReadSteps(filepath.Join(dir, RateCurveFile))
	if err != nil {
		return nil, err
	}
	rc := &RateCurve{Curve: curve}
	if knee, err := result.ReadSteps(filepath.Join(dir, KneeFile)); err == nil {
		rc.Knee = knee
	} else if !errors.Is(err, fs.ErrNotExist) {
		return rc, err
	}
	return rc, nil
}

// objective is the curve's first objective (the one drawn), or none.
func (rc *RateCurve) objective() (result.Objective, bool) {
	for _, doc := range []*result.StepsResult{rc.Knee, rc.Curve} {
		if doc != nil && len(doc.Objectives) > 0 {
			return doc.Objectives[0], true
		}
	}
	return result.Objective{}, false
}

// PlotRateCurve draws p50, p99 and p99.9 (corrected latency, log axis)
// against the rate each step achieved, the objective as a dashed line and
// the rate the search found as a dotted one.
func PlotRateCurve(path string, rc *RateCurve) error {
	p := plot.New()
	p.Title.Text = "Latency against throughput (" + RateCurveFile + ")"
	p.X.Label.Text = "throughput achieved, open loop (thousand requests/s)"
	p.Y.Label.Text = "latency (ms, log scale)"
	p.Add(plotter.NewGrid())
	steps := rc.Curve.Steps
	lines := []struct {
		name string
		of   func(l result.Latency) int64
		c    color.Color
	}{
		{"p50", func(l result.Latency) int64 { return l.P50 }, colorBlue},
		{"p99", func(l result.Latency) int64 { return l.P99 }, colorOrange},
		{"p99.9", func(l result.Latency) int64 { return l.P999 }, colorGreen},
	}
	lo, hi := math.Inf(1), 0.0
	xMax := 0.0
	for _, st := range steps {
		xMax = math.Max(xMax, st.RateAchieved/1e3)
	}
	for _, l := range lines {
		var pts plotter.XYs
		for _, st := range steps {
			if v := l.of(st.Latency); v > 0 && st.RateAchieved > 0 {
				ms := float64(v) / 1e6
				pts = append(pts, plotter.XY{X: st.RateAchieved / 1e3, Y: ms})
				lo, hi = math.Min(lo, ms), math.Max(hi, ms)
			}
		}
		if len(pts) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return fmt.Errorf("rate curve plot: %w", err)
		}
		line.Color, points.Color = l.c, l.c
		points.Radius = vg.Points(2)
		p.Add(line, points)
		p.Legend.Add(l.name, line)
	}
	if obj, ok := rc.objective(); ok && xMax > 0 {
		ms := float64(obj.LimitNs) / 1e6
		lo, hi = math.Min(lo, ms), math.Max(hi, ms)
		lim, err := plotter.NewLine(plotter.XYs{{X: 0, Y: ms}, {X: xMax * 1.05, Y: ms}})
		if err != nil {
			return fmt.Errorf("rate curve plot: %w", err)
		}
		lim.Color = colorGrey
		lim.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(lim)
		p.Legend.Add("objective "+obj.Percentile+" ≤ "+formatLimit(obj.LimitNs), lim)
	}
	if k := rc.Knee; k != nil && k.Search != nil && k.Search.Rate > 0 && hi > 0 {
		x := k.Search.Rate / 1e3
		knee, err := plotter.NewLine(plotter.XYs{{X: x, Y: lo / 1.5}, {X: x, Y: hi * 1.5}})
		if err != nil {
			return fmt.Errorf("rate curve plot: %w", err)
		}
		knee.Color = colorGrey
		knee.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
		p.Add(knee)
		p.Legend.Add(fmt.Sprintf("highest rate meeting it: %s/s", numfmt.Format(k.Search.Rate, 0)), knee)
	}
	if hi > 0 {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		// A decade of headroom above the highest point: the legend sits
		// there, top left, above the lines (latencies rise to the right,
		// so the left of the plot is where they are lowest).
		p.Y.Min, p.Y.Max = lo/1.5, hi*15
	}
	p.X.Min = 0
	p.X.Max = xMax * 1.05
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.Padding = vg.Points(3)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Legend.YOffs = -vg.Points(2)
	p.Legend.XOffs = vg.Points(2)
	return savePNG(path, plotWidthIn, plotHeightIn, p)
}

// formatLimit prints an objective's limit the way --slo takes it (1ms, 500µs).
func formatLimit(ns int64) string {
	switch {
	case ns%1e9 == 0:
		return fmt.Sprintf("%ds", ns/1e9)
	case ns%1e6 == 0:
		return fmt.Sprintf("%dms", ns/1e6)
	case ns%1e3 == 0:
		return fmt.Sprintf("%dµs", ns/1e3)
	}
	return fmt.Sprintf("%dns", ns)
}

// rateCurveSection renders the curve and the knee: the plot, a row per
// step, and the search's answer with its bracket. Without the curve's
// artifact it says so (scripts/rate_curve.sh was not run).
func (w *writer) rateCurveSection() error {
	w.p("## Latency under load: the throughput-latency curve\n\n")
	rc, err := ReadRateCurve(w.run.Dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		w.p("_Not measured: no %s in the run (scripts/rate_curve.sh writes it)._\n\n", RateCurveFile)
		return nil
	case err != nil && rc == nil:
		w.p("_Not measured: %s._\n\n", strings.ReplaceAll(err.Error(), "\n", "; "))
		return nil
	}
	curve := rc.Curve
	w.p("The fitted setup's shape on shared cores (the server: one I/O loop, WaitIfStageEmpty, the seed's work "+
		"per request, `%s`; %s), driven open loop by `load_tester --rate-steps` at rising rates, "+
		"each step with its own warm-up and every due request accounted for. Latency is the corrected "+
		"one, from each request's intended send time; service time is from its actual send. "+
		"Rows: %s `steps[i]`.\n\n", RateCurveServerConfig, curveShape(curve), RateCurveFile)
	if err := w.image(RateCurvePNG, "Latency against throughput: p50, p99 and p99.9 with the objective", func(path string) error {
		return PlotRateCurve(path, rc)
	}); err != nil {
		return err
	}
	obj, hasObj := rc.objective()
	head := "| rate asked | achieved | p50 | p99 | p99.9 | service p99 | unfinished | dropped | client-bound |"
	rule := "|---|---|---|---|---|---|---|---|---|"
	if hasObj {
		head += fmt.Sprintf(" meets %s ≤ %s |", obj.Percentile, formatLimit(obj.LimitNs))
		rule += "---|"
	}
	w.p("%s\n%s\n", head, rule)
	for _, st := range curve.Steps {
		w.p("| %s | %s | %s | %s | %s | %s | %d | %d | %s |", numfmt.Format(st.RateAsked, 0), numfmt.Format(st.RateAchieved, 0),
			fmtLatency(st.Latency.P50), fmtLatency(st.Latency.P99), fmtLatency(st.Latency.P999),
			fmtLatency(st.ServiceLatency.P99), st.Unfinished, st.Dropped, yesNo(st.ClientBound))
		if hasObj {
			verdict := "yes"
			if st.Pass != nil && !*st.Pass {
				verdict = "no: " + strings.Join(st.FailReasons, "; ")
			}
			w.p(" %s |", verdict)
		}
		w.p("\n")
	}
	w.p("\n")
	k := rc.Knee
	if k == nil || k.Search == nil {
		w.p("The highest rate meeting the objective: _not measured (no %s)_.\n\n", KneeFile)
		return nil
	}
	s := k.Search
	kobj := objectiveText(k.Objectives)
	if s.Rate == 0 {
		w.p("**No rate met %s** (`load_tester --find-rate`, %s): %s.\n\n", kobj, KneeFile, s.Certainty)
		return nil
	}
	rate := w.cite(fieldOf("Highest rate meeting "+kobj, s.Rate, 1, "req/s", 0, KneeFile, "search.rate"))
	w.p("**The highest rate meeting %s: %s** (`load_tester --find-rate`, its own steps in %s).", kobj, rate, KneeFile)
	if s.FirstFail > 0 {
		fail := w.cite(fieldOf("Lowest rate missing "+kobj, s.FirstFail, 1, "req/s", 0, KneeFile, "search.first_fail"))
		w.p(" The knee lies between it and %s, the lowest rate that missed; ", fail)
	} else {
		w.p(" No rate tried missed it; ")
	}
	if s.Confirmed {
		w.p("each end of that bracket was decided by a majority of %d runs.", s.Spec.Repeats)
	} else {
		w.p("the bracket is **not confirmed** (%s).", s.Stopped)
	}
	elapsed := w.cite(fieldOf("Search wall time", s.Elapsed, 1, "s", 0, KneeFile, "search.elapsed_s"))
	w.p(" The search took %d steps and %s.\n\n", len(s.Trials), elapsed)
	for _, warn := range k.Warnings {
		w.p("> %s\n\n", warn)
	}
	return nil
}

// curveShape describes the load of the curve from its config.
func curveShape(sr *result.StepsResult) string {
	cfg, _ := sr.Config.(map[string]any)
	num := func(k string) int {
		if v, ok := cfg[k].(float64); ok {
			return int(v)
		}
		return 0
	}
	return fmt.Sprintf("load_tester: %d connections over %d network thread(s), %d requests per connection",
		num("concurrency"), num("network_threads"), num("requests_per_conn"))
}

func objectiveText(objs []result.Objective) string {
	parts := make([]string, len(objs))
	for i, o := range objs {
		parts[i] = o.Percentile + " ≤ " + formatLimit(o.LimitNs)
	}
	return strings.Join(parts, ", ")
}

func fmtLatency(ns int64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.2f s", float64(ns)/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", float64(ns)/1e6)
	}
	return fmt.Sprintf("%.0f µs", float64(ns)/1e3)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
