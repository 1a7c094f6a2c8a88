package result

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Merge of the results of several instances (docs/distributed.md). It is
// exact: histograms are added, never percentiles averaged; counts are summed
// over the whole run and per interval, intervals being matched by their wall
// time (window_start + t_s), so interval k of instances that shared
// --start-at lands in merged interval k. The merged result has the schema of
// a single run plus one row per instance.

// ErrMergeInput is a refusal of merge's inputs (the command exits 2).
var ErrMergeInput = errors.New("merge")

// MergeInput is one result to merge, named by where it came from.
type MergeInput struct {
	Path   string
	Result *Result // as ReadResult returns it (histograms decoded)
}

// Merge adds inputs into one result, with warnings for windows that do not
// overlap within one interval, configs that differ and client-bound
// instances. It refuses (ErrMergeInput) no inputs, inputs of another schema
// version and inputs without the histograms their counts need.
func Merge(inputs []MergeInput) (*Result, error) {
	if len(inputs) == 0 {
		return nil, fmt.Errorf("%w: no inputs (give the IN.json files of the instances)", ErrMergeInput)
	}
	for _, in := range inputs {
		if err := mergeable(in); err != nil {
			return nil, err
		}
	}
	m := &mergeState{inputs: inputs, out: &Result{Version: ResultVersion, Instance: "merged",
		ErrorsByKind: map[string]int64{}, StatusCodes: map[string]int64{}, hist: newHistogram(), ResponseStamps: true}}
	m.window()
	m.sums()
	if err := m.histograms(); err != nil {
		return nil, err
	}
	m.intervals()
	m.kinds()
	m.stages()
	m.checks()
	m.rows()
	m.warn()
	return m.out, nil
}

// mergeable refuses an input that cannot be merged exactly.
func mergeable(in MergeInput) error {
	r := in.Result
	switch {
	case r.Version != ResultVersion:
		return fmt.Errorf("%w: %s: schema version %d, merge needs version %d (re-run that instance with this load_tester)",
			ErrMergeInput, in.Path, r.Version, ResultVersion)
	case r.hist == nil && r.Answered+r.Unfinished+r.Dropped > 0:
		return fmt.Errorf("%w: %s: no histogram for %d recorded latencies", ErrMergeInput, in.Path, r.Answered+r.Unfinished+r.Dropped)
	case r.hist != nil && r.hist.TotalCount() != r.Answered+r.Unfinished+r.Dropped-r.RecordErrors:
		return fmt.Errorf("%w: %s: histogram holds %d values, the counts say %d", ErrMergeInput, in.Path,
			r.hist.TotalCount(), r.Answered+r.Unfinished+r.Dropped-r.RecordErrors)
	}
	if _, err := time.Parse(time.RFC3339Nano, r.WindowStart); err != nil {
		return fmt.Errorf("%w: %s: window_start %q: %v", ErrMergeInput, in.Path, r.WindowStart, err)
	}
	for _, k := range r.Kinds {
		if k.Answered+k.Unfinished+k.Dropped > 0 && k.hist == nil {
			return fmt.Errorf("%w: %s: kind %s has no histogram for %d recorded latencies", ErrMergeInput, in.Path, k.Name, k.Answered+k.Unfinished+k.Dropped)
		}
	}
	for _, s := range r.Stages {
		if s.Answered+s.Unfinished+s.Dropped > 0 && s.hist == nil {
			return fmt.Errorf("%w: %s: stage %d has no histogram for %d recorded latencies", ErrMergeInput, in.Path, s.Stage, s.Answered+s.Unfinished+s.Dropped)
		}
	}
	for i, iv := range r.Intervals {
		if iv.Requests+iv.Unfinished+iv.Dropped > 0 && (i >= len(r.ivHists) || r.ivHists[i] == nil) {
			return fmt.Errorf("%w: %s: interval %d has no histogram", ErrMergeInput, in.Path, i+1)
		}
	}
	return nil
}

type mergeState struct {
	inputs   []MergeInput
	out      *Result
	starts   []time.Time
	earliest time.Time
	interval time.Duration // the stats interval of the merged intervals
}

