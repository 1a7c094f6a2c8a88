package gate

import (
	"sync"
	"time"
)

// cpuTrace samples a server's CPU time while a load runs, so that the CPU
// of load_tester's measured window alone can be read afterwards (its
// result says when the window opened and how long it lasted); the CPU of
// the warm-up and the connects stays out. Ownership: the sampling
// goroutine appends to points under mu until stop returns; after that the
// caller reads points alone.
type cpuTrace struct {
	mu     sync.Mutex
	points []cpuPoint
	done   chan struct{}
	wg     sync.WaitGroup
}

type cpuPoint struct {
	at  time.Time
	cpu time.Duration
}

// cpuTraceEvery is how often the trace samples: fine enough that a
// window of a few hundred milliseconds is read to a fraction of a percent.
const cpuTraceEvery = 5 * time.Millisecond

// startCPUTrace samples read every cpuTraceEvery (now gives the time) until
// stop. A read that fails is skipped.
func startCPUTrace(read func() (time.Duration, error), now func() time.Time) *cpuTrace {
	t := &cpuTrace{done: make(chan struct{})}
	sample := func() {
		if v, err := read(); err == nil {
			t.mu.Lock()
			t.points = append(t.points, cpuPoint{now(), v})
			t.mu.Unlock()
		}
	}
	sample()
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		tick := time.NewTicker(cpuTraceEvery)
		defer tick.Stop()
		for {
			select {
			case <-t.done:
				sample()
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	return t
}

// stop ends the sampling (after one last sample).
func (t *cpuTrace) stop() {
	close(t.done)
	t.wg.Wait()
}

// between is the CPU used from a to b, interpolated between the samples
// around each end; false when the trace does not cover [a, b].
func (t *cpuTrace) between(a, b time.Time) (time.Duration, bool) {
	ca, okA := t.at(a)
	cb, okB := t.at(b)
	if !okA || !okB || b.Before(a) {
		return 0, false
	}
	return max(cb-ca, 0), true
}

// at is the CPU time at instant x, linear between the samples around it.
func (t *cpuTrace) at(x time.Time) (time.Duration, bool) {
	p := t.points
	for i := 1; i < len(p); i++ {
		if x.After(p[i].at) {
			continue
		}
		if x.Before(p[i-1].at) {
			return 0, false
		}
		span := p[i].at.Sub(p[i-1].at)
		if span <= 0 {
			return p[i].cpu, true
		}
		f := float64(x.Sub(p[i-1].at)) / float64(span)
		return p[i-1].cpu + time.Duration(f*float64(p[i].cpu-p[i-1].cpu)), true
	}
	return 0, false
}
