// Package metrics holds the server's Prometheus metrics. Every label child
// is resolved once at construction, so recording on the request path is an
// atomic add, never a label lookup or an allocation; a release thread
// tallies its batch's requests and adds them once per batch
// (RequestTally).
package metrics

import (
	"bytes"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"
)

// Route is a request's route, the label of the request metrics.
type Route uint8

// Routes. RouteInvalid is a request refused before routing (400, 413, 431, ...).
const (
	RouteOK Route = iota
	RouteVersion
	RouteMetrics
	RouteCommit
	RouteStatus
	RouteSubscribe
	RouteRetention
	RouteNotFound
	RouteInvalid
	numRoutes
)

var routeNames = [numRoutes]string{"ok", "version", "metrics", "commit", "status", "subscribe", "retention", "not_found", "invalid"}

// String is the label value.
func (r Route) String() string { return routeNames[r] }

// statuses with their own pre-resolved child; others count as "other".
var statuses = [...]int{200, 201, 400, 404, 405, 408, 409, 410, 413, 414, 431, 500, 501, 503, 505}

// numStatusSlots is the statuses and "other".
const numStatusSlots = len(statuses) + 1

// Stage names of the commit pipeline, in order.
var StageNames = []string{"sequence", "resolve", "persist", "release"}

// Metrics is the server's metric set, registered in its own registry.
type Metrics struct {
	Registry *prometheus.Registry

	requests    [numRoutes][numStatusSlots]prometheus.Counter // [route][status index], last is "other"
	latency     *histogramVec                                 // by route, nanoseconds
	openConns   prometheus.Gauge
	accepted    prometheus.Counter
	batchSize   *histogramVec // by stage, items
	stageTime   *histogramVec // by stage, nanoseconds; its sums are the busy seconds
	stageWait   *histogramVec // by stage, nanoseconds: how long a batch waited for its stage
	pushBatches *histogramVec // requests
}

// Bucket bounds, as client_golang's ExponentialBuckets makes them (the
// exported le values are these floats).
var (
	latencyBounds   = newBounds(prometheus.ExponentialBuckets(1e-6, 4, 12), durationSeconds, 1e9) // 1 µs .. 4 s
	sizeBounds      = newBounds(prometheus.ExponentialBuckets(1, 2, 14), itemsFloat, 1)           // 1 .. 8192
	stageTimeBounds = newBounds(prometheus.ExponentialBuckets(1e-7, 4, 12), durationSeconds, 1e9) // 100 ns .. 0.4 s
	// A wait's tail is what it explains, so its buckets are finer (×3)
	// over about the same span: 100 ns .. 0.48 s (15: the most a search
	// here tells apart).
	stageWaitBounds = newBounds(prometheus.ExponentialBuckets(1e-7, 3, 15), durationSeconds, 1e9)
)

// New builds and registers every metric.
func New() *Metrics {
	m := &Metrics{Registry: prometheus.NewRegistry()}
	reqs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "weaseldb_http_requests_total",
		Help: "HTTP requests answered, by route and status code.",
	}, []string{"route", "code"})
	m.latency = newHistogramVec("weaseldb_http_request_duration_seconds",
		"Time from parsing a request to queuing its response, by route.",
		"route", routeNames[:], latencyBounds, nanosToSeconds)
	m.openConns = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "weaseldb_open_connections",
		Help: "Connections currently open.",
	})
	m.accepted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "weaseldb_connections_accepted_total",
		Help: "Connections accepted since start.",
	})
	m.batchSize = newHistogramVec("weaseldb_pipeline_batch_size",
		"Items per batch acquired by each commit pipeline stage.",
		"stage", StageNames, sizeBounds, itemsFloat)
	m.stageTime = newHistogramVec("weaseldb_pipeline_stage_batch_seconds",
		"Time each commit pipeline stage spent processing one batch.",
		"stage", StageNames, stageTimeBounds, nanosToSeconds)
	m.stageWait = newHistogramVec("weaseldb_pipeline_stage_wait_seconds",
		"Time a batch waited before each commit pipeline stage took it: for sequence, since the read that carried its first request; for the others, since the stage before released it.",
		"stage", StageNames, stageWaitBounds, nanosToSeconds)
	busy := &sumCounter{desc: prometheus.NewDesc("weaseldb_pipeline_stage_busy_seconds_total",
		"Total time each commit pipeline stage spent processing batches (not waiting).", []string{"stage"}, nil), h: m.stageTime}
	m.pushBatches = newHistogramVec("weaseldb_pipeline_push_size",
		"Requests handed to the commit pipeline per event-loop push.",
		"", nil, sizeBounds, itemsFloat)
	m.Registry.MustRegister(reqs, m.latency, m.openConns, m.accepted, m.batchSize, m.stageTime, m.stageWait, busy, m.pushBatches,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for r := Route(0); r < numRoutes; r++ {
		for i, s := range statuses {
			m.requests[r][i] = reqs.WithLabelValues(r.String(), strconv.Itoa(s))
		}
		m.requests[r][len(statuses)] = reqs.WithLabelValues(r.String(), "other")
	}
	return m
}

