package reports

import (
	"fmt"
	"image/color"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"weaseldb/artifacts"
	"weaseldb/internal/numfmt"
)

// The wait-strategy section's latency parts: bench_pipeline's hand-off
// latency per strategy (shared against dedicated cores), the server's
// latency at fixed open-loop rates, their plots, and a conclusion computed
// from this run's numbers.

// Plots of the latency parts.
const (
	WaitLatencyPNG     = "wait_strategies_latency.png"      // hand-off percentiles per strategy and cores
	WaitRateLatencyPNG = "wait_strategies_rate_latency.png" // server p50/p99 against the open-loop rate
)

// waitLatencySection renders the latency parts that this run has.
func (w *writer) waitLatencySection(ws *artifacts.WaitStrategies) error {
	if err := w.waitPipelineLatency(ws); err != nil {
		return err
	}
	if err := w.waitRateSteps(ws); err != nil {
		return err
	}
	if lines := waitConclusion(ws); len(lines) > 0 {
		w.p("**What this run says** (computed from the tables above; a busy or shared machine moves these figures, so read them with the machine's description):\n\n%s\n\n", strings.Join(lines, "\n"))
	}
	return nil
}

func (w *writer) waitPipelineLatency(ws *artifacts.WaitStrategies) error {
	if len(ws.PipelineLatency) == 0 {
		if ws.LatencyReason != "" {
			w.p("_bench_pipeline's latency family: not measured: %s._\n\n", ws.LatencyReason)
		}
		return nil
	}
	w.p("**bench_pipeline, latency family** (`%s`): single items handed from a producer to a stage, one way (publish to pickup) and as a ping-pong round trip over two pipelines; ",
		orNA(ws.LatencyArtifact))
	w.p("low rate = items spaced so the stage sits idle between them (a parking strategy has parked), saturation = back to back. ")
	w.p("Dedicated: the producer and the stage each pinned to a CPU of their own (the Go runtime's other threads float; see each case's `cpu_plan`); shared: nothing pinned. ")
	if ws.LatencyClockReadNs > 0 {
		w.p("One clock read cost %s ns here, which bounds the resolution. ", numfmt.Format(ws.LatencyClockReadNs, 1))
	}
	if ws.LatencyReason != "" {
		w.p("Note: %s. ", ws.LatencyReason)
	}
	w.p("\n\n| impl | strategy | kind | rate | cores | p50 µs | p99 µs | p99.9 µs | max µs | CPU ns/item | field |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for i, l := range ws.PipelineLatency {
		if l.Skipped {
			w.p("| %s | %s | %s | %s | %s | skipped: %s | | | | | `pipeline_latency[%d]` |\n", l.Impl, l.Strategy, l.Kind, l.Rate, l.Cores, l.Reason, i)
			continue
		}
		w.p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | `pipeline_latency[%d]` |\n", l.Impl, l.Strategy, l.Kind, l.Rate, l.Cores,
			usFormat(l.P50Ns), usFormat(l.P99Ns), usFormat(l.P999Ns), usFormat(l.MaxNs), numfmt.Format(l.CPUNsPerItem, 0), i)
	}
	w.p("\n")
	return w.image(WaitLatencyPNG, "Hand-off latency per wait strategy, dedicated and shared cores",
		func(p string) error { return plotWaitLatency(p, ws) })
}

// usFormat prints ns in µs with 3 decimals below 1 µs, else 1.
func usFormat(ns int64) string {
	if ns < 1000 {
		return numfmt.Format(float64(ns)/1e3, 3)
	}
	return numfmt.Format(float64(ns)/1e3, 1)
}

func (w *writer) waitRateSteps(ws *artifacts.WaitStrategies) error {
	idx := rateStepRuns(ws)
	if len(idx) == 0 {
		return nil
	}
	w.p("**weaseldb at fixed open-loop rates**: each server run loaded again by `load_tester --rate-steps` at %s of its own closed-loop req/s, so the strategies are compared at the same relative load (latency corrected for coordinated omission; server CPU over all the steps, connecting and drain included, per answered request):\n\n",
		fractionsText(ws.RateFractions))
	w.p("| strategy | cores | fraction | rate asked | achieved | p50 µs | p99 µs | p99.9 µs | server CPU ns/request (all steps) | field |\n|---|---|---|---|---|---|---|---|---|---|\n")
	plotted := false
	for _, i := range idx {
		r := ws.Runs[i]
		if len(r.RateSteps) == 0 {
			w.p("| %s | %s | not measured: %s | | | | | | | `runs[%d].rate_steps_reason` |\n", r.Strategy, r.Cores, r.RateStepsReason, i)
			continue
		}
		plotted = true
		for j, s := range r.RateSteps {
			flag := ""
			if s.Unfinished > 0 || s.Dropped > 0 {
				flag = fmt.Sprintf(" (not clean: %d unfinished, %d dropped)", s.Unfinished, s.Dropped)
			}
			w.p("| %s | %s | %s | %s | %s%s | %s | %s | %s | %s | `runs[%d].rate_steps[%d]` |\n", r.Strategy, r.Cores, numfmt.Format(s.Fraction, 2),
				numfmt.Format(s.RateAsked, 0), numfmt.Format(s.RateAchieved, 0), flag, usFormat(s.P50Ns), usFormat(s.P99Ns), usFormat(s.P999Ns),
				optNumber(r.RateStepsCPUNsPerRequest, 1, 0), i, j)
		}
	}
	w.p("\n")
	if !plotted {
		return nil
	}
	return w.image(WaitRateLatencyPNG, "Server latency against the open-loop rate, per wait strategy",
		func(p string) error { return plotWaitRateLatency(p, ws, idx) })
}

