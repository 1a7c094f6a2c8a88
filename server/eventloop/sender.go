// The send path for goroutines other than the loop (the pipeline's release
// threads). A Sender is owned by one goroutine; it holds no lock between
// calls: responses are collected per connection and queued under one lock
// hold in Flush.

package eventloop

import "golang.org/x/sys/unix"

// Sender delivers responses from a goroutine other than the loop (the
// pipeline's release threads). Use one Sender per goroutine. Consecutive
// responses to the same connection are queued under one lock hold and leave
// in one write. When the connection owes nothing else, Flush writes to the
// socket directly, which saves waking the loop; a short write hands the rest
// to the loop, which arms EPOLLOUT.
type Sender struct {
	iov    []unix.Iovec
	cur    *Conn
	direct bool
}

// NewSender returns a Sender; direct=false always hands writing to the loop.
func NewSender(direct bool) *Sender {
	return &Sender{iov: make([]unix.Iovec, 0, maxIovecs), direct: direct}
}

// Send queues the response to request seq of c (in request order). The
// connection takes ownership of data. Call Flush after the last Send of a
// batch; a Send to another connection flushes the previous one.
func (s *Sender) Send(c *Conn, seq uint64, data []byte, closeAfter bool) {
	if s.cur != c {
		s.Flush()
		c.mu.Lock()
		s.cur = c
	}
	c.enqueueLocked(seq, data, closeAfter)
}

// Flush writes or hands over what the current connection owes, and releases it.
func (s *Sender) Flush() {
	c := s.cur
	if c == nil {
		return
	}
	s.cur = nil
	if c.closed {
		c.mu.Unlock()
		return
	}
	needLoop := false
	if c.outBytes > 0 && !c.flushScheduled {
		if c.closeQueued || c.finishOnIdle || !s.direct {
			needLoop = true
		} else if done, err := c.writeLocked(&s.iov); err != nil || !done {
			needLoop = true // the loop arms EPOLLOUT, or closes on the error
		}
		if needLoop {
			c.flushScheduled = true
		}
	}
	if c.finishOnIdle && c.outBytes == 0 && c.inflight.Load() == 0 {
		needLoop = true
	}
	if c.pausedFlag.Load() && c.belowLowWater() {
		needLoop = true
	}
	post := needLoop && !c.postPending
	if post {
		c.postPending = true
	}
	c.mu.Unlock()
	if post {
		c.loop.post(c)
	}
}
