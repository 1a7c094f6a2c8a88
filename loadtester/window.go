package loadtester

// The end of the measured window, on a network thread (loop thread only;
// the tail is read by the collector once the loop has exited).
//
// When the loop first sees the window's end it stops sending anything due
// after it (topUp and schedule check the end themselves) and drains, for at
// most the drain (--drain, never longer than --timeout): requests in flight
// may still be answered, and in rate mode the requests due in the window
// that were still waiting for a connection (every connection busy, say
// behind a server stall that straddles the end) are sent as connections
// free up, their latency counted from when they were due like any other.
// They were due in the window, so dropping them at once would fail a run
// whose server answered everything within the drain. The drain ends early
// once nothing is in flight and nothing due waits. Then the thread counts
// what never finished, once: each request still in flight is unfinished,
// each request of the open-loop schedule due in the window and never sent
// is dropped, and their due times go to the tail, where the collector
// records their lower bounds (the drain's end minus when they were due).
// The loop then exits.

// tail is what a thread leaves for the collector when it finishes.
type tail struct {
	endNs      int64     // when the thread stopped waiting (the end of its drain)
	unfinished []pending // requests due in the window, sent, never answered
	// Open loop: the schedule's requests k in [dropFrom, dropTo) were due in
	// the window and never sent; scheduled counts every request of the
	// schedule due in the window, a check on the other counts.
	dropFrom, dropTo uint64
	scheduled        int64
	warmUnfinished   int64 // due during the warm-up, sent, never answered
	warmDropped      int64 // due during the warm-up, never sent
}

// pending is one unfinished request: when it was due and when it was sent.
type pending struct{ due, sent int64 }

// closeWindow runs on every loop turn at or after the window's end. The
// first closes the window; the last, once the drain is over, finishes.
func (t *netThread) closeWindow(now int64) {
	if !t.closing {
		t.closing = true
		t.drainEnd = t.closeAt + t.drainFor
	}
	if now >= t.drainEnd || t.stopping.Load() || (!t.anyInFlight() && !t.backlog()) {
		t.finish(now)
	}
}

// backlog reports whether requests of the open-loop schedule due before the
// window's end are still waiting for a connection: the drain owes them a
// send. A thread whose schedule never started (no connection before the
// window closed) has none to send; its share is dropped (countDropped).
func (t *netThread) backlog() bool {
	return t.tfd >= 0 && t.scheduling && t.dueAt(t.k) < t.closeAt
}

func (t *netThread) anyInFlight() bool {
	for _, c := range t.conns {
		if c != nil && c.inflight > 0 {
			return true
		}
	}
	return false
}

// finish counts what never finished and ends the loop.
func (t *netThread) finish(now int64) {
	t.closing = true
	t.tail.endNs = now
	for _, c := range t.conns {
		if c == nil {
			continue
		}
		for i := range c.inflight {
			j := (c.head + i) & c.mask
			due := c.sendTimes[j]
			if due < t.mStart {
				t.tail.warmUnfinished++
				continue
			}
			t.tail.unfinished = append(t.tail.unfinished, pending{due: due, sent: c.sentAtOf(j)})
		}
	}
	if t.tfd >= 0 {
		t.countDropped()
	}
	t.finished = true
}

// countDropped finds the open-loop requests due before the window's end
// that were never sent: the schedule's next index up to the first one due
// at or after the end.
func (t *netThread) countDropped() {
	if !t.scheduling { // never had a connection: its whole share of the window went unsent
		t.scheduling = true
		t.schedStart += t.mStart
	}
	warmEnd, end := t.firstDueAtOrAfter(t.mStart), t.firstDueAtOrAfter(t.closeAt)
	if end > warmEnd {
		t.tail.scheduled = int64(end - warmEnd)
	}
	if t.k < warmEnd {
		t.tail.warmDropped = int64(min(warmEnd, end) - t.k)
	}
	t.tail.dropFrom = max(t.k, warmEnd)
	t.tail.dropTo = max(end, t.tail.dropFrom)
}

// firstDueAtOrAfter is the index of the schedule's first request due at or
// after ns.
func (t *netThread) firstDueAtOrAfter(ns int64) uint64 {
	if ns <= t.schedStart {
		return 0
	}
	k := uint64(float64(ns-t.schedStart) / t.interval)
	for k > 0 && t.dueAt(k-1) >= ns {
		k--
	}
	for t.dueAt(k) < ns {
		k++
	}
	return k
}