func rateStepRuns(ws *artifacts.WaitStrategies) []int {
	var idx []int
	for _, i := range measuredRuns(ws, artifacts.BenchServer) {
		if r := ws.Runs[i]; len(r.RateSteps) > 0 || r.RateStepsReason != "" {
			idx = append(idx, i)
		}
	}
	return idx
}

func fractionsText(f []float64) string {
	if len(f) == 0 {
		return "fractions"
	}
	s := make([]string, len(f))
	for i, v := range f {
		s[i] = numfmt.Format(v, 2)
	}
	return strings.Join(s, ", ")
}

// latencyLabel names a latency row's implementation on a plot axis.
func latencyLabel(l artifacts.WaitLatency) string {
	if l.Impl == "pipeline" {
		// Short enough for four labels side by side on half a wide plot.
		return strings.TrimPrefix(strings.TrimPrefix(l.Strategy, "WaitIf"), "Wait")
	}
	return l.Impl
}

// plotWaitLatency draws p50 (circles) and p99 (triangles) per strategy, a
// colour per kind of cores, on a log axis: one way at the low rate (where
// parking shows) and the round trip at saturation.
func plotWaitLatency(path string, ws *artifacts.WaitStrategies) error {
	var labels []string
	for _, l := range ws.PipelineLatency {
		if !slices.Contains(labels, latencyLabel(l)) {
			labels = append(labels, latencyLabel(l))
		}
	}
	panels := []struct{ kind, rate, title string }{
		{"one_way", "low", "One way, low rate (bench_pipeline)"},
		{"round_trip", "saturation", "Round trip, saturation (bench_pipeline)"},
	}
	series := []struct {
		cores string
		color color.Color
		dx    float64
	}{{artifacts.CoresShared, colorBlue, -0.12}, {artifacts.CoresDedicated, colorOrange, 0.12}}
	var plots []*plot.Plot
	for _, pn := range panels {
		p := plot.New()
		p.Title.Text = pn.title
		p.Y.Label.Text = "latency, µs (log)"
		lo, hi := 0.0, 0.0
		for _, s := range series {
			var p50, p99 plotter.XYs
			for _, l := range ws.PipelineLatency {
				j := slices.Index(labels, latencyLabel(l))
				if l.Skipped || l.Kind != pn.kind || l.Rate != pn.rate || l.Cores != s.cores || l.P50Ns <= 0 || j < 0 {
					continue
				}
				x := float64(j) + s.dx
				p50 = append(p50, plotter.XY{X: x, Y: float64(l.P50Ns) / 1e3})
				p99 = append(p99, plotter.XY{X: x, Y: float64(max(l.P99Ns, l.P50Ns)) / 1e3})
				for _, v := range []float64{float64(l.P50Ns) / 1e3, float64(max(l.P99Ns, l.P50Ns)) / 1e3} {
					if lo == 0 || v < lo {
						lo = v
					}
					hi = max(hi, v)
				}
			}
			if len(p50) == 0 {
				continue
			}
			for _, m := range []struct {
				xys   plotter.XYs
				name  string
				shape draw.GlyphDrawer
			}{{p50, "p50", draw.CircleGlyph{}}, {p99, "p99", draw.TriangleGlyph{}}} {
				sc, err := plotter.NewScatter(m.xys)
				if err != nil {
					return fmt.Errorf("wait-strategy latency plot: %w", err)
				}
				sc.GlyphStyle.Color, sc.GlyphStyle.Shape, sc.GlyphStyle.Radius = s.color, m.shape, vg.Points(4)
				p.Add(sc)
				p.Legend.Add(s.cores+" "+m.name, sc)
			}
		}
		p.Add(plotter.NewGrid())
		p.NominalX(labels...)
		p.X.Min, p.X.Max = -0.6, float64(len(labels))-0.4
		if hi > 0 {
			p.Y.Scale = plot.LogScale{}
			p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
			p.Y.Min, p.Y.Max = lo/2, hi*30 // headroom for the legend
		}
		p.Legend.Top = true
		p.Legend.TextStyle.Font.Size = vg.Points(8)
		plots = append(plots, p)
	}
	return savePNG(path, widePlotWidthIn, widePlotHeightIn, plots...)
}