// window finds the merged window: from the earliest start to the latest end.
func (m *mergeState) window() {
	var latestEnd time.Time
	for i, in := range m.inputs {
		start, _ := time.Parse(time.RFC3339Nano, in.Result.WindowStart)
		m.starts = append(m.starts, start)
		end := start.Add(seconds(in.Result.DurationS))
		if i == 0 || start.Before(m.earliest) {
			m.earliest = start
		}
		if end.After(latestEnd) {
			latestEnd = end
		}
	}
	m.out.WindowStart = m.earliest.UTC().Format(time.RFC3339Nano)
	m.out.DurationS = latestEnd.Sub(m.earliest).Seconds()
	m.interval = statsInterval(m.inputs[0].Result)
}

// statsInterval is a result's stats interval: from its config, else from
// its first full interval.
func statsInterval(r *Result) time.Duration {
	if cfg, ok := r.Config.(map[string]any); ok {
		if s, ok := cfg["stats_interval_s"].(float64); ok && s > 0 {
			return seconds(s)
		}
	}
	if len(r.Intervals) > 0 && r.Intervals[0].LengthS > 0 {
		return seconds(r.Intervals[0].LengthS)
	}
	return time.Second
}

func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// sums adds every count.
func (m *mergeState) sums() {
	o := m.out
	var targets []string
	var warm Accounting
	hasWarm := false
	for _, in := range m.inputs {
		r := in.Result
		if !contains(targets, r.Target) {
			targets = append(targets, r.Target)
		}
		o.Requests += r.Requests
		o.Successes += r.Successes
		o.Errors += r.Errors
		o.Due += r.Due
		o.Answered += r.Answered
		o.Failed += r.Failed
		o.Unfinished += r.Unfinished
		o.Dropped += r.Dropped
		o.LowerBounds += r.LowerBounds
		o.ConnectionsOpened += r.ConnectionsOpened
		o.ReconnectBackoffs += r.ReconnectBackoffs
		o.ReconnectBackoffS += r.ReconnectBackoffS
		o.ReconnectBackoffMaxS = max(o.ReconnectBackoffMaxS, r.ReconnectBackoffMaxS)
		o.BytesIn += r.BytesIn
		o.BytesOut += r.BytesOut
		o.RateAsked += r.RateAsked
		o.WaitedForConn += r.WaitedForConn
		o.LateSends += r.LateSends
		o.RecordErrors += r.RecordErrors
		o.ClientCPUS += r.ClientCPUS
		o.ClientCPUCores += r.ClientCPUCores
		o.ClientCPUFraction = max(o.ClientCPUFraction, r.ClientCPUFraction)
		o.BusiestThreadCPU = max(o.BusiestThreadCPU, r.BusiestThreadCPU)
		o.Interrupted = o.Interrupted || r.Interrupted
		if r.Protocol != m.inputs[0].Result.Protocol {
			o.Protocol = "mixed"
		} else if o.Protocol != "mixed" {
			o.Protocol = r.Protocol
		}
		o.ResponseStamps = o.ResponseStamps && r.ResponseStamps // every instance timed responses alike
		for k, n := range r.ErrorsByKind {
			o.ErrorsByKind[k] += n
		}
		for k, n := range r.StatusCodes {
			o.StatusCodes[k] += n
		}
		if w := r.Warmup; w != nil {
			hasWarm = true
			warm.Due += w.Due
			warm.Answered += w.Answered
			warm.Failed += w.Failed
			warm.Unfinished += w.Unfinished
			warm.Dropped += w.Dropped
		}
		if o.ClockSource == "" {
			o.ClockSource = r.ClockSource
		} else if o.ClockSource != r.ClockSource {
			o.ClockSource = "mixed"
		}
	}
	o.Target = strings.Join(targets, ", ")
	if hasWarm {
		o.Warmup = &warm
	}
	if o.DurationS > 0 {
		o.RequestsPerSec = float64(o.Requests) / o.DurationS
	}
	if o.Requests > 0 {
		o.ClientCPUNsPerReq = o.ClientCPUS * 1e9 / float64(o.Requests)
	}
	// The instances' flags (each instance's own: concurrency 10 is per
	// instance), with how many instances the merge covers.
	o.Config = m.inputs[0].Result.Config
	if cfg, ok := o.Config.(map[string]any); ok {
		merged := make(map[string]any, len(cfg)+1)
		for k, v := range cfg {
			merged[k] = v
		}
		merged["instances"] = len(m.inputs)
		o.Config = merged
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// histograms adds the latency and service histograms.
func (m *mergeState) histograms() error {
	o := m.out
	svc, svcAll := newHistogram(), true
	var failed *hdrhistogram.Histogram
	for _, in := range m.inputs {
		r := in.Result
		if r.hist != nil {
			o.hist.Merge(r.hist)
		}
		failed = addFailed(failed, r.failedHist)
		if r.svcHist == nil {
			svcAll = false
		} else {
			svc.Merge(r.svcHist)
		}
	}
	o.Latency = latencyOf(o.hist)
	o.SetFailedHistogram(failed)
	enc, err := o.hist.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return fmt.Errorf("encode the merged histogram: %w", err)
	}
	o.Histogram = string(enc)
	if svcAll {
		l := latencyOf(svc)
		o.ServiceLatency = &l
		if enc, err := svc.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
			o.ServiceHistogram = string(enc)
		}
	}
	m.tls()
	return nil
}

