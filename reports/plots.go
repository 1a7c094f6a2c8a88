package reports

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"weaseldb/artifacts"
	"weaseldb/loadtester/result"
)

// PlotDPI and the sizes below fix every PNG's pixel size, so tests can check it.
const PlotDPI = 96

// Plot sizes in inches.
const (
	plotWidthIn      = 7
	plotHeightIn     = 4
	widePlotWidthIn  = 10
	widePlotHeightIn = 4
)

// PlotPixels returns the pixel size of a standard plot and of a wide one.
func PlotPixels(wide bool) (w, h int) {
	if wide {
		return widePlotWidthIn * PlotDPI, widePlotHeightIn * PlotDPI
	}
	return plotWidthIn * PlotDPI, plotHeightIn * PlotDPI
}

var (
	colorBlue   = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	colorOrange = color.RGBA{R: 255, G: 127, B: 14, A: 255}
	colorGrey   = color.RGBA{R: 120, G: 120, B: 120, A: 255}
)

// savePNG draws plots side by side in one PNG of the given size in inches.
func savePNG(path string, widthIn, heightIn float64, plots ...*plot.Plot) error {
	canvas := vgimg.NewWith(vgimg.UseWH(vg.Length(widthIn)*vg.Inch, vg.Length(heightIn)*vg.Inch), vgimg.UseDPI(PlotDPI))
	dc := draw.New(canvas)
	if len(plots) == 1 {
		plots[0].Draw(dc)
	} else {
		tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
		canvases := plot.Align([][]*plot.Plot{plots}, tiles, dc)
		for i, p := range plots {
			p.Draw(canvases[0][i])
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create plot %s: %w", path, err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: canvas}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("write plot %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close plot %s: %w", path, err)
	}
	return nil
}

// plotThroughput draws requests/s per stats interval over the run, with the
// whole run's average as a dashed line.
func plotThroughput(path string, load *result.Result, artifact string) error {
	p := plot.New()
	p.Title.Text = "Throughput per interval (" + artifact + " intervals)"
	p.X.Label.Text = "time since start (s)"
	p.Y.Label.Text = "requests/s"
	p.Add(plotter.NewGrid())
	pts := make(plotter.XYs, len(load.Intervals))
	for i, iv := range load.Intervals {
		pts[i] = plotter.XY{X: iv.TS, Y: iv.RequestsPerSec}
	}
	if len(pts) > 0 {
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return fmt.Errorf("throughput plot: %w", err)
		}
		line.Color, points.Color = colorBlue, colorBlue
		points.Radius = vg.Points(2)
		p.Add(line, points)
		p.Legend.Add("per interval", line)
		avg := plotter.XYs{{X: pts[0].X, Y: load.RequestsPerSec}, {X: pts[len(pts)-1].X, Y: load.RequestsPerSec}}
		avgLine, err := plotter.NewLine(avg)
		if err != nil {
			return fmt.Errorf("throughput plot: %w", err)
		}
		avgLine.Color = colorOrange
		avgLine.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(avgLine)
		p.Legend.Add("whole run", avgLine)
	}
	p.Y.Min = 0
	p.Legend.Top = false
	p.Legend.Left = true
	return savePNG(path, plotWidthIn, plotHeightIn, p)
}

// spectrumQuantiles are the percentiles of the spectrum plot, denser near the tail.
func spectrumQuantiles(total int64) []float64 {
	var qs []float64
	for _, base := range []float64{0, 90, 99, 99.9, 99.99} {
		step := (100 - base) / 10
		for i := 0; i < 9; i++ {
			qs = append(qs, base+float64(i)*step)
		}
	}
	qs = append(qs, 99.99)
	// Beyond 1 - 1/total the histogram holds no more information.
	limit := 100 * (1 - 1/float64(max(total, 1)))
	out := qs[:0]
	for _, q := range qs {
		if q <= limit || q == 0 {
			out = append(out, q)
		}
	}
	return out
}

