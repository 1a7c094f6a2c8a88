// RequestTally: a release thread's count of the requests it answered in
// one batch, added to the shared metrics once per batch. Owned by one
// goroutine (its release thread); Flush's adds are atomic, so tallies of
// several threads and Metrics.Request may add at once.

package metrics

import (
	"math/bits"
	"time"
)

// RequestTally counts a batch's answered requests, as Metrics.Request
// would, until Flush adds them to the Metrics it came from.
// Flush visits only what Add touched (the set bits of routes, and of each
// route's statuses and buckets): a batch of one /ok flushes one count and
// one bucket, not every slot of the route.
type RequestTally struct {
	m      *Metrics
	routes uint16 // bit r: route r has counts to flush
	count  [numRoutes][numStatusSlots]uint32
	lat    [numRoutes]latencyTally
}

type latencyTally struct {
	statuses uint32 // bit s: count[r][s] is not zero
	used     uint32 // bit b: buckets[b] is not zero
	buckets  [maxBounds + 1]uint32
	sum      int64
}

// The bit sets above hold every status slot and bucket.
var (
	_ [32 - numStatusSlots]struct{}
	_ [32 - (maxBounds + 1)]struct{}
)

// NewRequestTally returns an empty tally for one goroutine.
func (m *Metrics) NewRequestTally() *RequestTally { return &RequestTally{m: m} }

// Add counts one answered request.
func (t *RequestTally) Add(r Route, status int, latency time.Duration) {
	t.routes |= 1 << r
	si := statusIndex(status)
	t.count[r][si]++
	l := &t.lat[r]
	l.statuses |= 1 << si
	b := latencyBounds.index(int64(latency))
	l.buckets[b]++
	l.used |= 1 << b
	l.sum += int64(latency)
}

// Flush adds what was counted since the last Flush to the metrics, and
// empties the tally.
func (t *RequestTally) Flush() {
	for routes := t.routes; routes != 0; routes &= routes - 1 {
		r := bits.TrailingZeros16(routes)
		l, c := &t.lat[r], &t.m.latency.children[r]
		for set := l.statuses; set != 0; set &= set - 1 {
			s := bits.TrailingZeros32(set)
			t.m.requests[r][s].Add(float64(t.count[r][s]))
			t.count[r][s] = 0
		}
		for set := l.used; set != 0; set &= set - 1 {
			b := bits.TrailingZeros32(set)
			c.buckets[b].Add(uint64(l.buckets[b]))
			l.buckets[b] = 0
		}
		c.sum.Add(l.sum)
		l.statuses, l.used, l.sum = 0, 0, 0
	}
	t.routes = 0
}
