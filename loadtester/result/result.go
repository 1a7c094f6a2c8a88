package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"weaseldb/internal/jsonfile"
)

// ResultVersion is the schema version of the --json result. Version 2 added
// the accounting (due, answered, failed, unfinished, dropped, per interval
// too, warmup), the service time and lower_bounds; ReadResult still reads
// version 1, whose new fields are zero.
const ResultVersion = 2

// Latency holds percentiles in nanoseconds.
type Latency struct {
	P50  int64   `json:"p50"`
	P90  int64   `json:"p90"`
	P99  int64   `json:"p99"`
	P999 int64   `json:"p999"`
	Max  int64   `json:"max"`
	Mean float64 `json:"mean"`
}

// Interval is one stats interval of the measured run.
type Interval struct {
	TS             float64 `json:"t_s"` // end of the interval, seconds since the measured start
	LengthS        float64 `json:"length_s"`
	Requests       int64   `json:"requests"`
	RequestsPerSec float64 `json:"requests_per_sec"`
	P50NS          int64   `json:"p50_ns"`
	P99NS          int64   `json:"p99_ns"`
	Errors         int64   `json:"errors"`
	// ErrorsByKind splits Errors by kind (as Result.ErrorsByKind); absent
	// from an interval without errors, and from results before it.
	ErrorsByKind    map[string]int64 `json:"errors_by_kind,omitempty"`
	OpenConnections int              `json:"open_connections"`
	// Due requests of this interval (by intended send time in rate mode,
	// by send time in the closed loop) that ended unfinished or dropped.
	Unfinished int64 `json:"unfinished"`
	Dropped    int64 `json:"dropped"`
	// Histogram is the interval's latency histogram (HdrHistogram V2
	// compressed, base64), lower bounds included, for an exact merge.
	Histogram string `json:"histogram,omitempty"`
}

