package runview

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"weaseldb/internal/numfmt"
	"weaseldb/loadtester/result"
)

// The figures of one run, each from the result's own numbers: its
// intervals, its histograms (decoded here from the result's HdrHistogram V2
// strings, so a result from Run and one read back draw alike).

func fmtLatency(v float64) string { return numfmt.Latency(int64(math.Round(v))) }

// fmtCount prints a tick of a count or a rate: whole numbers grouped, and
// the fractions of a small axis (0.2, 0.4) as they are.
func fmtCount(v float64) string {
	if v == math.Trunc(v) {
		return numfmt.Format(v, 0)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// fmtSeconds prints a time tick: "0.5s" on a short run, "3,600s" on a long one.
func fmtSeconds(v float64) string { return fmtCount(v) + "s" }

// throughputChart is req/s per interval.
func throughputChart(id string, ivs []result.Interval) Chart {
	s := Series{Name: "req/s"}
	for _, iv := range ivs {
		s.Points = append(s.Points, Point{iv.TS, iv.RequestsPerSec})
	}
	return Chart{ID: id, Title: "Requests per second, per interval",
		X: Axis{Label: "time since the measured start", Format: fmtSeconds},
		Y: Axis{Label: "req/s", Format: fmtCount}, Series: []Series{s}}
}

// latencyOverTime is p50, p90 and p99 per interval: from each interval's
// histogram where the result has one (p90 needs it), else its p50 and p99.
func latencyOverTime(id string, ivs []result.Interval) (Chart, error) {
	p50, p90, p99 := Series{Name: "p50"}, Series{Name: "p90"}, Series{Name: "p99"}
	for i, iv := range ivs {
		h, err := decodeHist(iv.Histogram)
		if err != nil {
			return Chart{}, fmt.Errorf("interval %d histogram: %w", i+1, err)
		}
		if h == nil {
			p50.Points = append(p50.Points, Point{iv.TS, float64(iv.P50NS)})
			p99.Points = append(p99.Points, Point{iv.TS, float64(iv.P99NS)})
			continue
		}
		if h.TotalCount() == 0 {
			continue
		}
		p50.Points = append(p50.Points, Point{iv.TS, float64(h.ValueAtQuantile(50))})
		p90.Points = append(p90.Points, Point{iv.TS, float64(h.ValueAtQuantile(90))})
		p99.Points = append(p99.Points, Point{iv.TS, float64(h.ValueAtQuantile(99))})
	}
	series := []Series{p50, p90, p99}
	if len(p90.Points) == 0 {
		series = []Series{p50, p99}
	}
	return Chart{ID: id, Title: "Latency per interval",
		X: Axis{Label: "time since the measured start", Format: fmtSeconds},
		Y: Axis{Label: "latency (log)", Log: true, Format: fmtLatency}, Series: series}, nil
}

// errorsOverTime is the requests per interval that did not end answered:
// the errors, a line per kind (the intervals' errors_by_kind; one line of
// all errors for a result from before they were kept), unfinished and
// dropped.
func errorsOverTime(id string, ivs []result.Interval) Chart {
	var kinds []string
	byKind := false
	for _, iv := range ivs {
		for k := range iv.ErrorsByKind {
			byKind = true
			if !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		}
	}
	slices.Sort(kinds)
	var series []Series
	if byKind {
		for _, k := range kinds {
			sr := Series{Name: k}
			for _, iv := range ivs {
				sr.Points = append(sr.Points, Point{iv.TS, float64(iv.ErrorsByKind[k])})
			}
			series = append(series, sr)
		}
	} else {
		e := Series{Name: "errors"}
		for _, iv := range ivs {
			e.Points = append(e.Points, Point{iv.TS, float64(iv.Errors)})
		}
		series = append(series, e)
	}
	u, d := Series{Name: "unfinished"}, Series{Name: "dropped"}
	for _, iv := range ivs {
		u.Points = append(u.Points, Point{iv.TS, float64(iv.Unfinished)})
		d.Points = append(d.Points, Point{iv.TS, float64(iv.Dropped)})
	}
	return Chart{ID: id, Title: "Errors by kind, unfinished and dropped requests, per interval",
		X: Axis{Label: "time since the measured start", Format: fmtSeconds},
		Y: Axis{Label: "requests", Format: fmtCount}, Series: append(series, u, d)}
}

// spectrumQuantiles are the points of the percentile spectrum: dense
// toward the tail, as HdrHistogram's plots.
func spectrumQuantiles() []float64 {
	var qs []float64
	for e := 0.0; e <= 6.0001; e += 0.05 {
		qs = append(qs, 100*(1-math.Pow(10, -e)))
	}
	return qs
}

// spectrumChart is latency by percentile, the percentile axis in "nines"
// (log10 of 1/(1-q)), one series per histogram given (corrected and
// service time in rate mode).
func spectrumChart(id string, hists []namedHist) Chart {
	c := Chart{ID: id, Title: "Latency by percentile",
		X: Axis{Label: "percentile (log scale of 1/(1-p))", Ticks: []Tick{
			{0, "0%"}, {1, "90%"}, {2, "99%"}, {3, "99.9%"}, {4, "99.99%"}, {5, "99.999%"}, {6, "99.9999%"}}},
		Y: Axis{Label: "latency (log)", Log: true, Format: fmtLatency}}
	for _, nh := range hists {
		s := Series{Name: nh.name}
		if nh.h == nil || nh.h.TotalCount() == 0 {
			// No latency to draw: the series keeps its place (and so its
			// colour) in the legend, as it has in the page's other charts.
			c.Series = append(c.Series, s)
			continue
		}
		total := nh.h.TotalCount()
		for _, q := range spectrumQuantiles() {
			// Past 1/total the percentiles repeat the maximum: stop there.
			if 1-q/100 < 1/float64(total) && len(s.Points) > 0 {
				break
			}
			s.Points = append(s.Points, Point{math.Log10(1 / (1 - q/100)), float64(nh.h.ValueAtQuantile(q))})
		}
		s.Points = append(s.Points, Point{math.Min(math.Log10(float64(total)), 6), float64(nh.h.Max())})
		c.Series = append(c.Series, s)
	}
	return c
}

// histogramChart is the count of requests per latency bucket, the buckets
// equal on a log axis (12 a decade).
func histogramChart(id string, h *hdrhistogram.Histogram) Chart {
	const perDecade = 12
	counts := map[int]int64{}
	for _, br := range h.Distribution() {
		if br.Count == 0 {
			continue
		}
		v := math.Max(float64(br.From+br.To)/2, 1)
		counts[int(math.Floor(math.Log10(v)*perDecade))] += br.Count
	}
	c := Chart{ID: id, Title: "Latency histogram",
		X: Axis{Label: "latency (log)", Log: true, Format: fmtLatency},
		Y: Axis{Label: "requests", Format: fmtCount}}
	lo, hi := math.MaxInt, math.MinInt
	for k := range counts {
		lo, hi = min(lo, k), max(hi, k)
	}
	for k := lo; k <= hi; k++ { // ascending: the same bytes every time
		if n := counts[k]; n > 0 {
			c.Bars = append(c.Bars, Bar{math.Pow(10, float64(k)/perDecade), math.Pow(10, float64(k+1)/perDecade), float64(n)})
		}
	}
	return c
}

// namedHist is a histogram and what it measures.
type namedHist struct {
	name string
	h    *hdrhistogram.Histogram
}

// decodeHist decodes a V2 histogram string ("" is none: nil). The decoder
// can panic on malformed input: that is an error here, never a crash.
func decodeHist(s string) (h *hdrhistogram.Histogram, err error) {
	if s == "" {
		return nil, nil
	}
	defer func() {
		if p := recover(); p != nil {
			h, err = nil, fmt.Errorf("corrupt histogram: %v", p)
		}
	}()
	return hdrhistogram.Decode([]byte(s))
}