// tls adds the instances' TLS handshakes (the protocol named is the first
// TLS instance's; "mixed" when they differ).
func (m *mergeState) tls() {
	var out *TLSInfo
	for _, in := range m.inputs {
		t := in.Result.TLS
		if t == nil {
			continue
		}
		if out == nil {
			out = &TLSInfo{Version: t.Version, Cipher: t.Cipher, ALPN: t.ALPN, hist: newHistogram()}
		} else if out.Version != t.Version || out.Cipher != t.Cipher {
			out.Version, out.Cipher = "mixed", "mixed"
		}
		out.Handshakes += t.Handshakes
		out.Resumed += t.Resumed
		if t.hist != nil {
			out.hist.Merge(t.hist)
		}
	}
	if out == nil {
		return
	}
	out.Handshake = latencyOf(out.hist)
	if enc, err := out.hist.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
		out.Histogram = string(enc)
	}
	m.out.TLS = out
}

// intervals sums each wall-clock interval over the instances.
func (m *mergeState) intervals() {
	type slot struct {
		iv   Interval
		hist *hdrhistogram.Histogram
		open map[int]int // instance -> its open connections at the slot's last interval
	}
	slots := map[int]*slot{}
	last := -1
	for i, in := range m.inputs {
		r := in.Result
		for j, iv := range r.Intervals {
			k := m.slotOf(i, iv)
			s := slots[k]
			if s == nil {
				s = &slot{hist: newHistogram(), open: map[int]int{}}
				slots[k] = s
			}
			s.iv.LengthS = max(s.iv.LengthS, iv.LengthS)
			s.iv.Requests += iv.Requests
			s.iv.Errors += iv.Errors
			for kind, n := range iv.ErrorsByKind {
				if s.iv.ErrorsByKind == nil {
					s.iv.ErrorsByKind = map[string]int64{}
				}
				s.iv.ErrorsByKind[kind] += n
			}
			// Open connections are a gauge: an instance's latest value in
			// the slot counts, once, however many of its intervals fell there.
			s.open[i] = iv.OpenConnections
			s.iv.Unfinished += iv.Unfinished
			s.iv.Dropped += iv.Dropped
			if j < len(r.ivHists) && r.ivHists[j] != nil {
				s.hist.Merge(r.ivHists[j])
			}
			last = max(last, k)
		}
	}
	m.out.Intervals = []Interval{}
	for k := 0; k <= last; k++ {
		s := slots[k]
		if s == nil { // no instance measured these seconds
			s = &slot{iv: Interval{LengthS: m.interval.Seconds()}, hist: newHistogram()}
		}
		iv := s.iv
		for _, open := range s.open {
			iv.OpenConnections += open
		}
		// The slot's end on the merged grid, or earlier for a slot only
		// partial intervals reached.
		iv.TS = min((time.Duration(k+1) * m.interval).Seconds(), (time.Duration(k)*m.interval).Seconds()+iv.LengthS)
		if iv.LengthS > 0 {
			iv.RequestsPerSec = float64(iv.Requests) / iv.LengthS
		}
		if s.hist.TotalCount() > 0 {
			iv.P50NS, iv.P99NS = s.hist.ValueAtQuantile(50), s.hist.ValueAtQuantile(99)
			if enc, err := s.hist.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
				iv.Histogram = string(enc)
			}
		}
		m.out.Intervals = append(m.out.Intervals, iv)
	}
}

