package loadtester

import (
	"golang.org/x/sys/unix"
)

// Open loop (--rate), hand-written like the rest of the loop. Each thread
// owns an even share of the rate: its k-th request is due at
// start + k*interval, whatever happened before. A request that finds no
// free connection waits, and its latency still counts from its due time, so
// a stalled server shows up as latency (no coordinated omission).

// pacer is one network thread's open-loop schedule and the connections it
// may send on (loop thread only). In the closed loop it is off (tfd -1).
type pacer struct {
	tfd        int     // timerfd that wakes the loop when the next request is due; -1: closed loop
	start      int64   // offset of this thread's schedule, then its start once scheduling
	scheduling bool    // the first connection is up: requests are being scheduled
	interval   float64 // ns between this thread's intended sends
	k          uint64  // index of the next intended send
	free       []*conn // connections that had room when last seen (stale entries dropped on pick)
	dirty      []*conn // connections with requests queued this turn, to flush
	lastNoConn int64   // when the schedule last found every connection busy
	armedFor   int64   // the due time the timer is set for (0: none)
}

// init sets thread id's share of rate over threads threads. Threads
// interleave: thread i starts i/rate after its first connection.
func (p *pacer) init(rate float64, threads, id int) {
	p.interval = float64(threads) * 1e9 / rate
	p.start = int64(float64(id) * 1e9 / rate)
}

// on reports whether this is the open loop.
func (p *pacer) on() bool { return p.tfd >= 0 }

// begin starts the schedule at now (its offset kept).
func (p *pacer) begin(now int64) {
	p.scheduling = true
	p.start += now
}

// dueAt is the intended send time of this thread's k-th request.
func (p *pacer) dueAt(k uint64) int64 {
	return p.start + int64(float64(k)*p.interval)
}

// firstDueAtOrAfter is the index of the schedule's first request due at or
// after ns.
func (p *pacer) firstDueAtOrAfter(ns int64) uint64 {
	if ns <= p.start {
		return 0
	}
	k := uint64(float64(ns-p.start) / p.interval)
	for k > 0 && p.dueAt(k-1) >= ns {
		k--
	}
	for p.dueAt(k) < ns {
		k++
	}
	return k
}

// arm makes the timerfd fire at due (relative: the loop's clock and
// CLOCK_MONOTONIC share no origin).
func (p *pacer) arm(due, now int64) {
	if p.armedFor == due {
		return
	}
	p.armedFor = due
	wait := max(due-now, 1000)
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(wait)}
	unix.TimerfdSettime(p.tfd, 0, &spec, nil)
}

// hasRoom reports whether c can take another request now.
func (t *netThread) hasRoom(c *conn) bool {
	if c.state != connActive || c.inflight >= t.r.cfg.Pipeline {
		return false
	}
	q := t.r.cfg.RequestsPerConn
	return q == 0 || c.sent < q
}

// offerFree puts c on the free list when it can take a request.
func (t *netThread) offerFree(c *conn) {
	if !c.inFreeList && t.hasRoom(c) {
		c.inFreeList = true
		t.pace.free = append(t.pace.free, c)
	}
}

// pickFree returns a connection with room, dropping stale list entries.
func (t *netThread) pickFree() *conn {
	p := &t.pace
	for n := len(p.free); n > 0; n = len(p.free) {
		c := p.free[n-1]
		if t.hasRoom(c) {
			return c
		}
		c.inFreeList = false
		p.free[n-1] = nil
		p.free = p.free[:n-1]
	}
	return nil
}

// schedule sends every request that is due, then arms the timer for the
// next one, or for the window's end (while requests wait for a connection,
// a response wakes the loop sooner). Only requests due before the window's
// end are ever sent. It goes on running during the drain, which sends the
// requests due in the window that still wait for a connection as
// connections free up; what is still waiting when the drain ends is dropped
// (window.go).
//
// A request sent after the scheduler last found every connection busy at or
// after its due time waited for a connection; one sent late while a
// connection was free shows the client falling behind.
func (t *netThread) schedule(now int64) {
	p := &t.pace
	closeAt := t.win.closeAt
	for !t.stopping.Load() {
		due := p.dueAt(p.k)
		if due >= closeAt {
			if now < closeAt {
				p.arm(closeAt, now)
			}
			break
		}
		if due > now {
			p.arm(due, now)
			break
		}
		c := t.pickFree()
		if c == nil {
			p.lastNoConn = now
			if now < closeAt {
				p.arm(closeAt, now)
			}
			break
		}
		st := t.phase(due)
		if due <= p.lastNoConn {
			st.waitedForConn++
		} else if now-due > lateSendThreshold {
			st.lateSends++
		}
		t.enqueue(c, due, now)
		p.k++
	}
	for i, c := range p.dirty {
		c.dirty = false
		if c.state == connActive {
			t.flush(c)
		}
		p.dirty[i] = nil
	}
	p.dirty = p.dirty[:0]
}

// enqueue adds one request, intended at due, to c's output for this turn.
func (t *netThread) enqueue(c *conn, due, now int64) {
	before := len(c.pending)
	if t.rend == nil {
		c.pending = append(c.pending, t.r.tmpl.static...)
	} else {
		c.pending = t.rend.appendRequest(c.pending, t.r.tmpl)
	}
	t.books.measured.bytesOut += int64(len(c.pending) - before)
	i := (c.head + c.inflight) & c.mask
	c.sendTimes[i] = due
	c.sentAt[i] = now
	c.inflight++
	c.sent++
	t.phase(due).sent++
	if !c.dirty {
		c.dirty = true
		t.pace.dirty = append(t.pace.dirty, c)
	}
}
