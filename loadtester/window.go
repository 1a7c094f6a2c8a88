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

// window is the measured window as one network thread sees it, and its
// close (loop thread only; tail is read by the collector once the loop has
// exited).
type window struct {
	start    int64 // the window opens here (ns since base): a request due before it is the warm-up's
	closeAt  int64 // and closes here; refreshed from the runner on every wake, so an interrupt can move it
	drainFor int64 // the effective drain
	drainEnd int64 // closing: when requests in flight stop being waited for, and waiting ones sent
	closing  bool  // the window has closed: nothing due after it is sent; what is in flight or due and waiting drains
	finished bool  // the drain is over and what never finished is counted: the loop exits
	tail     tail
}

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

// pending is one unfinished request: when it was due, when it was sent,
// and its kind.
type pending struct {
	due, sent int64
	kind      uint8
}

// closeWindow runs on every loop turn at or after the window's end. The
// first closes the window; the last, once the drain is over, finishes.
func (t *netThread) closeWindow(now int64) {
	w := &t.acct.win
	if !w.closing {
		w.closing = true
		w.drainEnd = w.closeAt + w.drainFor
	}
	if now >= w.drainEnd || t.stopping.Load() || (!t.anyInFlight() && !t.backlog()) {
		t.finish(now)
	}
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
	w := &t.acct.win
	w.closing = true
	w.tail.endNs = now
	for _, c := range t.conns {
		if c == nil {
			continue
		}
		for i := range c.inflight {
			j := (c.head + i) & c.mask
			if c.proto.ended(c, j) { // ended behind an open stream: already booked
				continue
			}
			due := c.sendTimes[j]
			if due < w.start {
				w.tail.warmUnfinished++
				continue
			}
			p := pending{due: due, sent: c.sentAtOf(j)}
			if c.kinds != nil {
				p.kind = c.kinds[j]
			}
			w.tail.unfinished = append(w.tail.unfinished, p)
		}
	}
	if t.pace.on() {
		t.countDropped()
	}
	w.finished = true
}
