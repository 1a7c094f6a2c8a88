package result

import (
	"fmt"
	"io"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"weaseldb/internal/numfmt"
)

// KindResult is one request kind's share of a run (Result.Kinds, present
// when the run had a workload): the same accounting as the whole run's
// (due = answered + failed + unfinished + dropped), its latencies and its
// statuses.
type KindResult struct {
	Name   string `json:"name"`
	Method string `json:"method"`
	Path   string `json:"path"`
	Weight int    `json:"weight"`
	// Share is the kind's weight over the workload's total: the fraction
	// of requests it was meant to have.
	Share          float64          `json:"share"`
	Due            int64            `json:"due"`
	Answered       int64            `json:"answered"`
	Successes      int64            `json:"successes"` // 2xx answers
	Failed         int64            `json:"failed"`
	Unfinished     int64            `json:"unfinished"`
	Dropped        int64            `json:"dropped"`
	RequestsPerSec float64          `json:"requests_per_sec"`
	Latency        Latency          `json:"latency_ns"`
	ServiceLatency *Latency         `json:"service_latency_ns,omitempty"`
	StatusCodes    map[string]int64 `json:"status_codes"`
	// Histogram and ServiceHistogram are HdrHistogram V2 (base64), lower
	// bounds included, for an exact merge.
	Histogram        string `json:"histogram"`
	ServiceHistogram string `json:"service_histogram,omitempty"`
	// FailedLatency and FailedHistogram: the kind's failed requests that
	// got a response, as Result's.
	FailedLatency             *Latency `json:"failed_latency_ns,omitempty"`
	FailedHistogram           string   `json:"failed_histogram,omitempty"`
	hist, svcHist, failedHist *hdrhistogram.Histogram
}

// printKinds writes the summary's per-kind table (nothing without kinds).
func (r *Result) printKinds(w io.Writer) {
	if len(r.Kinds) == 0 {
		return
	}
	label := "latency"
	if r.RateAsked > 0 {
		label = "latency (CO)"
	}
	fmt.Fprintf(w, "  per kind      %-12s %6s %9s %9s %7s %10s %8s %6s   %s p50 / p99 / p99.9 / max\n",
		"kind", "share", "due", "answered", "failed", "unfinished", "dropped", "non-2xx", label)
	for _, k := range r.Kinds {
		l := k.Latency
		fmt.Fprintf(w, "                %-12s %5.1f%% %9d %9d %7d %10d %8d %6d   %s / %s / %s / %s\n",
			k.Name, 100*k.Share, k.Due, k.Answered, k.Failed, k.Unfinished, k.Dropped, k.Answered-k.Successes,
			numfmt.Latency(l.P50), numfmt.Latency(l.P99), numfmt.Latency(l.P999), numfmt.Latency(l.Max))
		printFailedRow(w, k.FailedLatency)
	}
}

// printFailedRow writes a kind's or a stage's failed requests' latency
// under its row (nothing when none got a response).
func printFailedRow(w io.Writer, f *Latency) {
	if f == nil {
		return
	}
	fmt.Fprintf(w, "                  failed latency (a response, refused by a check) p50 %s / p99 %s / max %s\n",
		numfmt.Latency(f.P50), numfmt.Latency(f.P99), numfmt.Latency(f.Max))
}