// Result is a finished run: what Run returns and WriteJSON writes.
type Result struct {
	Version int    `json:"version"`
	Target  string `json:"target"`
	// Who measured, and when: the instance's name (--instance), the wall
	// time the measured window opened (RFC 3339, UTC), the machine's CPU
	// count and its clock source. A merged result names "merged" and lists
	// its inputs in Instances.
	Instance    string `json:"instance"`
	WindowStart string `json:"window_start"`
	CPUs        int    `json:"cpus"`
	// Machine is who measured: "HOSTNAME (CPU model)"; a merge counts
	// CPUs once per distinct machine. A merge of several machines has
	// none; results before it have none either.
	Machine     string        `json:"machine,omitempty"`
	ClockSource string        `json:"clock_source"`
	Instances   []InstanceRow `json:"instances,omitempty"`
	// Command is the command line that ran it, as a shell takes it back
	// (absent from a library caller that gave none, and from a merge).
	Command string `json:"command,omitempty"`
	// VegetaFile is where --vegeta wrote this run's results, as given.
	VegetaFile string `json:"vegeta_file,omitempty"`

	Requests  int64 `json:"requests"`  // responses received, any status
	Successes int64 `json:"successes"` // 2xx responses
	Errors    int64 `json:"errors"`    // failed requests and connects, non-2xx included
	// Accounting (docs/load_tester.md): every request due in the measured
	// window ends in exactly one of answered, failed, unfinished (sent, no
	// complete response by the end of the drain) and dropped (rate mode:
	// due, never sent); due is their sum. A healthy run has 0 unfinished
	// and 0 dropped.
	Due        int64 `json:"due"`
	Answered   int64 `json:"answered"`
	Failed     int64 `json:"failed"`
	Unfinished int64 `json:"unfinished"`
	Dropped    int64 `json:"dropped"`
	// LowerBounds counts the latencies recorded as lower bounds (the
	// unfinished and dropped requests: the end of the drain minus when they
	// were due); the percentiles include them.
	LowerBounds int64 `json:"lower_bounds"`
	// Warmup is the same accounting for the requests due during the warm-up
	// (excluded from everything else), present when there was a warm-up.
	Warmup         *Accounting `json:"warmup,omitempty"`
	DurationS      float64     `json:"duration_s"`
	RequestsPerSec float64     `json:"requests_per_sec"`
	Latency        Latency     `json:"latency_ns"`
	// Rate mode: the service time, measured from each request's actual
	// send (latency_ns is measured from its intended send time), with its
	// own HdrHistogram V2.
	ServiceLatency   *Latency `json:"service_latency_ns,omitempty"`
	ServiceHistogram string   `json:"service_histogram,omitempty"`
	// FailedLatency is the latency of the failed requests that got a
	// response (one a --check refused), from when each was due, with its
	// own HdrHistogram V2: the server answered them, so their latency is a
	// fact, kept apart from latency_ns (the answered requests'). Absent
	// when no failed request got a response.
	FailedLatency     *Latency         `json:"failed_latency_ns,omitempty"`
	FailedHistogram   string           `json:"failed_histogram,omitempty"`
	Intervals         []Interval       `json:"intervals"`
	ErrorsByKind      map[string]int64 `json:"errors_by_kind"`
	StatusCodes       map[string]int64 `json:"status_codes"`
	ConnectionsOpened int64            `json:"connections_opened"`
	BytesIn           int64            `json:"bytes_in"`
	BytesOut          int64            `json:"bytes_out"`

	// Reconnects after a failed connect, handshake or connection that
	// waited out a back-off first (connect.go), during the measured run as
	// connections_opened, and how long they waited in all and at most.
	ReconnectBackoffs    int64   `json:"reconnect_backoffs"`
	ReconnectBackoffS    float64 `json:"reconnect_backoff_s"`
	ReconnectBackoffMaxS float64 `json:"reconnect_backoff_max_s"`

	// Open loop only: the asked rate, requests that found every connection
	// busy when due, and sends late while a connection was free.
	RateAsked     float64 `json:"rate_asked,omitempty"`
	WaitedForConn int64   `json:"waited_for_connection,omitempty"`
	LateSends     int64   `json:"late_sends,omitempty"`
	// LateSendLateness is how late the late sends were (from their
	// intended time); BehindSchedule is set, with its reason, when more
	// than 1% of the sends were late: the client fell behind its schedule,
	// which is not client_bound (a busy client) — an idle client can be
	// late too (a slow wake-up, a descheduled thread).
	LateSendLateness     *Latency `json:"late_send_lateness_ns,omitempty"`
	BehindSchedule       bool     `json:"behind_schedule,omitempty"`
	BehindScheduleReason string   `json:"behind_schedule_reason,omitempty"`
	// ResponseStamps (open loop): every network thread timed its responses
	// by the kernel's receive stamps and read them on its own wakes
	// (rxstamp.go); false: by its own clock when it read them.
	ResponseStamps bool  `json:"response_stamps,omitempty"`
	RecordErrors   int64 `json:"histogram_record_errors"`
	// Kinds: with a workload, each request kind's own accounting and
	// latencies (kinds.go); absent otherwise.
	Kinds []KindResult `json:"kinds,omitempty"`
	// Stages: with --stages, each stage's own accounting and latency, by
	// when each request was due (stages.go).
	Stages         []StageResult `json:"stages,omitempty"`
	ClientCPUS     float64       `json:"client_cpu_s"`     // getrusage user+system over the measured window
	ClientCPUCores float64       `json:"client_cpu_cores"` // client_cpu_s / duration_s
	// ClientCPUFraction is client_cpu_cores over the cores the network
	// threads could use (min(network threads, CPUs)); 1.0 is all of them.
	ClientCPUFraction float64 `json:"client_cpu_fraction"`
	BusiestThreadCPU  float64 `json:"busiest_network_thread_cpu"` // that thread's CPU / its wall time
	// IOBackend is the engine the network threads ran on (epoll,
	// io_uring); IOBackendFallback says why io_uring, asked for, was not.
	IOBackend         string   `json:"io_backend,omitempty"`
	IOBackendFallback string   `json:"io_backend_fallback,omitempty"`
	ClientCPUNsPerReq float64  `json:"client_cpu_ns_per_request"`
	ClientBound       bool     `json:"client_bound"`
	ClientBoundReason string   `json:"client_bound_reason,omitempty"`
	Interrupted       bool     `json:"interrupted"`
	Warnings          []string `json:"warnings,omitempty"`
	// Protocol is "h2" (HTTP/2 over TLS) or "h2c" (HTTP/2 with prior
	// knowledge) with --http2; absent for HTTP/1.1.
	Protocol string `json:"protocol,omitempty"`
	// TLS: an https:// run's TLS (tlsconn.go); absent for plaintext.
	TLS *TLSInfo `json:"tls,omitempty"`
	// Checks: each --check's passes and failures over the measured
	// window's responses; a response failing any is failed (kind "check").
	Checks []CheckResult `json:"checks,omitempty"`
	// Thresholds: each --threshold judged against this result (threshold.go).
	Thresholds        []ThresholdResult `json:"thresholds,omitempty"`
	Config            any               `json:"config"`
	Histogram         string            `json:"histogram"` // HdrHistogram V2 compressed, base64 ("HISTF...")
	VegetaSampleEvery int               `json:"vegeta_sample_every,omitempty"`
	hist              *hdrhistogram.Histogram
	svcHist           *hdrhistogram.Histogram   // ReadResult: the service histogram, decoded
	failedHist        *hdrhistogram.Histogram   // the failed requests' with a response (nil: none)
	ivHists           []*hdrhistogram.Histogram // ReadResult: each interval's, decoded (nil if absent)
	// Run only: lower bounds landed in intervals already reported to
	// OnInterval (HDRLog.Finish rewrites its log), and the requests kept
	// for WriteVegeta.
	amended bool
	vegeta  *VegetaRun
}

