package runview

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// The charts are hand-written SVG: a few primitives (axes, polylines,
// dots, bars, a marker line) are all a run's page needs, and writing them
// here keeps the page free of scripts, fonts and anything fetched, and its
// bytes a function of the result alone (docs/load_tester.md, "HTML view").

// Chart geometry, in SVG user units (the SVG scales to its box).
const (
	chartW, chartH         = 720.0, 300.0
	padL, padR, padT, padB = 72.0, 16.0, 28.0, 44.0
	manyPoints             = 60 // above this a series is a line only, without dots
)

// Point is one datum in the data's own units.
type Point struct{ X, Y float64 }

// Series is a named line (and dots where it has few points).
type Series struct {
	Name   string
	Points []Point
}

// Bar is a bar from X0 to X1, Y high.
type Bar struct{ X0, X1, Y float64 }

// Tick is a labelled axis position, in the data's units.
type Tick struct {
	V     float64
	Label string
}

// Axis is a chart's axis: its label, log10 or linear, and how its values
// are printed (Ticks, when set, replaces the automatic ones).
type Axis struct {
	Label  string
	Log    bool
	Format func(float64) string
	Ticks  []Tick
	Min    *float64 // forced minimum (data units)
}

// Marker is a labelled vertical line (the knee).
type Marker struct {
	X     float64
	Label string
}

// Chart is one figure: series, bars and markers over two axes.
type Chart struct {
	ID      string // stable name, the SVG's data-chart
	Title   string
	X, Y    Axis
	Series  []Series
	Bars    []Bar
	Markers []Marker
}

// scale maps data values on one axis to pixels.
type scale struct {
	log    bool
	lo, hi float64 // transformed
	p0, p1 float64 // pixels for lo and hi
	ok     bool
}

func (s scale) t(v float64) (float64, bool) {
	if s.log {
		if v <= 0 {
			return 0, false
		}
		return math.Log10(v), true
	}
	return v, !math.IsNaN(v) && !math.IsInf(v, 0)
}

func (s scale) px(v float64) (float64, bool) {
	tv, ok := s.t(v)
	if !ok {
		return 0, false
	}
	return s.p0 + (tv-s.lo)/(s.hi-s.lo)*(s.p1-s.p0), true
}

// newScale fits an axis to values, linear axes from zero when all are
// positive (a rate or a latency read against zero).
func newScale(a Axis, values []float64, p0, p1 float64) scale {
	s := scale{log: a.Log, p0: p0, p1: p1, lo: math.Inf(1), hi: math.Inf(-1)}
	for _, v := range values {
		if tv, ok := s.t(v); ok {
			s.lo, s.hi = math.Min(s.lo, tv), math.Max(s.hi, tv)
		}
	}
	if a.Min != nil {
		if tv, ok := s.t(*a.Min); ok {
			s.lo = math.Min(s.lo, tv)
		}
	}
	if math.IsInf(s.lo, 0) {
		s.lo, s.hi = 0, 1
		return s
	}
	s.ok = true
	if !s.log && s.lo > 0 {
		s.lo = 0
	}
	if s.log {
		s.lo, s.hi = math.Floor(s.lo), math.Ceil(s.hi)
	}
	if s.hi-s.lo < 1e-12 {
		s.hi = s.lo + 1
	}
	return s
}

// ticks are the axis's labelled positions.
func (s scale) ticks(a Axis) []Tick {
	if a.Ticks != nil {
		return a.Ticks
	}
	f := a.Format
	if f == nil {
		f = func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
	}
	var out []Tick
	if s.log {
		for e := s.lo; e <= s.hi+1e-9; e++ {
			v := math.Pow(10, e)
			out = append(out, Tick{v, f(v)})
		}
		return out
	}
	step := niceStep((s.hi - s.lo) / 5)
	for v := math.Ceil(s.lo/step) * step; v <= s.hi+step*1e-9; v += step {
		out = append(out, Tick{v, f(v)})
	}
	return out
}

// niceStep rounds a raw tick step to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// SVG draws the chart. Every drawn element is generated here from numbers
// and escaped labels, hence template.HTML.
func (c Chart) SVG() template.HTML {
	var xs, ys []float64
	for _, s := range c.Series {
		for _, p := range s.Points {
			xs, ys = append(xs, p.X), append(ys, p.Y)
		}
	}
	for _, b := range c.Bars {
		xs, ys = append(xs, b.X0, b.X1), append(ys, b.Y)
	}
	for _, m := range c.Markers {
		xs = append(xs, m.X)
	}
	sx := newScale(c.X, xs, padL, chartW-padR)
	sy := newScale(c.Y, ys, chartH-padB, padT)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" data-chart="%s" viewBox="0 0 %g %g" role="img" aria-label="%s">`,
		esc(c.ID), chartW, chartH, esc(c.Title))
	fmt.Fprintf(&b, `<text class="title" x="%g" y="16">%s</text>`, padL, esc(c.Title))
	c.axes(&b, sx, sy)
	c.drawBars(&b, sx, sy)
	for i, s := range c.Series {
		drawSeries(&b, s, i, sx, sy)
	}
	c.drawMarkers(&b, sx)
	c.legend(&b)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// axes draws the frame, grid, tick labels and axis labels.