// plotSpectrum draws the latency percentile spectrum: x is 1/(1-q) on a log
// scale, so each decade is one more nine.
func plotSpectrum(path string, h *hdrhistogram.Histogram, u latencyUnit, artifact string) error {
	p := plot.New()
	p.Title.Text = "Latency percentile spectrum (" + artifact + " histogram)"
	p.X.Label.Text = "percentile"
	p.Y.Label.Text = "latency (" + u.name + ")"
	p.Add(plotter.NewGrid())
	var pts plotter.XYs
	for _, q := range spectrumQuantiles(h.TotalCount()) {
		pts = append(pts, plotter.XY{X: 1 / (1 - q/100), Y: float64(h.ValueAtQuantile(q)) * u.scale})
	}
	line, points, err := plotter.NewLinePoints(pts)
	if err != nil {
		return fmt.Errorf("spectrum plot: %w", err)
	}
	line.Color, points.Color = colorBlue, colorBlue
	points.Radius = vg.Points(1.5)
	p.Add(line, points)
	p.X.Scale = plot.LogScale{}
	p.X.Min, p.X.Max = 1, 1e4
	p.X.Tick.Marker = plot.ConstantTicks{
		{Value: 1, Label: "0%"}, {Value: 2, Label: "50%"}, {Value: 10, Label: "90%"},
		{Value: 100, Label: "99%"}, {Value: 1e3, Label: "99.9%"}, {Value: 1e4, Label: "99.99%"},
	}
	p.Y.Min = 0
	return savePNG(path, plotWidthIn, plotHeightIn, p)
}

// plotHistogram draws the latency distribution as counts in log-spaced bins.
func plotHistogram(path string, h *hdrhistogram.Histogram, u latencyUnit, artifact string) error {
	p := plot.New()
	p.Title.Text = "Latency histogram (" + artifact + " histogram, log-spaced bins)"
	p.X.Label.Text = "latency (" + u.name + ")"
	p.Y.Label.Text = "requests"
	p.Add(plotter.NewGrid())
	bins := logBins(h, 40, u.scale)
	if len(bins) > 0 {
		hist := &plotter.Histogram{Bins: bins, Width: bins[0].Max - bins[0].Min, FillColor: colorBlue, LineStyle: plotter.DefaultLineStyle}
		hist.LineStyle.Width = vg.Points(0.5)
		p.Add(hist)
		tallest := 0.0
		for _, b := range bins {
			tallest = math.Max(tallest, b.Weight)
		}
		p.Y.Max = tallest * 1.08 // headroom below the title
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	p.Y.Min = 0
	return savePNG(path, plotWidthIn, plotHeightIn, p)
}

// logBins sums the histogram's counts into n log-spaced bins, in nanoseconds
// × scale, from its minimum to its maximum.
func logBins(h *hdrhistogram.Histogram, n int, scale float64) []plotter.HistogramBin {
	lo, hi := float64(max(h.Min(), 1))*scale, float64(max(h.Max(), 1))*scale
	if h.TotalCount() == 0 {
		return nil
	}
	if hi <= lo {
		hi = lo * 1.1
	}
	logLo, logHi := math.Log10(lo), math.Log10(hi)
	step := (logHi - logLo) / float64(n)
	bins := make([]plotter.HistogramBin, n)
	for i := range bins {
		bins[i].Min = math.Pow(10, logLo+float64(i)*step)
		bins[i].Max = math.Pow(10, logLo+float64(i+1)*step)
	}
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		mid := float64(bar.From+bar.To) / 2 * scale
		i := int((math.Log10(math.Max(mid, lo)) - logLo) / step)
		i = min(max(i, 0), n-1)
		bins[i].Weight += float64(bar.Count)
	}
	return bins
}