// CheckResult is one check over a run's measured responses: a --check,
// judged on every response, or a workload kind's, judged on its kinds'
// alone (Kinds names them; empty: every kind).
type CheckResult struct {
	Expr   string   `json:"expr"`
	Kinds  []string `json:"kinds,omitempty"`
	Passed int64    `json:"passed"`
	Failed int64    `json:"failed"`
}

// TLSInfo is what an https:// run's TLS did: the protocol the preflight
// connection negotiated, and every handshake of the run's own connections
// (warm-up and drain included), timed on the connect threads from the
// first ClientHello to the handshake's end, apart from request latency.
type TLSInfo struct {
	Version    string  `json:"version"` // "TLS 1.3"
	Cipher     string  `json:"cipher"`
	ALPN       string  `json:"alpn,omitempty"` // the protocol the server chose ("http/1.1"), if any
	Handshakes int64   `json:"handshakes"`
	Resumed    int64   `json:"resumed"` // of them, abbreviated (--tls-resume)
	Handshake  Latency `json:"handshake_ns"`
	Histogram  string  `json:"handshake_histogram"` // HdrHistogram V2 compressed, base64
	hist       *hdrhistogram.Histogram
}

// IntervalReport is one measured interval as it closes (Config.OnInterval).
type IntervalReport struct {
	// Interval is as Result.Intervals will hold it, but for its Histogram
	// (empty here: Hist holds it) and the lower bounds of requests that
	// never finished, which are added when the run ends (Result.Intervals
	// has them; HDRLog.Finish rewrites a streamed log with them).
	Interval
	Start, End time.Time               // the interval's bounds on the run's clock
	Hist       *hdrhistogram.Histogram // its latencies (ns); valid during the call only
}

// InstanceRow is one input of a merged result.
type InstanceRow struct {
	Name              string  `json:"name"`
	WindowStart       string  `json:"window_start"`
	DurationS         float64 `json:"duration_s"`
	RequestsPerSec    float64 `json:"requests_per_sec"`
	Due               int64   `json:"due"`
	Unfinished        int64   `json:"unfinished"`
	Dropped           int64   `json:"dropped"`
	Errors            int64   `json:"errors"`
	ClientCPUCores    float64 `json:"client_cpu_cores"`
	ClientCPUFraction float64 `json:"client_cpu_fraction"`
	ClientBound       bool    `json:"client_bound"`
	BehindSchedule    bool    `json:"behind_schedule,omitempty"`
	CPUs              int     `json:"cpus"`
	Machine           string  `json:"machine,omitempty"`
	ClockSource       string  `json:"clock_source"`
}

// Accounting is the fate of the requests due in one phase of a run.
type Accounting struct {
	Due        int64 `json:"due"`
	Answered   int64 `json:"answered"`
	Failed     int64 `json:"failed"`
	Unfinished int64 `json:"unfinished"`
	Dropped    int64 `json:"dropped"`
}

// Clean tells whether every due request was answered or failed: a run with
// unfinished or dropped requests is not a clean sample of the server's speed.
func (r *Result) Clean() bool { return r.Unfinished == 0 && r.Dropped == 0 }

// Hist is the merged latency histogram of the measured run (ns).
func (r *Result) Hist() *hdrhistogram.Histogram { return r.hist }

func latencyOf(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{P50: h.ValueAtQuantile(50), P90: h.ValueAtQuantile(90), P99: h.ValueAtQuantile(99),
		P999: h.ValueAtQuantile(99.9), Max: h.Max(), Mean: h.Mean()}
}

// WriteJSON writes res as the versioned JSON result (--json), indented,
// with a final newline.
func WriteJSON(w io.Writer, res *Result) error {
	if err := jsonfile.Write(w, res); err != nil {
		return fmt.Errorf("result: %w", err)
	}
	return nil
}

// ReadResult reads a --json file back.
func ReadResult(path string) (*Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read result: %w", err)
	}
	return parseResult(data, path)
}