func (c Chart) axes(b *strings.Builder, sx, sy scale) {
	fmt.Fprintf(b, `<rect class="frame" x="%g" y="%g" width="%g" height="%g"/>`, padL, padT, chartW-padL-padR, chartH-padT-padB)
	for _, t := range sx.ticks(c.X) {
		if x, ok := sx.px(t.V); ok && x >= padL-0.5 && x <= chartW-padR+0.5 {
			fmt.Fprintf(b, `<line class="grid" x1="%s" y1="%g" x2="%s" y2="%g"/><text class="tick" x="%s" y="%g" text-anchor="middle">%s</text>`,
				f1(x), padT, f1(x), chartH-padB, f1(x), chartH-padB+16, esc(t.Label))
		}
	}
	for _, t := range sy.ticks(c.Y) {
		if y, ok := sy.px(t.V); ok && y >= padT-0.5 && y <= chartH-padB+0.5 {
			fmt.Fprintf(b, `<line class="grid" x1="%g" y1="%s" x2="%g" y2="%s"/><text class="tick" x="%g" y="%s" text-anchor="end">%s</text>`,
				padL, f1(y), chartW-padR, f1(y), padL-6, f1(y+4), esc(t.Label))
		}
	}
	fmt.Fprintf(b, `<text class="axis" x="%g" y="%g" text-anchor="middle">%s</text>`, (padL+chartW-padR)/2, chartH-8, esc(c.X.Label))
	fmt.Fprintf(b, `<text class="axis" transform="translate(14 %g) rotate(-90)" text-anchor="middle">%s</text>`, (padT+chartH-padB)/2, esc(c.Y.Label))
}

// drawSeries draws one series as a polyline, with dots where it is short
// enough for them to be told apart.
func drawSeries(b *strings.Builder, s Series, i int, sx, sy scale) {
	pts := make([]string, 0, len(s.Points))
	for _, p := range s.Points {
		x, okx := sx.px(p.X)
		y, oky := sy.px(p.Y)
		if okx && oky {
			pts = append(pts, f1(x)+","+f1(y))
		}
	}
	if len(pts) == 0 {
		return
	}
	fmt.Fprintf(b, `<polyline class="s%d" data-series="%s" points="%s"/>`, i%6, esc(s.Name), strings.Join(pts, " "))
	if len(pts) > manyPoints {
		return
	}
	for _, p := range pts {
		x, y, _ := strings.Cut(p, ",")
		fmt.Fprintf(b, `<circle class="d%d" cx="%s" cy="%s" r="3"/>`, i%6, x, y)
	}
}

// drawBars draws the bars from the x axis up.
func (c Chart) drawBars(b *strings.Builder, sx, sy scale) {
	base := chartH - padB
	for _, br := range c.Bars {
		x0, ok0 := sx.px(br.X0)
		x1, ok1 := sx.px(br.X1)
		y, oky := sy.px(br.Y)
		if !ok0 || !ok1 || !oky || br.Y <= 0 {
			continue
		}
		fmt.Fprintf(b, `<rect class="bar" x="%s" y="%s" width="%s" height="%s"/>`, f1(x0), f1(y), f1(math.Max(x1-x0, 0.5)), f1(math.Max(base-y, 0.5)))
	}
}

// drawMarkers draws each marker as a dashed vertical line with its label.
func (c Chart) drawMarkers(b *strings.Builder, sx scale) {
	for _, m := range c.Markers {
		if x, ok := sx.px(m.X); ok {
			fmt.Fprintf(b, `<line class="marker" x1="%s" y1="%g" x2="%s" y2="%g"/><text class="marker" x="%s" y="%g">%s</text>`,
				f1(x), padT, f1(x), chartH-padB, f1(x+4), padT+12, esc(m.Label))
		}
	}
}

// legend names the series, top right.
func (c Chart) legend(b *strings.Builder) {
	x := chartW - padR - 8
	for i := len(c.Series) - 1; i >= 0; i-- {
		name := c.Series[i].Name
		fmt.Fprintf(b, `<text class="legend l%d" x="%s" y="16" text-anchor="end">%s</text>`, i%6, f1(x), esc(name))
		x -= 8*float64(len([]rune(name))) + 16
	}
}

func esc(s string) string { return html.EscapeString(s) }

// f1 prints a pixel position with one decimal: enough on a 720-unit chart,
// and short for a page with hours of intervals.
func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