// plotLatencyOverTime draws p50 and p99 of every interval of the HDR log.
func plotLatencyOverTime(path string, log *HdrLog, u latencyUnit, artifact string) error {
	p := plot.New()
	p.Title.Text = "Latency per interval (" + artifact + ")"
	p.X.Label.Text = "time since start (s)"
	p.Y.Label.Text = "latency (" + u.name + ")"
	p.Add(plotter.NewGrid())
	p50 := make(plotter.XYs, len(log.Intervals))
	p99 := make(plotter.XYs, len(log.Intervals))
	for i, iv := range log.Intervals {
		p50[i] = plotter.XY{X: iv.EndS, Y: float64(iv.P50Ns) * u.scale}
		p99[i] = plotter.XY{X: iv.EndS, Y: float64(iv.P99Ns) * u.scale}
	}
	for _, s := range []struct {
		name string
		pts  plotter.XYs
		c    color.Color
	}{{"p50", p50, colorBlue}, {"p99", p99, colorOrange}} {
		line, err := plotter.NewLine(s.pts)
		if err != nil {
			return fmt.Errorf("latency-over-time plot: %w", err)
		}
		line.Color = s.c
		p.Add(line)
		p.Legend.Add(s.name, line)
	}
	p.Y.Min = 0
	p.Legend.Top = true
	p.Legend.Left = true
	return savePNG(path, plotWidthIn, plotHeightIn, p)
}

// waitStrategyCases picks the bench_pipeline cases that compare wait strategies.
func waitStrategyCases(pb *artifacts.PipelineBench) []int {
	var idx []int
	for i, c := range pb.Cases {
		if isWaitStrategyFamily(c.Family) {
			idx = append(idx, i)
		}
	}
	return idx
}

// caseLabel names a bench_pipeline case in the report's table.
func caseLabel(c artifacts.PipelineCase) string {
	if c.Name != "" {
		return c.Name
	}
	return c.Strategy
}

// shortLabel names a case on a plot axis: the strategy for the pipeline,
// the implementation for the baselines it is compared with.
func shortLabel(c artifacts.PipelineCase) string {
	hasStrategy := c.Strategy != "" && c.Strategy != "-"
	switch {
	case hasStrategy && (c.Impl == "" || c.Impl == "pipeline"):
		return c.Strategy
	case hasStrategy:
		return c.Impl + " " + c.Strategy
	case c.Impl != "":
		return c.Impl
	}
	return caseLabel(c)
}

// plotWaitStrategies draws items/s and CPU per item for the wait-strategy
// cases of bench_pipeline, side by side.
func plotWaitStrategies(path string, pb *artifacts.PipelineBench, idx []int) error {
	labels := make([]string, len(idx))
	rate := make(plotter.Values, len(idx))
	cpu := make(plotter.Values, len(idx))
	for i, ci := range idx {
		c := pb.Cases[ci]
		labels[i] = shortLabel(c)
		rate[i] = c.ItemsPerSec / 1e6
		cpu[i] = c.CPUNsPerItem
	}
	left, err := barPlot("Throughput (bench_pipeline.json)", "million items/s", labels, rate, colorBlue)
	if err != nil {
		return err
	}
	right, err := barPlot("CPU per item (bench_pipeline.json)", "CPU ns per item", labels, cpu, colorOrange)
	if err != nil {
		return err
	}
	return savePNG(path, widePlotWidthIn, widePlotHeightIn, left, right)
}

func barPlot(title, yLabel string, labels []string, values plotter.Values, c color.Color) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = yLabel
	p.Add(plotter.NewGrid())
	bars, err := plotter.NewBarChart(values, vg.Points(28))
	if err != nil {
		return nil, fmt.Errorf("bar plot %q: %w", title, err)
	}
	bars.Color = c
	bars.LineStyle.Width = vg.Length(0)
	p.Add(bars)
	p.NominalX(labels...)
	// Headroom above the tallest bar, so it does not touch the title.
	_, top := plotter.Range(values)
	p.Y.Max = top * 1.1
	p.X.Tick.Label.Rotation = math.Pi / 8
	p.X.Tick.Label.XAlign = draw.XRight
	p.Y.Min = 0
	return p, nil
}

// isWaitStrategyFamily reports whether a bench_pipeline family compares wait
// strategies (the seed's third family).
func isWaitStrategyFamily(family string) bool {
	f := strings.ToLower(family)
	return strings.Contains(f, "wait") || strings.Contains(f, "strateg")
}
