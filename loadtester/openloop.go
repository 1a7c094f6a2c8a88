package loadtester

import (
	"golang.org/x/sys/unix"
)

// Open loop (--rate), hand-written like the rest of the loop. Each thread
// owns an even share of the rate: its k-th request is due at
// schedStart + k*interval, whatever happened before. A request that finds no
// free connection waits, and its latency still counts from its due time, so
// a stalled server shows up as latency (no coordinated omission).

// dueAt is the intended send time of this thread's k-th request.
func (t *netThread) dueAt(k uint64) int64 {
	return t.schedStart + int64(float64(k)*t.interval)
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
		t.freeConns = append(t.freeConns, c)
	}
}

// pickFree returns a connection with room, dropping stale list entries.
func (t *netThread) pickFree() *conn {
	for n := len(t.freeConns); n > 0; n = len(t.freeConns) {
		c := t.freeConns[n-1]
		if t.hasRoom(c) {
			return c
		}
		c.inFreeList = false
		t.freeConns[n-1] = nil
		t.freeConns = t.freeConns[:n-1]
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
	for !t.stopping.Load() {
		due := t.dueAt(t.k)
		if due >= t.closeAt {
			if now < t.closeAt {
				t.armTimer(t.closeAt, now)
			}
			break
		}
		if due > now {
			t.armTimer(due, now)
			break
		}
		c := t.pickFree()
		if c == nil {
			t.lastNoConn = now
			if now < t.closeAt {
				t.armTimer(t.closeAt, now)
			}
			break
		}
		st := &t.stats
		if due < t.mStart {
			st = &t.warmStats
		}
		if due <= t.lastNoConn {
			st.waitedForConn++
		} else if now-due > lateSendThreshold {
			st.lateSends++
		}
		t.enqueue(c, due, now)
		t.k++
	}
	for i, c := range t.dirtyConns {
		c.dirty = false
		if c.state == connActive {
			t.flush(c)
		}
		t.dirtyConns[i] = nil
	}
	t.dirtyConns = t.dirtyConns[:0]
}

// enqueue adds one request, intended at due, to c's output for this turn.
func (t *netThread) enqueue(c *conn, due, now int64) {
	before := len(c.pending)
	if t.rend == nil {
		c.pending = append(c.pending, t.r.tmpl.static...)
	} else {
		c.pending = t.rend.appendRequest(c.pending, t.r.tmpl)
	}
	t.stats.bytesOut += int64(len(c.pending) - before)
	i := (c.head + c.inflight) & c.mask
	c.sendTimes[i] = due
	c.sentAt[i] = now
	c.inflight++
	c.sent++
	if due >= t.mStart {
		t.stats.sent++
	} else {
		t.warmStats.sent++
	}
	if !c.dirty {
		c.dirty = true
		t.dirtyConns = append(t.dirtyConns, c)
	}
}

// armTimer makes the timerfd fire at due (relative: the loop's clock and
// CLOCK_MONOTONIC share no origin).
func (t *netThread) armTimer(due, now int64) {
	if t.armedFor == due {
		return
	}
	t.armedFor = due
	wait := max(due-now, 1000)
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(wait)}
	unix.TimerfdSettime(t.tfd, 0, &spec, nil)
}