// parseResult decodes a --json result and its histograms; path names it in
// errors.
func parseResult(data []byte, path string) (*Result, error) {
	var r Result
	var err error
	if err = json.Unmarshal(data, &r); err != nil {
		if len(bytes.TrimSpace(data)) == 0 {
			return nil, fmt.Errorf("parse result %s: empty file", path)
		}
		var syn *json.SyntaxError
		if errors.As(err, &syn) && syn.Offset >= int64(len(data)) { // cut short (a full disk, a killed writer)
			return nil, fmt.Errorf("parse result %s: truncated JSON: %w", path, err)
		}
		return nil, fmt.Errorf("parse result %s: %w", path, err)
	}
	var kind struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal(data, &kind) == nil && kind.Kind != "" {
		return nil, fmt.Errorf("result %s: a %q document, not a single run's result (ReadSteps reads rate steps)", path, kind.Kind)
	}
	if r.Version == 0 {
		return nil, fmt.Errorf("result %s: not a load_tester result (no \"version\")", path)
	}
	if r.Version != ResultVersion && r.Version != 1 {
		return nil, fmt.Errorf("result %s: version %d, want 1 or %d", path, r.Version, ResultVersion)
	}
	if r.hist, err = decodeHist(r.Histogram); err != nil {
		return nil, fmt.Errorf("result %s: histogram: %w", path, err)
	}
	if r.svcHist, err = decodeHist(r.ServiceHistogram); err != nil {
		return nil, fmt.Errorf("result %s: service_histogram: %w", path, err)
	}
	if r.failedHist, err = decodeHist(r.FailedHistogram); err != nil {
		return nil, fmt.Errorf("result %s: failed_histogram: %w", path, err)
	}
	if r.TLS != nil {
		if r.TLS.hist, err = decodeHist(r.TLS.Histogram); err != nil {
			return nil, fmt.Errorf("result %s: tls handshake_histogram: %w", path, err)
		}
	}
	for i := range r.Kinds {
		k := &r.Kinds[i]
		if k.hist, err = decodeHist(k.Histogram); err != nil {
			return nil, fmt.Errorf("result %s: kind %s histogram: %w", path, k.Name, err)
		}
		if k.svcHist, err = decodeHist(k.ServiceHistogram); err != nil {
			return nil, fmt.Errorf("result %s: kind %s service_histogram: %w", path, k.Name, err)
		}
		if k.failedHist, err = decodeHist(k.FailedHistogram); err != nil {
			return nil, fmt.Errorf("result %s: kind %s failed_histogram: %w", path, k.Name, err)
		}
	}
	for i := range r.Stages {
		if r.Stages[i].hist, err = decodeHist(r.Stages[i].Histogram); err != nil {
			return nil, fmt.Errorf("result %s: stage %d histogram: %w", path, i+1, err)
		}
		if r.Stages[i].failedHist, err = decodeHist(r.Stages[i].FailedHistogram); err != nil {
			return nil, fmt.Errorf("result %s: stage %d failed_histogram: %w", path, i+1, err)
		}
	}
	r.ivHists = make([]*hdrhistogram.Histogram, len(r.Intervals))
	for i, iv := range r.Intervals {
		if r.ivHists[i], err = decodeHist(iv.Histogram); err != nil {
			return nil, fmt.Errorf("result %s: interval %d histogram: %w", path, i+1, err)
		}
	}
	return &r, nil
}

// decodeHist decodes a V2 histogram string; "" is no histogram (nil).
// hdrhistogram's decoder can panic on some malformed inputs: that is an
// error too, never a crash.
func decodeHist(s string) (h *hdrhistogram.Histogram, err error) {
	if s == "" {
		return nil, nil
	}
	defer func() {
		if p := recover(); p != nil {
			h, err = nil, fmt.Errorf("corrupt: %v", p)
		}
	}()
	return hdrhistogram.Decode([]byte(s))
}

// VegetaRun is what a run kept for WriteVegeta (the engine fills it in).
type VegetaRun struct {
	Kept     []VegetaSample // in due-time order
	Offered  int64          // results offered to the samplers
	Every    int            // the sampling stride (1: all kept)
	Base     time.Time
	URLs     []string // by request kind
	Methods  []string
	BytesOut uint64 // the request's size (the mean, when requests differ)
}

// VegetaSample is one request kept: its intended send time (ns since Base),
// latency, status, kind and error name ("" for none).
type VegetaSample struct {
	Start, Latency int64
	Code           uint16
	Kind           uint8
	Err            string
}

// VegetaKept says how many per-request results the run kept for WriteVegeta
// and of how many: when it kept fewer, it kept every VegetaSampleEvery-th of
// each network thread, evenly spaced over the run. A result Run did not
// return with VegetaMax set kept none.
func (r *Result) VegetaKept() (kept int, of int64) {
	if r.vegeta == nil {
		return 0, 0
	}
	return len(r.vegeta.Kept), r.vegeta.Offered
}

// Vegeta is what the run kept for its vegeta file (nil: nothing).
func (r *Result) Vegeta() *VegetaRun { return r.vegeta }