func statusIndex(status int) int {
	if status == statuses[0] {
		return 0 // 200, nearly every answer: no loop for it
	}
	for i, s := range statuses {
		if s == status {
			return i
		}
	}
	return len(statuses)
}

// Request records one answered request (a release thread tallies its
// batch's instead: RequestTally).
func (m *Metrics) Request(r Route, status int, latency time.Duration) {
	m.requests[r][statusIndex(status)].Inc()
	m.latency.observe(int(r), int64(latency))
}

// ConnOpened and ConnClosed track open connections.
func (m *Metrics) ConnOpened() { m.openConns.Inc(); m.accepted.Inc() }

// ConnClosed records a closed connection.
func (m *Metrics) ConnClosed() { m.openConns.Dec() }

// StageBatch records one batch of a pipeline stage: its size and the time
// spent on it.
func (m *Metrics) StageBatch(stage, size int, busy time.Duration) {
	m.batchSize.observe(stage, int64(size))
	m.stageTime.observe(stage, int64(busy))
}

// StageWait records how long one batch waited before its stage took it
// (the commit pipeline records it per batch, beside StageBatch).
func (m *Metrics) StageWait(stage int, wait time.Duration) {
	m.stageWait.observe(stage, int64(wait))
}

// Push records one event-loop push into the pipeline.
func (m *Metrics) Push(size int) { m.pushBatches.observe(0, int64(size)) }

// LoopStats are the event loops' own counts, read at every scrape.
type LoopStats struct {
	ClosedBy     map[string]int64 // connections the loops closed on their own, by cause
	StaleEvents  int64
	AcceptPauses int64
	Wakeups      int64
	// Loops are each loop's own counts, by loop index: with several loops
	// on one listener (EPOLLEXCLUSIVE), they show whether every loop took
	// connections and served requests.
	Loops []LoopCount
}

// LoopCount is one event loop's connections and requests since start.
type LoopCount struct {
	Accepted int64 // connections it accepted (those closed at once for the limit included)
	Requests int64 // requests it read and routed (refused ones not included)
}

// RegisterLoopStats exports the loops' counters through read, called at
// every scrape (the loops keep them as atomics: nothing is recorded on the
// request path for them). causes are the label values ClosedBy may hold,
// each exported from the start, at 0.
func (m *Metrics) RegisterLoopStats(causes []string, read func() LoopStats) {
	m.Registry.MustRegister(&loopCollector{causes: causes, read: read})
}

var (
	closedDesc = prometheus.NewDesc("weaseldb_connections_closed_total",
		"Connections the event loops closed on their own, by cause (header, body, idle or write timeout; connection_limit: accepted past max_connections and closed at once).",
		[]string{"cause"}, nil)
	staleDesc = prometheus.NewDesc("weaseldb_loop_stale_events_total",
		"epoll events dropped because the descriptor was closed and reused within one batch.", nil, nil)
	pausesDesc = prometheus.NewDesc("weaseldb_loop_accept_pauses_total",
		"Times a loop paused a listener after accept failed (descriptors exhausted, or an unexpected error).", nil, nil)
	wakeupsDesc = prometheus.NewDesc("weaseldb_loop_wakeups_total",
		"Wake-ups of a sleeping event loop by another thread (eventfd).", nil, nil)
	loopAcceptedDesc = prometheus.NewDesc("weaseldb_loop_connections_accepted_total",
		"Connections each event loop accepted, by loop index (how EPOLLEXCLUSIVE spread them).", []string{"loop"}, nil)
	loopRequestsDesc = prometheus.NewDesc("weaseldb_loop_requests_total",
		"Requests each event loop read and routed, by loop index (refused ones not included).", []string{"loop"}, nil)
)

type loopCollector struct {
	causes []string
	read   func() LoopStats
}

func (lc *loopCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- closedDesc
	ch <- staleDesc
	ch <- pausesDesc
	ch <- wakeupsDesc
	ch <- loopAcceptedDesc
	ch <- loopRequestsDesc
}

func (lc *loopCollector) Collect(ch chan<- prometheus.Metric) {
	st := lc.read()
	for _, cause := range lc.causes {
		ch <- prometheus.MustNewConstMetric(closedDesc, prometheus.CounterValue, float64(st.ClosedBy[cause]), cause)
	}
	ch <- prometheus.MustNewConstMetric(staleDesc, prometheus.CounterValue, float64(st.StaleEvents))
	ch <- prometheus.MustNewConstMetric(pausesDesc, prometheus.CounterValue, float64(st.AcceptPauses))
	ch <- prometheus.MustNewConstMetric(wakeupsDesc, prometheus.CounterValue, float64(st.Wakeups))
	for i, l := range st.Loops {
		loop := strconv.Itoa(i)
		ch <- prometheus.MustNewConstMetric(loopAcceptedDesc, prometheus.CounterValue, float64(l.Accepted), loop)
		ch <- prometheus.MustNewConstMetric(loopRequestsDesc, prometheus.CounterValue, float64(l.Requests), loop)
	}
}

// ContentType is the Content-Type of Encode's output.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Encode writes every metric in the Prometheus text format.
func (m *Metrics) Encode() ([]byte, error) {
	mfs, err := m.Registry.Gather()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}
