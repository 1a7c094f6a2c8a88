package result

import hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

// The failed requests that got a response (a --check refused it): their
// latency is kept in a histogram of its own, beside the answered
// requests', in the run, each kind and each stage (failed_latency_ns).

// failedFields is what a failed requests' histogram reports: itself (nil
// when empty), its percentiles and its V2 encoding; all absent for none.
func failedFields(h *hdrhistogram.Histogram) (*hdrhistogram.Histogram, *Latency, string) {
	if h == nil || h.TotalCount() == 0 {
		return nil, nil, ""
	}
	l := latencyOf(h)
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return h, &l, ""
	}
	return h, &l, string(enc)
}

// addFailed adds h into sum (a merge), making sum when it has none yet.
func addFailed(sum, h *hdrhistogram.Histogram) *hdrhistogram.Histogram {
	if h == nil {
		return sum
	}
	if sum == nil {
		sum = newHistogram()
	}
	sum.Merge(h)
	return sum
}

// SetFailedHistogram sets the run's failed requests' histogram (nil or
// empty: none) and what it reports: FailedLatency and FailedHistogram.
func (r *Result) SetFailedHistogram(h *hdrhistogram.Histogram) {
	r.failedHist, r.FailedLatency, r.FailedHistogram = failedFields(h)
}

// FailedHist is the run's failed requests' histogram (nil: none).
func (r *Result) FailedHist() *hdrhistogram.Histogram { return r.failedHist }

// failedCount is how many failed requests got a response.
func (r *Result) failedCount() int64 {
	if r.failedHist == nil {
		return 0
	}
	return r.failedHist.TotalCount()
}

// SetFailedHistogram sets the kind's failed requests' histogram (nil or
// empty: none) and what it reports.
func (k *KindResult) SetFailedHistogram(h *hdrhistogram.Histogram) {
	k.failedHist, k.FailedLatency, k.FailedHistogram = failedFields(h)
}

// FailedHist is the kind's failed requests' histogram (nil: none).
func (k *KindResult) FailedHist() *hdrhistogram.Histogram { return k.failedHist }
