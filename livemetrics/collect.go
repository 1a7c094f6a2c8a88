package livemetrics

import (
	"sort"
	"weaseldb/loadtester/result"

	"github.com/prometheus/client_golang/prometheus"
)

// descriptors are the Exporter's metrics (docs/load_tester.md, "Live
// metrics").
type descriptors struct {
	requests, inFlight, openConns, phase, target, achieved, latency, info *prometheus.Desc
}

func newDescriptors(l Labels) descriptors {
	constant := prometheus.Labels{"target": l.Target, "instance_name": l.Instance}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("load_tester_"+name, help, labels, constant)
	}
	return descriptors{
		requests: d("requests_total", "Requests due so far by the phase they were due in and their outcome "+
			"(answered, failed, unfinished, dropped); failed ones by kind. Unfinished and dropped are counted when a run ends.",
			"phase", "outcome", "kind"),
		inFlight:  d("in_flight_requests", "Requests written and not yet answered or failed."),
		openConns: d("open_connections", "Connections open to the target."),
		phase:     d("phase", "1 for the phase the run is in (warmup, measured, drain, done), 0 for the others.", "phase"),
		target:    d("target_rate_requests_per_second", "The rate asked (0: closed loop)."),
		achieved:  d("achieved_rate_requests_per_second", "Answered requests per second over the last stats interval."),
		latency: d("latency_seconds", "Latency of the measured window's answered requests (corrected for coordinated "+
			"omission in rate mode), at the run's HDR precision; classic buckets and a native histogram."),
		info: d("info", "1: the run this load_tester serves."),
	}
}

// Describe sends every descriptor (prometheus.Collector).
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {
	d := e.descs
	for _, desc := range []*prometheus.Desc{d.requests, d.inFlight, d.openConns, d.phase, d.target, d.achieved, d.latency, d.info} {
		ch <- desc
	}
}

// Collect sends the run so far (prometheus.Collector): a copy is taken
// under the lock, the metrics built outside it.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	e.mu.Lock()
	st := e.st
	st.latency = e.st.latency.copy()
	measured, warmup := st.doneMeasured.plus(st.measured), st.doneWarmup.plus(st.warmup)
	e.mu.Unlock()

	d := e.descs
	sendTallies(ch, d.requests, string(result.PhaseMeasured), measured)
	sendTallies(ch, d.requests, string(result.PhaseWarmup), warmup)
	gauge := func(desc *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
	}
	gauge(d.inFlight, float64(st.inFlight))
	gauge(d.openConns, float64(st.openConns))
	for _, p := range result.Phases {
		v := 0.0
		if p == st.phase {
			v = 1
		}
		gauge(d.phase, v, string(p))
	}
	gauge(d.target, st.targetRate)
	gauge(d.achieved, st.achievedRate)
	gauge(d.info, 1)
	ch <- latencyMetric{desc: d.latency, h: st.latency}
}

// sendTallies sends one phase's request counters, failed ones by kind in
// a fixed order.
func sendTallies(ch chan<- prometheus.Metric, desc *prometheus.Desc, phase string, t tallies) {
	counter := func(v int64, outcome, kind string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(v), phase, outcome, kind)
	}
	counter(t.answered, "answered", "")
	counter(t.unfinished, "unfinished", "")
	counter(t.dropped, "dropped", "")
	kinds := make([]string, 0, len(t.failed))
	for k := range t.failed {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		counter(t.failed[k], "failed", k)
	}
}
