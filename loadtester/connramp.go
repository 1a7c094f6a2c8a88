package loadtester

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"weaseldb/loadtester/arrival"
)

// Ramping connections in the closed loop (--concurrency-stages, k6's
// ramping VUs): the number of connections moves linearly from each
// stage's target to the next's, the first from 0. Connection slots
// [0, wanted) are wanted at any moment, wanted = Concurrency - unwanted
// (so that the zero value, without a ramp, wants every slot); Concurrency
// is the stages' peak.
//
// Ramping up, the ramp's goroutine asks the connect threads for each slot
// that became wanted, as at the start of any run. Ramping down, a
// connection whose slot is no longer wanted sends nothing more and is
// closed once its last request in flight is answered (topUp): no request
// is cut off, so every one sent is accounted for as in any closed loop.
// A slot that is not wanted when its connection closes is parked instead
// of reconnected, until the ramp wants it again.
//
// Who owns what: unwanted is atomic, written by the ramp's goroutine and
// read by the network threads. A slot is in exactly one place: the connect queue, a back-off
// timer, a connect thread, a network thread, or parked; parked is guarded
// by mu, under which a thread parks a slot only after reading wanted
// again, and the ramp unparks every parked slot below wanted after
// raising it, so no wanted slot stays parked.
type connRamp struct {
	stages []arrival.Stage
	mu     sync.Mutex
	parked []bool // guarded by mu
}

// rampTick is how often the ramp moves the number of connections.
const rampTick = 5 * time.Millisecond

// checkConcurrencyStages checks --concurrency-stages: each error names it.
func (c *Config) checkConcurrencyStages() []error {
	if c.ConcurrencyStages == "" {
		return nil
	}
	stages, err := arrival.ParseStages(c.ConcurrencyStages)
	if err != nil {
		return []error{fmt.Errorf("--concurrency-stages: %w", err)}
	}
	var errs []error
	peak := 0.0
	for i, st := range stages {
		if st.Target != math.Trunc(st.Target) || st.Target > 1_000_000 {
			errs = append(errs, fmt.Errorf("--concurrency-stages %q: stage %d: target %g: want a whole number of connections, 0..1000000", c.ConcurrencyStages, i+1, st.Target))
		}
		peak = max(peak, st.Target)
	}
	switch {
	case c.OpenLoop():
		errs = append(errs, fmt.Errorf("--concurrency-stages ramps the closed loop's connections; --rate and --stages pace an open loop: give one"))
	case peak < 1:
		errs = append(errs, fmt.Errorf("--concurrency-stages %q: every target is 0: no connection would ever open", c.ConcurrencyStages))
	case c.Concurrency != int(peak):
		errs = append(errs, fmt.Errorf("--concurrency %d with --concurrency-stages: the stages' peak (%d) is the concurrency", c.Concurrency, int(peak)))
	}
	if total := StagesLength(stages); c.Warmup+c.Duration != total {
		errs = append(errs, fmt.Errorf("--concurrency-stages %q last %v in all: --warmup (%v) and the measured time (%v) must add up to it", c.ConcurrencyStages, total, c.Warmup, c.Duration))
	}
	return errs
}

// newConnRamp is a checked config's ramp (nil without one).
func newConnRamp(cfg *Config) *connRamp {
	if cfg.ConcurrencyStages == "" {
		return nil
	}
	stages, _ := arrival.ParseStages(cfg.ConcurrencyStages)
	return &connRamp{stages: stages, parked: make([]bool, cfg.Concurrency)}
}

// at is how many connections the ramp wants d after the load started.
func (p *connRamp) at(d time.Duration) int {
	from := 0.0
	for _, st := range p.stages {
		if d < st.Duration {
			f := float64(d) / float64(st.Duration)
			return int(math.Round(from + f*(st.Target-from)))
		}
		d -= st.Duration
		from = st.Target
	}
	return int(from)
}

// startConnections asks for the connections wanted at the start: every
// slot without a ramp; with one, the slots the ramp wants now, the rest
// parked until it wants them.
func (r *runner) startConnections() {
	n := r.cfg.Concurrency
	if r.ramp != nil {
		n = r.ramp.at(0)
		for slot := n; slot < r.cfg.Concurrency; slot++ {
			r.ramp.parked[slot] = true
		}
	}
	r.setWantedCount(n)
	for slot := range n {
		r.requestConn(slot, 0)
	}
}

// wanted is how many slots are wanted now.
func (r *runner) wanted() int64 { return int64(r.cfg.Concurrency) - r.unwanted.Load() }

func (r *runner) setWantedCount(n int) { r.unwanted.Store(int64(r.cfg.Concurrency - n)) }

// runRamp moves the number of connections wanted until ctx ends (the
// measured window closed, or the run ended). The last target holds after
// the stages end, through the drain.
func (r *runner) runRamp(ctx context.Context) {
	ticker := time.NewTicker(rampTick)
	defer ticker.Stop()
	start := r.base.Add(time.Duration(r.startNs))
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-ticker.C:
			r.setWanted(r.ramp.at(now.Sub(start)))
		}
	}
}

// setWanted sets the slots wanted to n and asks for every parked slot
// below it.
func (r *runner) setWanted(n int) {
	if int64(n) == r.wanted() {
		return
	}
	r.setWantedCount(n)
	p := r.ramp
	p.mu.Lock()
	defer p.mu.Unlock()
	for slot := range min(n, len(p.parked)) {
		if p.parked[slot] {
			p.parked[slot] = false
			r.requestConn(slot, 0)
		}
	}
}

// reconnect asks for a closed connection's replacement, after failures'
// back-off, or parks its slot when the ramp no longer wants it.
func (r *runner) reconnect(slot, failures int) {
	if int64(slot) < r.wanted() {
		r.requestConn(slot, failures)
		return
	}
	p := r.ramp
	p.mu.Lock()
	defer p.mu.Unlock()
	if int64(slot) < r.wanted() { // the ramp rose since: it may have looked before we park
		r.requestConn(slot, failures)
		return
	}
	p.parked[slot] = true
}