// plotWaitRateLatency draws each server run's p99 (solid) and p50 (dashed)
// against the rate asked, a line per strategy and kind of cores.
func plotWaitRateLatency(path string, ws *artifacts.WaitStrategies, idx []int) error {
	p := plot.New()
	p.Title.Text = "Server latency at fixed open-loop rates (wait_strategies.json)"
	p.X.Label.Text = "rate asked, thousand req/s"
	p.Y.Label.Text = "corrected latency, ms (log)"
	palette := []color.Color{colorBlue, colorOrange, colorGrey, color.RGBA{R: 44, G: 160, B: 44, A: 255}, color.RGBA{R: 214, G: 39, B: 40, A: 255}, color.RGBA{R: 148, G: 103, B: 189, A: 255}}
	lo, hi, xMax := 0.0, 0.0, 0.0
	n := 0
	for _, i := range idx {
		r := ws.Runs[i]
		if len(r.RateSteps) == 0 {
			continue
		}
		c := palette[n%len(palette)]
		n++
		for _, q := range []struct {
			name   string
			val    func(artifacts.WaitRateStep) int64
			dashed bool
		}{{"p99", func(s artifacts.WaitRateStep) int64 { return s.P99Ns }, false}, {"p50", func(s artifacts.WaitRateStep) int64 { return s.P50Ns }, true}} {
			var xys plotter.XYs
			for _, s := range r.RateSteps {
				v := float64(q.val(s)) / 1e6
				if v <= 0 {
					continue
				}
				xys = append(xys, plotter.XY{X: s.RateAsked / 1e3, Y: v})
				if lo == 0 || v < lo {
					lo = v
				}
				hi, xMax = max(hi, v), max(xMax, s.RateAsked/1e3)
			}
			if len(xys) == 0 {
				continue
			}
			line, points, err := plotter.NewLinePoints(xys)
			if err != nil {
				return fmt.Errorf("wait-strategy rate plot: %w", err)
			}
			line.Color, points.Color = c, c
			if q.dashed {
				line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			}
			p.Add(line, points)
			p.Legend.Add(fmt.Sprintf("%s %s %s", r.Strategy, r.Cores, q.name), line)
		}
	}
	if hi > 0 {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Y.Min, p.Y.Max = lo/1.5, hi*30
	}
	p.X.Min, p.X.Max = 0, xMax*1.05
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	return savePNG(path, plotWidthIn, plotHeightIn, p)
}

// waitLatencyFunctional says, in a functional report (a virtual machine's
// run: never speed), whether the latency parts ran and on what: how many
// latency cases were measured on each kind of cores, which were skipped
// and why, and how many open-loop steps each server run answered.
func (f *functional) waitLatencyFunctional(ws *artifacts.WaitStrategies) {
	if len(ws.PipelineLatency) == 0 && ws.LatencyReason == "" && len(rateStepRuns(ws)) == 0 {
		return
	}
	measured := map[string]int{}
	skipped := map[string]int{}
	var plans, reasons []string
	for _, l := range ws.PipelineLatency {
		if l.Skipped {
			skipped[l.Cores]++
			if !slices.Contains(reasons, l.Reason) {
				reasons = append(reasons, l.Reason)
			}
			continue
		}
		measured[l.Cores]++
		if l.Cores == artifacts.CoresDedicated && l.CPUPlan != "" && !slices.Contains(plans, l.CPUPlan) {
			plans = append(plans, l.CPUPlan)
		}
	}
	f.p("bench_pipeline's latency family (`%s`, `pipeline_latency`): %d cases measured on dedicated cores and %d on shared ones, %d skipped",
		orNA(ws.LatencyArtifact), measured[artifacts.CoresDedicated], measured[artifacts.CoresShared], skipped[artifacts.CoresDedicated]+skipped[artifacts.CoresShared])
	if len(reasons) > 0 {
		f.p(" (%s)", strings.Join(reasons, "; "))
	}
	f.p(". ")
	if len(plans) > 0 {
		f.p("Dedicated placement: %s. ", strings.Join(plans, "; "))
	}
	if ws.LatencyReason != "" {
		f.p("Note: %s. ", ws.LatencyReason)
	}
	f.p("Its figures are not shown: on emulated CPUs they measure the emulator.\n\n")
	var lines []string
	for _, i := range rateStepRuns(ws) {
		r := ws.Runs[i]
		if len(r.RateSteps) == 0 {
			lines = append(lines, fmt.Sprintf("- `runs[%d]` %s %s: no open-loop steps: %s", i, r.Strategy, r.Cores, r.RateStepsReason))
			continue
		}
		clean := 0
		for _, s := range r.RateSteps {
			if s.Unfinished == 0 && s.Dropped == 0 && s.Errors == 0 && s.RateAchieved > 0 {
				clean++
			}
		}
		lines = append(lines, fmt.Sprintf("- `runs[%d]` %s %s: %d open-loop steps ran at %s of its closed-loop rate, %d answered every request in time",
			i, r.Strategy, r.Cores, len(r.RateSteps), fractionsText(ws.RateFractions), clean))
	}
	if len(lines) > 0 {
		f.p("The server at fixed open-loop rates (`runs[i].rate_steps`):\n\n%s\n\n", strings.Join(lines, "\n"))
	}
}
