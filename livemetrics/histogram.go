package livemetrics

import (
	"fmt"
	"math"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// classicBounds are the latency histogram's classic buckets, in seconds:
// 100 µs to 10 s, 1-2.5-5 per decade.
var classicBounds = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
	0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// nativeSchema 3 gives buckets 2^(1/8) apart (about 9%), finer than the
// classic ones and well within a scrape's size.
const nativeSchema = 3

// latencyHistogram is the measured window's latencies so far, in both
// Prometheus shapes. Each value is taken at the top of its HDR bucket
// (the run's own histogram's precision).
type latencyHistogram struct {
	count   uint64
	sum     float64 // seconds
	classic []uint64
	native  map[int]int64 // bucket index (schema 3) -> count
	zero    uint64
	created time.Time
}

// add merges one interval's histogram (ns).
func (l *latencyHistogram) add(h *hdrhistogram.Histogram) {
	if h.TotalCount() == 0 {
		return
	}
	if l.classic == nil {
		l.classic, l.native, l.created = make([]uint64, len(classicBounds)), map[int]int64{}, time.Now()
	}
	for _, bar := range h.Distribution() {
		if bar.Count > 0 {
			l.record(float64(bar.To)/1e9, bar.Count)
		}
	}
}

func (l *latencyHistogram) record(v float64, n int64) {
	l.count += uint64(n)
	l.sum += v * float64(n)
	if i := sort.SearchFloat64s(classicBounds, v); i < len(classicBounds) {
		l.classic[i] += uint64(n)
	}
	if v <= 0 {
		l.zero += uint64(n)
		return
	}
	l.native[nativeIndex(v)] += n
}

// nativeIndex is v's bucket in a native histogram of nativeSchema: the i
// with 2^((i-1)/8) < v <= 2^(i/8).
func nativeIndex(v float64) int {
	return int(math.Ceil(math.Log2(v) * (1 << nativeSchema)))
}

// latencyMetric is one scrape's view of a latencyHistogram: a metric with
// both the classic buckets and the native ones (client_golang's constant
// histograms carry one shape or the other, not both, so the classic one
// is built by the library, labels included, and the native buckets are
// added to what it writes).
type latencyMetric struct {
	desc *prometheus.Desc
	h    latencyHistogram // a copy, taken under the exporter's lock
}

func (m latencyMetric) Desc() *prometheus.Desc { return m.desc }

func (m latencyMetric) Write(out *dto.Metric) error {
	classic, err := m.classic()
	if err != nil {
		return fmt.Errorf("latency histogram: %w", err)
	}
	if err := classic.Write(out); err != nil {
		return fmt.Errorf("latency histogram: %w", err)
	}
	h, d := &m.h, out.Histogram
	d.Schema, d.ZeroThreshold, d.ZeroCount = proto(int32(nativeSchema)), proto(0.0), proto(h.zero)
	d.PositiveSpan, d.PositiveDelta = spans(h.native)
	if len(d.PositiveSpan) == 0 { // an empty native histogram still says it is one
		d.PositiveSpan = []*dto.BucketSpan{{Offset: proto(int32(0)), Length: proto(uint32(0))}}
	}
	return nil
}

// classic is the histogram's classic buckets as a constant metric of the
// library, with the descriptor's labels.
func (m latencyMetric) classic() (prometheus.Metric, error) {
	h := &m.h
	cumulative := make(map[float64]uint64, len(classicBounds))
	var cum uint64
	for i, b := range classicBounds {
		if h.classic != nil {
			cum += h.classic[i]
		}
		cumulative[b] = cum
	}
	if h.created.IsZero() {
		return prometheus.NewConstHistogram(m.desc, h.count, h.sum, cumulative)
	}
	return prometheus.NewConstHistogramWithCreatedTimestamp(m.desc, h.count, h.sum, cumulative, h.created)
}

// spans encodes sparse buckets as a native histogram's spans (runs of
// consecutive indexes; each offset the gap from the last run's end) and
// deltas (each count less the one before it).
func spans(buckets map[int]int64) ([]*dto.BucketSpan, []int64) {
	idx := make([]int, 0, len(buckets))
	for i, n := range buckets {
		if n > 0 {
			idx = append(idx, i)
		}
	}
	sort.Ints(idx)
	var out []*dto.BucketSpan
	var deltas []int64
	var prevCount int64
	for k, i := range idx {
		if k == 0 || i != idx[k-1]+1 {
			gap := i
			if k > 0 {
				gap = i - idx[k-1] - 1
			}
			out = append(out, &dto.BucketSpan{Offset: proto(int32(gap)), Length: proto(uint32(0))})
		}
		*out[len(out)-1].Length++
		deltas = append(deltas, buckets[i]-prevCount)
		prevCount = buckets[i]
	}
	return out, deltas
}

// copy is a deep copy, so a scrape reads it outside the lock.
func (l *latencyHistogram) copy() latencyHistogram {
	c := *l
	c.classic = append([]uint64(nil), l.classic...)
	c.native = make(map[int]int64, len(l.native))
	for k, v := range l.native {
		c.native[k] = v
	}
	return c
}

func proto[T any](v T) *T { return &v }
