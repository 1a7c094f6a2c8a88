package reports

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"weaseldb/artifacts"
	"weaseldb/internal/numfmt"
)

// SustainedPNG is the sustained run's plot: rate, GC pause and RSS per window.
const SustainedPNG = "sustained.png"

// mib is bytes per MiB, the unit RSS is printed in.
const mib = 1 << 20

// sustainedSection renders the sustained run (sustained.json, `report
// setups --sustain`): per setup its rate per window, the GC's pauses and the
// server's RSS beside it, plotted and tabled. Without the artifact it says
// how to get one.
func (w *writer) sustainedSection() error {
	w.p("## Sustained run\n\n")
	sus := w.run.Sustained
	if sus == nil {
		w.p("_Not run: no %s in the run. `make report` stays short; `SUSTAIN=120 scripts/reproduce_threading_report.sh` loads each setup for 120 s without a break after the rounds (docs/report.md, \"Sustained run\")._\n\n", artifacts.SustainedFile)
		return nil
	}
	w.p("Each setup loaded once more after the rounds, on a fresh server, for %s s without a break (after %s s of warm-up); "+
		"every %s s the runner read the server's `/metrics` (requests served: `weaseldb_loop_requests_total` summed over the loops; "+
		"the garbage collector's stop-the-world pauses: Go's `go_gc_duration_seconds`, its count and sum in the window and its quantile 1, "+
		"the longest recent pause) and its resident memory (`/proc/PID/status` VmRSS). "+
		"Rows: %s `runs[i].windows[k]`; machine and date as in the header.\n\n",
		numfmt.Format(sus.SustainS, 0), numfmt.Format(sus.WarmupS, 0), numfmt.Format(sus.WindowS, 0), artifacts.SustainedFile)
	if hasWindows(sus) {
		if err := w.image(SustainedPNG, "Sustained run: requests/s, GC pause and RSS per window", func(path string) error {
			return PlotSustained(path, sus, w.setupTitles())
		}); err != nil {
			return err
		}
	}
	for i, run := range sus.Runs {
		w.sustainedRun(i, run)
	}
	return nil
}

// sustainedRun is one setup's summary line and its table of windows.
func (w *writer) sustainedRun(i int, run artifacts.SustainedRun) {
	title := w.setupTitles()[run.Setup]
	w.p("### %s\n\n", capitalize(orNA(title)))
	if run.Status != artifacts.StatusMeasured {
		w.p("**%s**: %s (`runs[%d]`).\n\n", run.Status, run.Reason, i)
		return
	}
	if run.Reason != "" || run.SampleError != "" {
		w.p("**Not clean**: %s (`runs[%d]`).\n\n", joinNonEmpty(run.Reason, run.SampleError), i)
	}
	ws := run.Windows
	if len(ws) == 0 {
		w.p("_No window was read._\n\n")
		return
	}
	first, last := ws[0], ws[len(ws)-1]
	rateField := func(k int) string {
		return fmt.Sprintf("%s runs[%d].windows[%d].requests ÷ (end_s − start_s)", artifacts.SustainedFile, i, k)
	}
	lo, hi := first.RatePerS(), first.RatePerS()
	var gcs, pause float64
	for _, win := range ws {
		lo, hi = min(lo, win.RatePerS()), max(hi, win.RatePerS())
		gcs, pause = gcs+win.GCCount, pause+win.GCPauseS
	}
	change := 0.0
	if first.RatePerS() > 0 {
		change = 100 * (last.RatePerS()/first.RatePerS() - 1)
	}
	w.p("First window %s, last %s (%+.1f%%), lowest %s, highest %s req/s; %s collections with %s ms of pauses in all; RSS %s MiB in the first window, %s MiB in the last.\n\n",
		w.cite(derived(run.Setup+" sustained first window", first.RatePerS(), "req/s", 0, rateField(0))),
		w.cite(derived(run.Setup+" sustained last window", last.RatePerS(), "req/s", 0, rateField(len(ws)-1))),
		change, numfmt.Format(lo, 0), numfmt.Format(hi, 0), numfmt.Format(gcs, 0), numfmt.Format(pause*1e3, 2),
		numfmt.Format(float64(first.RSSBytes)/mib, 1), numfmt.Format(float64(last.RSSBytes)/mib, 1))
	w.p("| window | s | req/s | GCs | GC pause (ms) | longest recent pause (µs) | RSS (MiB) |\n|---|---|---|---|---|---|---|\n")
	for k, win := range ws {
		w.p("| %d | %s–%s | %s | %s | %s | %s | %s |\n", k+1, numfmt.Format(win.StartS, 0), numfmt.Format(win.EndS, 0),
			numfmt.Format(win.RatePerS(), 0), numfmt.Format(win.GCCount, 0), numfmt.Format(win.GCPauseS*1e3, 3),
			numfmt.Format(win.GCPauseMaxS*1e6, 0), numfmt.Format(float64(win.RSSBytes)/mib, 1))
	}
	w.p("\n")
}

// setupTitles maps each setup's name to its title.
func (w *writer) setupTitles() map[string]string {
	out := map[string]string{}
	for _, n := range w.setups {
		out[n.view.Setup.Name] = n.view.Setup.Title
	}
	return out
}

func hasWindows(sus *artifacts.Sustained) bool {
	for _, r := range sus.Runs {
		if len(r.Windows) > 0 {
			return true
		}
	}
	return false
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// PlotSustained draws, per setup, requests/s, GC pause time and RSS against
// the window's end, three panels side by side.
func PlotSustained(path string, sus *artifacts.Sustained, titles map[string]string) error {
	panels := []struct {
		title, y string
		of       func(artifacts.SustainedWindow) float64
	}{
		{"Requests/s per window", "thousand requests/s", func(w artifacts.SustainedWindow) float64 { return w.RatePerS() / 1e3 }},
		{"GC pause per window", "ms", func(w artifacts.SustainedWindow) float64 { return w.GCPauseS * 1e3 }},
		{"Server RSS", "MiB", func(w artifacts.SustainedWindow) float64 { return float64(w.RSSBytes) / mib }},
	}
	colors := []color.Color{colorBlue, colorOrange, colorGreen}
	var plots []*plot.Plot
	for _, pn := range panels {
		p := plot.New()
		p.Title.Text = pn.title
		p.X.Label.Text = "s into the run"
		p.Y.Label.Text = pn.y
		p.Y.Min = 0
		p.Add(plotter.NewGrid())
		for i, run := range sus.Runs {
			var pts plotter.XYs
			for _, win := range run.Windows {
				pts = append(pts, plotter.XY{X: win.EndS, Y: pn.of(win)})
			}
			if len(pts) == 0 {
				continue
			}
			line, points, err := plotter.NewLinePoints(pts)
			if err != nil {
				return fmt.Errorf("sustained plot: %w", err)
			}
			c := colors[i%len(colors)]
			line.Color, points.Color = c, c
			points.Radius = vg.Points(2)
			p.Add(line, points)
			p.Legend.Add(orNA(titles[run.Setup]), line)
		}
		if p.Y.Max <= p.Y.Min {
			p.Y.Max = p.Y.Min + 1 // all zero (no collection): an axis from 0, not around it
		}
		p.Legend.TextStyle.Font.Size = vg.Points(8)
		plots = append(plots, p)
	}
	return savePNG(path, widePlotWidthIn, widePlotHeightIn, plots...)
}