// slotOf is the merged interval an instance's interval belongs to: the one
// holding its midpoint. The midpoint, not the end, so that a whole interval
// whose end was collected a little late stays in its own seconds and a
// partial one (the few milliseconds of an interrupted run past its last whole
// interval) goes to the seconds it covers, not into the interval before.
func (m *mergeState) slotOf(instance int, iv Interval) int {
	mid := m.starts[instance].Add(seconds(iv.TS - iv.LengthS/2))
	return max(int(math.Floor(float64(mid.Sub(m.earliest))/float64(m.interval))), 0)
}

// kinds adds each request kind over the instances that sent it, matched
// by name (in the order the inputs first name them): counts summed,
// histograms added, shares recomputed from the summed weights.
func (m *mergeState) kinds() {
	var out []KindResult
	at := map[string]int{}
	for _, in := range m.inputs {
		for _, k := range in.Result.Kinds {
			i, ok := at[k.Name]
			if !ok {
				i = len(out)
				at[k.Name] = i
				out = append(out, KindResult{Name: k.Name, Method: k.Method, Path: k.Path, Weight: k.Weight,
					StatusCodes: map[string]int64{}, hist: newHistogram()})
				if k.svcHist != nil {
					out[i].svcHist = newHistogram()
				}
			} else if out[i].Weight != k.Weight || out[i].Path != k.Path || out[i].Method != k.Method {
				m.out.Warnings = append(m.out.Warnings, fmt.Sprintf(
					"kind %s differs between instances (weight %d vs %d, %s %s vs %s %s): its counts are added all the same",
					k.Name, out[i].Weight, k.Weight, out[i].Method, out[i].Path, k.Method, k.Path))
			}
			o := &out[i]
			o.Due += k.Due
			o.Answered += k.Answered
			o.Successes += k.Successes
			o.Failed += k.Failed
			o.Unfinished += k.Unfinished
			o.Dropped += k.Dropped
			for code, n := range k.StatusCodes {
				o.StatusCodes[code] += n
			}
			if k.hist != nil {
				o.hist.Merge(k.hist)
			}
			if o.svcHist != nil && k.svcHist != nil {
				o.svcHist.Merge(k.svcHist)
			}
			o.failedHist = addFailed(o.failedHist, k.failedHist)
		}
	}
	total := 0
	for _, k := range out {
		total += k.Weight
	}
	for i := range out {
		o := &out[i]
		o.Share = float64(o.Weight) / float64(total)
		if m.out.DurationS > 0 {
			o.RequestsPerSec = float64(o.Answered) / m.out.DurationS
		}
		o.Latency = latencyOf(o.hist)
		o.SetFailedHistogram(o.failedHist)
		if enc, err := o.hist.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
			o.Histogram = string(enc)
		}
		if o.svcHist != nil {
			l := latencyOf(o.svcHist)
			o.ServiceLatency = &l
			if enc, err := o.svcHist.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
				o.ServiceHistogram = string(enc)
			}
		}
	}
	m.out.Kinds = out
}

// checks adds up each --check's outcomes over the inputs, by expression,
// in the order they first appear.
func (m *mergeState) checks() {
	at := map[string]int{}
	for _, in := range m.inputs {
		for _, c := range in.Result.Checks {
			i, ok := at[c.Expr]
			if !ok {
				i = len(m.out.Checks)
				at[c.Expr] = i
				m.out.Checks = append(m.out.Checks, CheckResult{Expr: c.Expr})
			}
			m.out.Checks[i].Passed += c.Passed
			m.out.Checks[i].Failed += c.Failed
		}
	}
}
