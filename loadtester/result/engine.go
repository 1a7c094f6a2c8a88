package result

import (
	"io"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// What the engine that made a result attaches to it beyond its JSON: the
// decoded histograms (ReadResult decodes them from the JSON), whether late
// lower bounds amended intervals already reported, and the requests kept
// for the vegeta file.

// SetHistogram attaches the run's latency histogram (what Histogram encodes).
func (r *Result) SetHistogram(h *hdrhistogram.Histogram) { r.hist = h }

// SetAmended records that lower bounds landed in intervals already handed
// to Config.OnInterval (an HDR log written as it went is rewritten).
func (r *Result) SetAmended(amended bool) { r.amended = amended }

// SetVegeta attaches the requests kept for the vegeta file.
func (r *Result) SetVegeta(v *VegetaRun) { r.vegeta = v }

// SetHistogram attaches the handshakes' histogram (what Histogram encodes).
func (t *TLSInfo) SetHistogram(h *hdrhistogram.Histogram) { t.hist = h }

// SetHistograms attaches a kind's latency and service-time histograms.
func (k *KindResult) SetHistograms(latency, service *hdrhistogram.Histogram) {
	k.hist, k.svcHist = latency, service
}

// LatencyOf is a histogram's percentiles.
func LatencyOf(h *hdrhistogram.Histogram) Latency { return latencyOf(h) }

// IntervalHeader writes the progress lines' header.
func IntervalHeader(w io.Writer) { intervalHeader(w) }

// PrintInterval writes one progress line.
func PrintInterval(w io.Writer, iv Interval, warmup bool, every time.Duration) {
	printInterval(w, iv, warmup, false, every)
}

// PrintLastInterval writes the progress line of a run's last interval,
// the run having ended as planned (not interrupted): when shorter than the
// stats interval it is tagged "last", not "partial".
func PrintLastInterval(w io.Writer, iv Interval, every time.Duration) {
	printInterval(w, iv, false, true, every)
}

// ParseResult decodes a result from its JSON (name, a file's, for errors),
// its histograms too, as ReadResult does for a file.
func ParseResult(data []byte, name string) (*Result, error) { return parseResult(data, name) }

// ServiceHist is the decoded service-time histogram (rate mode; nil otherwise).
func (r *Result) ServiceHist() *hdrhistogram.Histogram { return r.svcHist }

// Hist is the handshakes' histogram.
func (t *TLSInfo) Hist() *hdrhistogram.Histogram { return t.hist }

// Hist is the kind's latency histogram.
func (k *KindResult) Hist() *hdrhistogram.Histogram { return k.hist }

// ServiceHist is the kind's service-time histogram (rate mode; nil otherwise).
func (k *KindResult) ServiceHist() *hdrhistogram.Histogram { return k.svcHist }
