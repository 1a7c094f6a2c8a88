package reports

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// plotRounds draws every measured round's req/s, one line per setup, x the
// round: how far apart the rounds of one setup are, next to the gap
// between the setups.
func plotRounds(path string, setups []*setupNumbers) error {
	p := plot.New()
	p.Title.Text = "Throughput per round (setups.json runs)"
	p.X.Label.Text = "round"
	p.Y.Label.Text = "thousand req/s"
	p.Add(plotter.NewGrid())
	colors := []color.Color{colorBlue, colorOrange, colorGrey}
	for i, n := range setups {
		var pts plotter.XYs
		for _, r := range n.measured {
			pts = append(pts, plotter.XY{X: float64(r.Number), Y: r.Load.RequestsPerSec / 1e3})
		}
		if len(pts) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return fmt.Errorf("rounds plot: %w", err)
		}
		c := colors[i%len(colors)]
		line.Color, points.Color = c, c
		points.Radius = vg.Points(3)
		p.Add(line, points)
		p.Legend.Add(n.view.Setup.Title, line)
	}
	p.Y.Min = 0
	p.Y.Max *= 1.2 // room for the legend
	p.Legend.Top = true
	return savePNG(path, plotWidthIn, plotHeightIn, p)
}
