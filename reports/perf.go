package reports

import (
	"fmt"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"weaseldb/internal/numfmt"
	"weaseldb/loadtester/result"
)

// Image file names, written next to the report in Options.ImageDir, each
// prefixed with its setup's name ("seed_throughput.png").
const (
	ThroughputPNG      = "throughput.png"
	SpectrumPNG        = "latency_spectrum.png"
	HistogramPNG       = "latency_histogram.png"
	LatencyOverTimePNG = "latency_over_time.png"
	WaitStrategiesPNG  = "wait_strategies.png"
)

// latencyUnit is the unit every latency of one setup is printed in: ms when
// the median is above 10 ms (closed-loop runs with thousands of
// connections), µs otherwise.
type latencyUnit struct {
	name  string
	scale float64 // unit per nanosecond
	prec  int
}

func chooseLatencyUnit(p50Ns float64) latencyUnit {
	if p50Ns >= 10e6 {
		return latencyUnit{name: "ms", scale: 1e-6, prec: 2}
	}
	return latencyUnit{name: "µs", scale: 1e-3, prec: 1}
}

// performance renders each setup's representative round in detail:
// throughput per interval and latency.
func (w *writer) performance() error {
	w.p("## Performance Metrics\n\n")
	for _, n := range w.setups {
		r := n.median
		w.p("### %s\n\n", capitalize(n.view.Setup.Title))
		if r == nil {
			w.p("_Not measured: no round of this setup produced a load result._\n\n")
			continue
		}
		if n.rps.n > 1 {
			w.p("Round %d, the median of the %d rounds the figures use (`%s`).\n\n", r.Number, n.rps.n, r.LoadName)
		}
		if err := w.throughput(n, r); err != nil {
			return err
		}
		if err := w.latency(n, r); err != nil {
			return err
		}
	}
	return nil
}

func (w *writer) throughput(n *setupNumbers, r *Round) error {
	l, title, name := r.Load, n.view.Setup.Title, r.LoadName
	w.p("#### Throughput\n\n")
	w.p("- **%s** on `/ok` through the 4-stage commit pipeline (%s requests, %s errors)\n",
		w.cite(fieldOf(fmt.Sprintf("%s: throughput, round %d", title, r.Number), l.RequestsPerSec, 1, "req/s", 0, name, "requests_per_sec")),
		w.cite(fieldOf(fmt.Sprintf("%s: requests completed, round %d", title, r.Number), float64(l.Requests), 1, "", 0, name, "requests")),
		w.cite(fieldOf(fmt.Sprintf("%s: request errors, round %d", title, r.Number), float64(l.Errors), 1, "", 0, name, "errors")))
	if l.Due > 0 || l.Unfinished > 0 || l.Dropped > 0 {
		w.p("- Accounting: %s\n", accounting(l.Due, l.Answered, l.Failed, l.Unfinished, l.Dropped))
	}
	if lo, hi, ok := intervalExtremes(l.Intervals); ok {
		w.p("- Per-interval throughput ranged from %s to %s over %d intervals\n",
			w.cite(fieldOf(fmt.Sprintf("%s: lowest interval throughput, round %d", title, r.Number), l.Intervals[lo].RequestsPerSec, 1, "req/s", 0, name, fmt.Sprintf("intervals[%d].requests_per_sec", lo))),
			w.cite(fieldOf(fmt.Sprintf("%s: highest interval throughput, round %d", title, r.Number), l.Intervals[hi].RequestsPerSec, 1, "req/s", 0, name, fmt.Sprintf("intervals[%d].requests_per_sec", hi))),
			len(l.Intervals))
	}
	if len(l.ErrorsByKind) > 0 {
		var parts []string
		for _, k := range sortedKeys(l.ErrorsByKind) {
			parts = append(parts, fmt.Sprintf("%s: %s", k, w.cite(fieldOf(fmt.Sprintf("%s: errors %s, round %d", title, k, r.Number), float64(l.ErrorsByKind[k]), 1, "", 0, name, "errors_by_kind."+k))))
		}
		w.p("- Errors by kind: %s\n", strings.Join(parts, ", "))
	}
	w.p("- Load tester CPU: %s on the same machine; client-bound: **%v**\n",
		w.cite(fieldOf(fmt.Sprintf("%s: load tester CPU, round %d", title, r.Number), l.ClientCPUCores, 1, "cores", 2, name, "client_cpu_cores")), l.ClientBound)
	if l.Interrupted {
		w.p("- **The load test was interrupted** before its duration ended\n")
	}
	w.p("\n")
	w.instances(l)
	return w.image(n.view.Setup.Name+"_"+ThroughputPNG, capitalize(title)+": throughput per interval",
		func(p string) error { return plotThroughput(p, l, name) })
}

