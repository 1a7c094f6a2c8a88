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
type RequestTally struct {
	m      *Metrics
	routes uint16 // bit r: route r has counts to flush
	count  [numRoutes][numStatusSlots]uint32
	lat    [numRoutes]latencyTally
}

type latencyTally struct {
	buckets [maxBounds + 1]uint32
	sum     int64
}

// NewRequestTally returns an empty tally for one goroutine.
func (m *Metrics) NewRequestTally() *RequestTally { return &RequestTally{m: m} }

// Add counts one answered request.
func (t *RequestTally) Add(r Route, status int, latency time.Duration) {
	t.routes |= 1 << r
	t.count[r][statusIndex(status)]++
	l := &t.lat[r]
	l.buckets[latencyBounds.index(int64(latency))]++
	l.sum += int64(latency)
}

// Flush adds what was counted since the last Flush to the metrics, and
// empties the tally.
func (t *RequestTally) Flush() {
	for routes := t.routes; routes != 0; routes &= routes - 1 {
		r := bits.TrailingZeros16(routes)
		for s, n := range t.count[r] {
			if n != 0 {
				t.m.requests[r][s].Add(float64(n))
				t.count[r][s] = 0
			}
		}
		l, c := &t.lat[r], &t.m.latency.children[r]
		for b, n := range l.buckets {
			if n != 0 {
				c.buckets[b].Add(uint64(n))
				l.buckets[b] = 0
			}
		}
		c.sum.Add(l.sum)
		l.sum = 0
	}
	t.routes = 0
}
