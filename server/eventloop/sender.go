// The send path for goroutines other than the loop (the pipeline's release
// threads). A Sender is owned by one goroutine; it holds no lock between
// calls: responses are collected per connection and queued under one lock
// hold in Flush.

package eventloop

import "golang.org/x/sys/unix"

// Sender delivers responses from a goroutine other than the loop (the
// pipeline's release threads). Use one Sender per goroutine. Consecutive
// responses to the same connection are collected and queued under one lock
// hold, so they leave in one write. When the connection owes nothing else,
// Flush writes to the socket directly, which saves waking the loop; a short
// write hands the rest to the loop (on epoll it arms EPOLLOUT). A backend
// with asynchronous sends (backendTraits) always hands writing to the loop.
type Sender struct {
	iov    []unix.Iovec
	cur    *Conn     // the connection batch is for
	batch  []pending // its responses, not yet queued
	direct bool
}

type pending struct {
	seq        uint64
	data       []byte
	closeAfter bool
}

// NewSender returns a Sender; direct=false always hands writing to the loop.
func NewSender(direct bool) *Sender {
	return &Sender{iov: make([]unix.Iovec, 0, maxIovecs), direct: direct}
}

// Send collects the response to request seq of c; it is queued (in request
// order) by the next Flush, or by a Send to another connection, which
// flushes the previous one. No lock is held between calls. The connection
// takes ownership of data.
func (s *Sender) Send(c *Conn, seq uint64, data []byte, closeAfter bool) {
	if s.cur != c {
		s.Flush()
		s.cur = c
	}
	s.batch = append(s.batch, pending{seq, data, closeAfter})
}

// Flush queues what was collected for the current connection under one lock
// hold, then writes it or hands it to the loop.
func (s *Sender) Flush() {
	c := s.cur
	if c == nil {
		return
	}
	s.cur = nil
	c.mu.Lock()
	for i, p := range s.batch {
		c.enqueueLocked(p.seq, p.data, p.closeAfter)
		s.batch[i] = pending{}
	}
	s.batch = s.batch[:0]
	post := s.writeOrHandOverLocked(c)
	c.mu.Unlock()
	if post {
		c.loop.post(c)
	}
}

// writeOrHandOverLocked writes what c owes when the loop is not already in
// charge of it, and tells whether the loop must be posted: to flush the
// rest, to finish a draining connection, or to resume reading.
func (s *Sender) writeOrHandOverLocked(c *Conn) (post bool) {
	if c.closed {
		return false
	}
	needLoop := false
	if c.outBytes > 0 && !c.flushScheduled {
		if c.closeQueued || c.finishOnIdle || !s.direct || c.loop.traits.asyncSends {
			// (Asynchronous sends: the loop sends, with the turn's other
			// responses: one system call for all of them.)
			needLoop = true
		} else if done, err := c.writeLocked(&s.iov); err != nil || !done {
			needLoop = true // the loop flushes the rest, or closes on the error
		} else if c.inflight.Load() == 0 && c.loop.timeoutsOn() {
			// Written whole and nothing else in flight: the idle clock
			// starts now. The loop is not told; it reads this when the
			// connection's filed time comes (timeouts.go).
			c.idleSince = monoNow()
		}
		if needLoop {
			c.flushScheduled = true
		}
	}
	if c.finishOnIdle && c.outBytes == 0 && c.inflight.Load() == 0 {
		needLoop = true
	}
	if c.closeQueued && !c.closeSeen {
		// The ending response must reach the loop, which begins the
		// drain, even while it owns the flush (flushScheduled: a send in
		// flight, on io_uring until its completion): the completion only
		// sends what is owed, and the connection would stay open.
		needLoop = true
	}
	if c.pausedFlag.Load() && c.belowLowWater() {
		needLoop = true
	}
	post = needLoop && !c.postPending
	if post {
		c.postPending = true
	}
	return post
}