// instances lists the load_tester instances a merged result adds up.
func (w *writer) instances(l *result.Result) {
	if len(l.Instances) == 0 {
		return
	}
	w.p("This result merges %d load_tester instances (`load_tester merge`, docs/distributed.md): their histograms are added and their counts summed.\n\n", len(l.Instances))
	w.p("| instance | window start (UTC) | req/s | due | unfinished | dropped | errors | client CPU cores | client-bound |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, in := range l.Instances {
		w.p("| %s | %s | %s | %s | %s | %s | %s | %s | %v |\n", in.Name, in.WindowStart, numfmt.Format(in.RequestsPerSec, 0),
			numfmt.Format(float64(in.Due), 0), numfmt.Format(float64(in.Unfinished), 0), numfmt.Format(float64(in.Dropped), 0),
			numfmt.Format(float64(in.Errors), 0), numfmt.Format(in.ClientCPUCores, 2), in.ClientBound)
	}
	w.p("\n")
}

func (w *writer) latency(n *setupNumbers, r *Round) error {
	l, title, name := r.Load, n.view.Setup.Title, r.LoadName
	w.p("#### Latency\n\n")
	mode := "Closed-loop latency of every request"
	if l.ServiceLatency != nil {
		mode = "Latency from each request's intended send time (coordinated omission corrected; the service time from the actual send is in `service_latency_ns`)"
	}
	w.p("%s, as the load tester measured it (`%s` `latency_ns`; p99.99 from its `histogram`).", mode, name)
	if l.LowerBounds > 0 {
		w.p(" **%d of these latencies are lower bounds**: requests that were unfinished or dropped, recorded as the end of the drain minus when they were due.", l.LowerBounds)
	}
	w.p("\n\n")
	u := chooseLatencyUnit(float64(l.Latency.P50))
	// In rate mode the service time (from each request's actual send) is
	// printed beside the corrected latency, each labelled (wrk2 prints both).
	service := func(key string) string { return "" }
	if sl := l.ServiceLatency; sl != nil {
		w.p("| percentile | latency, from the intended send | service time, from the actual send |\n|---|---|---|\n")
		service = func(key string) string {
			v := map[string]int64{"p50": sl.P50, "p90": sl.P90, "p99": sl.P99, "p999": sl.P999, "max": sl.Max}[key]
			return " " + w.cite(fieldOf(fmt.Sprintf("%s: service time %s, median round", title, key), float64(v), u.scale, u.name, u.prec, name, "service_latency_ns."+key)) + " |"
		}
	} else {
		w.p("| percentile | latency |\n|---|---|\n")
	}
	for _, p := range []struct{ label, key string }{{"p50", "p50"}, {"p90", "p90"}, {"p99", "p99"}, {"p99.9", "p999"}} {
		w.p("| %s | %s |%s\n", p.label, w.cite(w.latencyOf(n, p.key)), service(p.key))
	}
	h, err := DecodeHistogram(l.Histogram)
	if err == nil {
		svc := ""
		if sh, serr := DecodeHistogram(l.ServiceHistogram); serr == nil && l.ServiceLatency != nil {
			svc = " " + w.cite(fieldOf(fmt.Sprintf("%s: service time p99.99, median round", title), float64(sh.ValueAtQuantile(99.99)), u.scale, u.name, u.prec, name, "service_histogram:q=99.99")) + " |"
		} else if l.ServiceLatency != nil {
			svc = " not measured |"
		}
		w.p("| p99.99 | %s |%s\n", w.cite(fieldOf(fmt.Sprintf("%s: latency p99.99, median round", title), float64(h.ValueAtQuantile(99.99)), u.scale, u.name, u.prec, name, "histogram:q=99.99")), svc)
	}
	w.p("| max | %s |%s\n\n", w.cite(w.latencyOf(n, "max")), service("max"))
	if err != nil {
		w.p("_No latency plots: the load result's histogram could not be decoded (%v)._\n\n", err)
	} else if err := w.latencyPlots(n, h, u, name); err != nil {
		return err
	}
	if log := r.Hdr; log != nil {
		w.p("The HdrHistogram interval log (`%s`) holds %s intervals and %s requests in all.\n\n", r.HdrName,
			w.cite(fieldOf(fmt.Sprintf("%s: HDR log intervals, round %d", title, r.Number), float64(len(log.Intervals)), 1, "", 0, r.HdrName, "hdrlog:intervals")),
			w.cite(fieldOf(fmt.Sprintf("%s: HDR log requests, round %d", title, r.Number), float64(log.Total.TotalCount()), 1, "", 0, r.HdrName, "hdrlog:total_count")))
		return w.image(n.view.Setup.Name+"_"+LatencyOverTimePNG, capitalize(title)+": latency per interval",
			func(p string) error { return plotLatencyOverTime(p, log, u, r.HdrName) })
	}
	w.p("_No HdrHistogram interval log in this round._\n\n")
	return nil
}

func (w *writer) latencyPlots(n *setupNumbers, h *hdrhistogram.Histogram, u latencyUnit, name string) error {
	title, prefix := capitalize(n.view.Setup.Title), n.view.Setup.Name+"_"
	if err := w.image(prefix+SpectrumPNG, title+": latency percentile spectrum", func(p string) error { return plotSpectrum(p, h, u, name) }); err != nil {
		return err
	}
	return w.image(prefix+HistogramPNG, title+": latency histogram", func(p string) error { return plotHistogram(p, h, u, name) })
}
