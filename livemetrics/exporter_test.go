package livemetrics

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
	"weaseldb/loadtester/result"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape reads e's /metrics as Prometheus would (text format).
func scrape(t *testing.T, e *Exporter) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + e.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("exposition does not parse: %v", err)
	}
	return fams
}

// value is the sample of family name whose labels include want.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("no family %s", name)
	}
next:
	for _, m := range f.Metric {
		for _, lp := range m.Label {
			if v, ok := want[lp.GetName()]; ok && v != lp.GetValue() {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	t.Fatalf("%s has no sample with labels %v", name, want)
	return 0
}

func histOf(ns ...int64) *hdrhistogram.Histogram {
	h := hdrhistogram.New(1, 60e9, 3)
	for _, v := range ns {
		_ = h.RecordValue(v)
	}
	return h
}

// Counters add up across the runs of a sequence (rate steps count each from
// zero), the phase gauge follows the run, and the histogram holds every
// measured latency.
func TestExporterShowsTheRunSoFar(t *testing.T) {
	e, err := Listen("127.0.0.1:0", Labels{Target: "t", Instance: "a"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	fail := map[string]int64{"timeout": 2}
	e.Observe(result.Snapshot{Phase: result.PhaseWarmup, Warmup: result.Tally{Answered: 5}, OpenConnections: 3, TargetRate: 100, IntervalRate: 50})
	e.Observe(result.Snapshot{Phase: result.PhaseMeasured, Warmup: result.Tally{Answered: 5},
		Measured: result.Tally{Answered: 10, FailedByKind: fail}, InFlight: 4, OpenConnections: 3, TargetRate: 100,
		IntervalRate: 99, Hist: histOf(1e6, 2e6, 3e6)})
	fams := scrape(t, e)
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"load_tester_requests_total", map[string]string{"phase": "measured", "outcome": "answered"}, 10},
		{"load_tester_requests_total", map[string]string{"phase": "measured", "outcome": "failed", "kind": "timeout"}, 2},
		{"load_tester_requests_total", map[string]string{"phase": "warmup", "outcome": "answered"}, 5},
		{"load_tester_in_flight_requests", nil, 4},
		{"load_tester_open_connections", nil, 3},
		{"load_tester_phase", map[string]string{"phase": "measured"}, 1},
		{"load_tester_phase", map[string]string{"phase": "warmup"}, 0},
		{"load_tester_target_rate_requests_per_second", nil, 100},
		{"load_tester_achieved_rate_requests_per_second", nil, 99},
		{"load_tester_latency_seconds", nil, 3},
		{"load_tester_info", map[string]string{"target": "t", "instance_name": "a"}, 1},
	}
	for _, c := range checks {
		if got := value(t, fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %g, want %g", c.name, c.labels, got, c.want)
		}
	}
	// The first run ends; a second (the next rate step) counts from zero.
	e.Observe(result.Snapshot{Phase: result.PhaseDone, Warmup: result.Tally{Answered: 5},
		Measured: result.Tally{Answered: 12, FailedByKind: fail, Unfinished: 1}, Hist: histOf(4e6)})
	e.Observe(result.Snapshot{Phase: result.PhaseMeasured, Measured: result.Tally{Answered: 7}, Hist: histOf(5e6)})
	fams = scrape(t, e)
	if got := value(t, fams, "load_tester_requests_total", map[string]string{"phase": "measured", "outcome": "answered"}); got != 19 {
		t.Errorf("answered over two runs = %g, want 12 + 7", got)
	}
	if got := value(t, fams, "load_tester_requests_total", map[string]string{"phase": "measured", "outcome": "unfinished"}); got != 1 {
		t.Errorf("unfinished = %g, want 1", got)
	}
	if got := value(t, fams, "load_tester_latency_seconds", nil); got != 5 {
		t.Errorf("latencies = %g, want 5", got)
	}
	h := fams["load_tester_latency_seconds"].Metric[0].Histogram
	if s := h.GetSampleSum(); s < 0.0149 || s > 0.0151 {
		t.Errorf("latency sum %g s, want 0.015 (1+2+3+4+5 ms at HDR precision)", s)
	}
}

// Every series carries the instance's labels (a Prometheus server that
// scrapes several load_testers tells them apart by them), the latency
// histogram included, whose classic and native buckets both come out; a
// pedantic registry finds the metrics consistent with their descriptors.
func TestEverySeriesNamesTheInstance(t *testing.T) {
	e, err := Listen("127.0.0.1:0", Labels{Target: "http://h/", Instance: "pod-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(e); err != nil {
		t.Fatal(err)
	}
	for _, sn := range []result.Snapshot{
		{Phase: result.PhaseWarmup}, // nothing measured yet: an empty histogram
		{Phase: result.PhaseMeasured, Measured: result.Tally{Answered: 2, FailedByKind: map[string]int64{"reset": 1}},
			Hist: histOf(1e6, 3e6)},
	} {
		e.Observe(sn)
		fams, err := reg.Gather()
		if err != nil {
			t.Fatalf("%s: gather: %v", sn.Phase, err)
		}
		for _, f := range fams {
			for _, m := range f.Metric {
				got := map[string]string{}
				for _, lp := range m.Label {
					got[lp.GetName()] = lp.GetValue()
				}
				if got["target"] != "http://h/" || got["instance_name"] != "pod-1" {
					t.Errorf("%s: %s has labels %v, want target and instance_name", sn.Phase, f.GetName(), got)
				}
			}
		}
		h := fams[indexOf(t, fams, "load_tester_latency_seconds")].Metric[0].Histogram
		if len(h.Bucket) != len(classicBounds) || h.Schema == nil || len(h.PositiveSpan) == 0 {
			t.Errorf("%s: latency histogram has %d classic buckets, schema %v, %d spans: want both shapes",
				sn.Phase, len(h.Bucket), h.Schema, len(h.PositiveSpan))
		}
		if h.GetSampleCount() != uint64(sn.Measured.Answered) {
			t.Errorf("%s: latency histogram counts %d, want %d", sn.Phase, h.GetSampleCount(), sn.Measured.Answered)
		}
	}
}

func indexOf(t *testing.T, fams []*dto.MetricFamily, name string) int {
	t.Helper()
	for i, f := range fams {
		if f.GetName() == name {
			return i
		}
	}
	t.Fatalf("no family %s", name)
	return 0
}

// An address that cannot be bound fails at once, naming it.
func TestListenBusyAddressFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = Listen(ln.Addr().String(), Labels{})
	if err == nil || !strings.Contains(err.Error(), "--metrics-addr "+ln.Addr().String()) {
		t.Fatalf("Listen on a busy address: %v, want an error naming it", err)
	}
}

// WaitScraped returns once a scrape began after the run was done, not
// before; with no run done it has nothing to wait for.
func TestWaitScrapedWaitsForAScrapeOfTheEnd(t *testing.T) {
	e, err := Listen("127.0.0.1:0", Labels{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	if err := e.WaitScraped(context.Background()); !errors.Is(err, ErrNoRunDone) {
		t.Fatalf("WaitScraped before any run: %v, want ErrNoRunDone at once", err)
	}
	e.Observe(result.Snapshot{Phase: result.PhaseMeasured})
	if err := e.WaitScraped(context.Background()); !errors.Is(err, ErrNoRunDone) {
		t.Fatalf("WaitScraped while a run goes on: %v, want ErrNoRunDone at once", err)
	}
	scrape(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := e.WaitScraped(ctx); err == nil {
		t.Fatal("WaitScraped returned before the run was done")
	}
	e.Observe(result.Snapshot{Phase: result.PhaseDone})
	resp, err := http.Get("http://" + e.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err := e.WaitScraped(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestSpans(t *testing.T) {
	cases := []struct {
		buckets map[int]int64
		spans   string
		deltas  []int64
	}{
		{nil, "", nil},
		{map[int]int64{3: 2}, "3+1", []int64{2}},
		{map[int]int64{-2: 1, -1: 4, 0: 4, 5: 1}, "-2+3 4+1", []int64{1, 3, 0, -3}},
	}
	for _, c := range cases {
		sp, d := spans(c.buckets)
		var parts []string
		for _, s := range sp {
			parts = append(parts, strconv.Itoa(int(s.GetOffset()))+"+"+strconv.Itoa(int(s.GetLength())))
		}
		if got := strings.Join(parts, " "); got != c.spans {
			t.Errorf("spans(%v) = %q, want %q", c.buckets, got, c.spans)
		}
		if len(d) != len(c.deltas) {
			t.Fatalf("deltas(%v) = %v, want %v", c.buckets, d, c.deltas)
		}
		for i := range d {
			if d[i] != c.deltas[i] {
				t.Errorf("deltas(%v) = %v, want %v", c.buckets, d, c.deltas)
			}
		}
	}
}

func TestNativeIndex(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want int
	}{{1, 0}, {2, 8}, {0.5, -8}, {1.05, 1}} {
		if got := nativeIndex(c.v); got != c.want {
			t.Errorf("nativeIndex(%g) = %d, want %d", c.v, got, c.want)
		}
	}
}
