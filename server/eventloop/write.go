// Writing from the loop: flushing what a connection owes, EPOLLOUT armed
// only while bytes are owed, and what follows progress (resume reading,
// finish a draining connection). Loop goroutine only; the output queue
// itself is under Conn.mu (outqueue.go).

package eventloop

import "golang.org/x/sys/unix"

// connMask derives the interest mask from the connection's state, the only
// place that does (so a MOD never forgets ET or RDHUP).
func connMask(outArmed bool) uint32 {
	m := uint32(unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLET)
	if outArmed {
		m |= unix.EPOLLOUT
	}
	return m
}

func (l *Loop) setOutArmed(c *Conn, armed bool) {
	if c.outArmed == armed {
		return
	}
	c.outArmed = armed
	if err := l.ctl(unix.EPOLL_CTL_MOD, c.fd, connMask(armed), c.gen); err != nil {
		l.closeConn(c)
	}
}

// flushAndProgress writes what c owes, then acts on the progress: the
// pair every caller outside flush itself needs.
func (l *Loop) flushAndProgress(c *Conn) {
	l.flush(c)
	l.afterProgress(c)
}

// afterProgress resumes reading or finishes the connection once enough
// output drained.
func (l *Loop) afterProgress(c *Conn) {
	switch {
	case c.state == statePaused && c.belowLowWater():
		c.setPaused(false)
		l.addReady(c)
	case c.state == stateDraining:
		l.maybeFinish(c)
	}
}

// flush writes what c owes from the loop; on EAGAIN it arms EPOLLOUT, and
// it disarms it once nothing is owed. It keeps the write clock (started
// when the socket first refuses bytes, restarted whenever it takes some)
// and the idle clock (started when the last owed byte is written with no
// request in flight).
func (l *Loop) flush(c *Conn) {
	if l.ur != nil {
		l.ur.flush(c) // a send in the ring, submitted with the turn's others
		return
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	done, err := true, error(nil)
	before := c.outBytes
	if before > 0 {
		done, err = c.writeLocked(&l.iov)
	}
	if err != nil {
		c.mu.Unlock()
		l.closeConn(c)
		return
	}
	c.flushScheduled = !done
	wroteAll := done && before > 0
	clockStarts := !done && (c.outBytes < before || !c.outArmed)
	if clockStarts {
		l.startWriteClockLocked(c)
	}
	if wroteAll && c.inflight.Load() == 0 {
		c.idleSince = l.now
	}
	c.mu.Unlock()
	if clockStarts && l.opt.WriteTimeout > 0 {
		l.file(c, l.now+int64(l.opt.WriteTimeout))
	}
	wasArmed := c.outArmed
	l.setOutArmed(c, !done)
	if done && wasArmed && c.NotifyDrained && l.drainH != nil && !c.isGone() {
		l.drainH.OnDrained(c)
	}
}
