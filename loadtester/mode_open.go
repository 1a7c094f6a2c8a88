package loadtester

// The open loop, the load mode (mode.go) with --rate, --stages or
// --arrival: requests fall due on the pacer's schedule (openloop.go,
// which explains the pacing) whatever the server does, and go out on a
// connection with room; the loop sleeps until the next is due.
//
// Who owns what: loop thread only, like the rest of a netThread.

// openLoop is the open loop of its thread: its pacer and the sends.
type openLoop struct {
	t    *netThread
	pace pacer // the schedule (openloop.go); pace.on() is false in the closed loop
}

func (o *openLoop) paced() bool { return true }

// connUp starts the schedule with the first connection, so connect time
// is not charged as latency; but not once the window has closed: a
// schedule started then would have nothing due in the window, and the
// thread's share of it would vanish from every count instead of being
// dropped (countDropped).
func (o *openLoop) connUp(c *conn, now int64) {
	t := o.t
	if !t.pace.scheduling && !t.acct.win.closing && now < t.acct.win.closeAt {
		t.pace.begin(now)
	}
	o.offerFree(c)
}

func (o *openLoop) served(c *conn, _ int64) { o.offerFree(c) }

// turn sends what is due; closing too: requests due in the window may
// still wait for a connection.
func (o *openLoop) turn(now int64) {
	if o.pace.scheduling {
		o.schedule(now)
	}
}

// hasRoom reports whether c can take another request now.
func (o *openLoop) hasRoom(c *conn) bool {
	t := o.t
	if c.state != connActive || c.inflight >= t.r.cfg.Pipeline || c.noNew {
		return false
	}
	if c.proto.room() <= 0 {
		return false
	}
	q := t.r.cfg.RequestsPerConn
	return q == 0 || c.sent < q
}

// offerFree puts c on the free list when it can take a request.
func (o *openLoop) offerFree(c *conn) {
	t := o.t
	if !c.inFreeList && t.hasRoom(c) {
		c.inFreeList = true
		t.pace.free = append(t.pace.free, c)
	}
}

// pickFree returns a connection with room, dropping stale list entries.
func (o *openLoop) pickFree() *conn {
	t := o.t
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

// schedule sends every request that is due, in one pass, then sets when
// the loop wakes next: for the next request (put off by up to the slack,
// nextWake), or for the window's end while requests wait for a connection
// (a response wakes the loop sooner). Only requests due before the
// window's end are ever sent. It goes on running during the drain, which
// sends the requests due in the window that still wait for a connection as
// connections free up; what is still waiting when the drain ends is
// dropped (window.go).
//
// A request sent after the scheduler last found every connection busy at or
// after its due time waited for a connection; one sent late while a
// connection was free shows the client falling behind.
func (o *openLoop) schedule(now int64) {
	t := o.t
	p := &t.pace
	closeAt := t.acct.win.closeAt
	p.wakeAt = 0
	for !t.stopping.Load() {
		due := p.dueAt(p.k)
		if due >= closeAt {
			if now < closeAt {
				p.wakeAt = closeAt
			}
			break
		}
		if due > now {
			p.wakeAt = p.nextWake(due, closeAt)
			break
		}
		c := t.pickFree()
		if c == nil {
			p.lastNoConn = now
			if now < closeAt {
				p.wakeAt = closeAt
			}
			break
		}
		st := t.acct.phase(due)
		if due <= p.lastNoConn {
			st.waitedForConn++
		} else if now-due > lateSendThreshold {
			st.lateSends++
			if due >= t.acct.win.start {
				t.acct.books.lateHist.RecordValue(now - due)
			}
		}
		if !t.enqueue(c, p.k, due, now) {
			t.acct.rowsOut(due)
			closeAt = t.acct.win.closeAt
			continue // the window now closes at due: the loop's next turn sees it
		}
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

// enqueue adds the schedule's k-th request, intended at due, to c's
// output for this turn; false when the run's data file has no row left
// for it (nothing is queued).
func (o *openLoop) enqueue(c *conn, k uint64, due, now int64) bool {
	t := o.t
	before := len(c.pending)
	i := (c.head + c.inflight) & c.mask
	var ok bool
	if c.pending, ok = c.proto.appendScheduled(&t.requests, c, c.pending, k); !ok {
		return false
	}
	t.acct.books.measured.bytesOut += int64(len(c.pending) - before)
	c.sendTimes[i] = due
	c.sentAt[i] = now
	c.inflight++
	c.sent++
	t.acct.phase(due).sent++
	if !c.dirty {
		c.dirty = true
		t.pace.dirty = append(t.pace.dirty, c)
	}
	return true
}

// backlog reports whether requests of the open-loop schedule due before the
// window's end are still waiting for a connection: the drain owes them a
// send. A thread whose schedule never started (no connection before the
// window closed) has none to send; its share is dropped (countDropped).
func (o *openLoop) backlog() bool {
	t := o.t
	return t.pace.on() && t.pace.scheduling && t.pace.dueAt(t.pace.k) < t.acct.win.closeAt
}

// countDropped finds the open-loop requests due before the window's end
// that were never sent: the schedule's next index up to the first one due
// at or after the end.
func (o *openLoop) countDropped() {
	t := o.t
	p, w := &t.pace, &t.acct.win
	if !p.scheduling { // never had a connection: its whole share of the window went unsent
		p.begin(w.start)
	}
	warmEnd, end := p.firstDueAtOrAfter(w.start), p.firstDueAtOrAfter(w.closeAt)
	tl := &w.tail
	if end > warmEnd {
		tl.scheduled = int64(end - warmEnd)
	}
	if p.k < warmEnd {
		tl.warmDropped = int64(min(warmEnd, end) - p.k)
	}
	tl.dropFrom = max(p.k, warmEnd)
	tl.dropTo = max(end, tl.dropFrom)
}
