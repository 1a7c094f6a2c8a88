package result

import (
	"fmt"
	"io"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"weaseldb/internal/numfmt"
)

// StageResult is one stage of a ramp (--stages): the requests due while
// it ran, each counted in the stage it was due in, as the whole run counts
// them (due = answered + failed + unfinished + dropped), with latency from
// each request's intended send time. A stage that fell in the warm-up,
// wholly or in part, counts only what was due in the measured window.
type StageResult struct {
	Stage int `json:"stage"` // from 1, in --stages order
	// StartS and EndS bound the stage, seconds from the schedule's start;
	// From and To are the rates it moves between (req/s), or with
	// Connections the closed loop's connections (--concurrency-stages).
	StartS      float64 `json:"start_s"`
	EndS        float64 `json:"end_s"`
	From        float64 `json:"from"`
	To          float64 `json:"to"`
	Connections bool    `json:"connections,omitempty"`
	// MeasuredS is how much of the stage the measured window covered;
	// Unmeasured says why none of it was: "warm-up", or "after the end"
	// (the run ended before the stage began: interrupted, or its data
	// file ran out).
	MeasuredS      float64 `json:"measured_s"`
	Unmeasured     string  `json:"unmeasured,omitempty"`
	Due            int64   `json:"due"`
	Answered       int64   `json:"answered"`
	Successes      int64   `json:"successes"` // 2xx answers
	Failed         int64   `json:"failed"`
	Unfinished     int64   `json:"unfinished"`
	Dropped        int64   `json:"dropped"`
	RequestsPerSec float64 `json:"requests_per_sec"` // answered over MeasuredS
	Latency        Latency `json:"latency_ns"`
	// Histogram is HdrHistogram V2 (base64), lower bounds included, for an
	// exact merge.
	Histogram string `json:"histogram"`
	// FailedLatency and FailedHistogram: the stage's failed requests that
	// got a response, as Result's.
	FailedLatency    *Latency `json:"failed_latency_ns,omitempty"`
	FailedHistogram  string   `json:"failed_histogram,omitempty"`
	hist, failedHist *hdrhistogram.Histogram
}

// SetHistogram sets the stage's decoded histogram (the engine, which has
// it at hand).
func (s *StageResult) SetHistogram(h *hdrhistogram.Histogram) { s.hist = h }

// SetFailedHistogram sets the stage's failed requests' histogram (nil or
// empty: none) and what it reports: FailedLatency and FailedHistogram.
func (s *StageResult) SetFailedHistogram(h *hdrhistogram.Histogram) {
	s.failedHist, s.FailedLatency, s.FailedHistogram = failedFields(h)
}

// FailedHist is the stage's failed requests' histogram (nil: none).
func (s *StageResult) FailedHist() *hdrhistogram.Histogram { return s.failedHist }

// printStages writes the summary's per-stage table (nothing without stages).
func (r *Result) printStages(w io.Writer) {
	if len(r.Stages) == 0 {
		return
	}
	target, label := "rate", "latency (CO)"
	if r.Stages[0].Connections {
		target, label = "connections", "latency"
	}
	fmt.Fprintf(w, "  per stage     %-15s %-17s %9s %9s %7s %10s %8s %9s   %s p50 / p99 / max\n",
		"stage", target, "due", "answered", "failed", "unfinished", "dropped", "req/s", label)
	for _, s := range r.Stages {
		l := s.Latency
		span := fmt.Sprintf("%d %s-%s", s.Stage, stageSeconds(s.StartS), stageSeconds(s.EndS))
		rate := fmt.Sprintf("%s→%s", rateText(s.From), rateText(s.To))
		if s.Unmeasured != "" {
			fmt.Fprintf(w, "                %-15s %-17s (%s: not measured)\n", span, rate, s.Unmeasured)
			continue
		}
		part := ""
		if length := s.EndS - s.StartS; s.MeasuredS < 0.95*length {
			// The rest was warm-up, or after the end; a few ms short is the
			// schedule's clock starting after the run's, not worth a word.
			part = fmt.Sprintf("  (measured %.2fs of it)", s.MeasuredS)
		}
		fmt.Fprintf(w, "                %-15s %-17s %9d %9d %7d %10d %8d %9.0f   %s / %s / %s%s\n",
			span, rate, s.Due, s.Answered, s.Failed, s.Unfinished, s.Dropped, s.RequestsPerSec,
			numfmt.Latency(l.P50), numfmt.Latency(l.P99), numfmt.Latency(l.Max), part)
		printFailedRow(w, s.FailedLatency)
	}
}

// stageSeconds formats a stage's bound: whole seconds without decimals.
func stageSeconds(s float64) string {
	if s == math.Trunc(s) {
		return fmt.Sprintf("%.0fs", s)
	}
	return fmt.Sprintf("%.3gs", s)
}

// stages adds each stage over the instances, matched by position: counts
// summed, histograms added. Instances that ran other ramps cannot be
// added stage by stage: the merge then has no stages, and says why.
func (m *mergeState) stages() {
	first := m.inputs[0].Result.Stages
	for _, in := range m.inputs[1:] {
		if !sameStages(first, in.Result.Stages) {
			if len(first) > 0 || len(in.Result.Stages) > 0 {
				m.out.Warnings = append(m.out.Warnings, "the instances ran different --stages: the merge has no per-stage results")
			}
			return
		}
	}
	out := make([]StageResult, len(first))
	for i, s := range first {
		out[i] = StageResult{Stage: s.Stage, StartS: s.StartS, EndS: s.EndS, From: s.From, To: s.To, Connections: s.Connections,
			MeasuredS: s.MeasuredS, Unmeasured: s.Unmeasured, hist: newHistogram()}
	}
	for _, in := range m.inputs {
		for i, s := range in.Result.Stages {
			o := &out[i]
			o.Due += s.Due
			o.Answered += s.Answered
			o.Successes += s.Successes
			o.Failed += s.Failed
			o.Unfinished += s.Unfinished
			o.Dropped += s.Dropped
			if s.hist != nil {
				o.hist.Merge(s.hist)
			}
			o.failedHist = addFailed(o.failedHist, s.failedHist)
		}
	}
	for i := range out {
		o := &out[i]
		if o.MeasuredS > 0 {
			o.RequestsPerSec = float64(o.Answered) / o.MeasuredS
		}
		o.Latency = latencyOf(o.hist)
		o.SetFailedHistogram(o.failedHist)
		if enc, err := o.hist.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
			o.Histogram = string(enc)
		}
	}
	m.out.Stages = out
}

// sameStages reports whether two runs' stages are the same ramp.
func sameStages(a, b []StageResult) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].StartS != b[i].StartS || a[i].EndS != b[i].EndS || a[i].From != b[i].From || a[i].To != b[i].To || a[i].Connections != b[i].Connections {
			return false
		}
	}
	return true
}

// rateText is a stage's rate in req/s, whole when it is.
func rateText(v float64) string {
	if v == math.Trunc(v) {
		return numfmt.Int(int64(v))
	}
	return numfmt.Format(v, 1)
}
