// The histograms the request path records into, without client_golang's
// per-observation work (a bucket search over floats, a compare-and-swap
// loop on a float sum): values are int64 (nanoseconds, items), each bucket
// is found by a fixed four-step search over integer thresholds chosen so a
// value lands in the bucket client_golang would put it in, and a sum is an
// integer. What a scrape shows is client_golang's histogram, name for name
// and bucket for bucket (TestScrapeOfKnownSequence).
//
// Sharing: every counter is an atomic, added to by any goroutine (the
// loops, the stages, the release threads' RequestTally.Flush) and read by
// the scrape. A scrape may see a flush half done (a bucket counted, the sum
// not yet): as with client_golang before it kept hot and cold copies, the
// next scrape sees it whole.

package metrics

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// maxBounds is the most upper bounds a histogram here may have: the
// search below looks at 15 thresholds (thr[0..14]), so it tells 16
// buckets apart, +Inf included.
const maxBounds = 15

// bounds are a histogram's upper bounds and, for each, the largest int64
// value whose exported float is at most the bound.
type bounds struct {
	upper []float64
	thr   [maxBounds]int64 // past len(upper): MaxInt64, so the search ends at the +Inf bucket
}

// newBounds finds each bound's threshold by asking toFloat, the
// conversion the exported value went through (Duration.Seconds, float64):
// a value v goes in the first bucket i with toFloat(v) <= upper[i], the
// rule of client_golang's findBucket, and toFloat is monotonic.
func newBounds(upper []float64, toFloat func(int64) float64, scale float64) *bounds {
	if len(upper) > maxBounds {
		panic("metrics: too many histogram buckets")
	}
	b := &bounds{upper: upper}
	for i := range b.thr {
		b.thr[i] = math.MaxInt64
	}
	for i, u := range upper {
		t := int64(math.Floor(u * scale))
		for toFloat(t+1) <= u {
			t++
		}
		for toFloat(t) > u {
			t--
		}
		b.thr[i] = t
	}
	return b
}

// index is the bucket of v (len(upper) for +Inf): the number of
// thresholds below v, in four steps whatever v is.
func (b *bounds) index(v int64) int {
	i := 0
	if v > b.thr[7] {
		i = 8
	}
	if v > b.thr[i+3] {
		i += 4
	}
	if v > b.thr[i+1] {
		i += 2
	}
	if v > b.thr[i] {
		i++
	}
	return i
}

// counts are one histogram's (one label child's) buckets and sum.
type counts struct {
	buckets [maxBounds + 1]atomic.Uint64 // [len(upper)] is +Inf
	sum     atomic.Int64
}

func (c *counts) observe(b *bounds, v int64) {
	c.buckets[b.index(v)].Add(1)
	c.sum.Add(v)
}

// histogramVec is a histogram family with one label (or none: labels
// nil, one child), its children fixed at construction.
type histogramVec struct {
	desc     *prometheus.Desc
	b        *bounds
	labels   []string
	children []counts
	sumFloat func(int64) float64 // the exported sum
}

func newHistogramVec(name, help, label string, labels []string, b *bounds, sumFloat func(int64) float64) *histogramVec {
	var variable []string
	n := 1
	if label != "" {
		variable, n = []string{label}, len(labels)
	}
	return &histogramVec{
		desc:     prometheus.NewDesc(name, help, variable, nil),
		b:        b,
		labels:   labels,
		children: make([]counts, n),
		sumFloat: sumFloat,
	}
}

func (h *histogramVec) observe(child int, v int64) { h.children[child].observe(h.b, v) }

func (h *histogramVec) Describe(ch chan<- *prometheus.Desc) { ch <- h.desc }

func (h *histogramVec) Collect(ch chan<- prometheus.Metric) {
	for i := range h.children {
		c := &h.children[i]
		cumulative := make(map[float64]uint64, len(h.b.upper))
		var total uint64
		for j, u := range h.b.upper {
			total += c.buckets[j].Load()
			cumulative[u] = total
		}
		total += c.buckets[len(h.b.upper)].Load()
		var lv []string
		if h.labels != nil {
			lv = []string{h.labels[i]}
		}
		ch <- prometheus.MustNewConstHistogram(h.desc, total, h.sumFloat(c.sum.Load()), cumulative, lv...)
	}
}

// sumCounter exports each child's sum of a histogramVec as a counter (a
// stage's busy seconds are its batch seconds' sum).
type sumCounter struct {
	desc *prometheus.Desc
	h    *histogramVec
}

func (s *sumCounter) Describe(ch chan<- *prometheus.Desc) { ch <- s.desc }

func (s *sumCounter) Collect(ch chan<- prometheus.Metric) {
	for i := range s.h.children {
		ch <- prometheus.MustNewConstMetric(s.desc, prometheus.CounterValue, s.h.sumFloat(s.h.children[i].sum.Load()), s.h.labels[i])
	}
}

func durationSeconds(v int64) float64 { return time.Duration(v).Seconds() }

func nanosToSeconds(v int64) float64 { return float64(v) / 1e9 }

func itemsFloat(v int64) float64 { return float64(v) }
