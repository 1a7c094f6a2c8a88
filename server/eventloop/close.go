// Ending a connection: draining (finish what is owed, then close), the
// bounded linger after SHUT_WR, and the one place a descriptor is closed.
// Loop goroutine only; closeConn takes Conn.mu so no sender writes to a
// descriptor number being closed.

package eventloop

import (
	"time"

	"golang.org/x/sys/unix"
)

// beginDrain stops reading requests; the connection closes once every
// parsed request is answered and written.
func (l *Loop) beginDrain(c *Conn) {
	if c.finishing() {
		return
	}
	c.advance(stateDraining)
	l.maybeFinish(c)
}

// maybeFinish closes a draining connection that owes nothing: at once if
// the peer already shut its side, otherwise with SHUT_WR and a bounded
// linger that reads and discards until the peer's FIN (closing with unread
// input would send RST and could destroy responses the peer has not read).
func (l *Loop) maybeFinish(c *Conn) {
	if c.state != stateDraining {
		return
	}
	c.mu.Lock()
	c.finishOnIdle = true
	idle := c.outBytes == 0 && (c.inflight.Load() == 0 || c.closeQueued)
	c.mu.Unlock()
	if !idle {
		return
	}
	if c.eof || c.noLinger {
		l.closeConn(c)
		return
	}
	unix.Shutdown(c.fd, unix.SHUT_WR)
	c.advance(stateLingering)
	linger := l.opt.Linger
	if l.stopSeen {
		linger = min(linger, 500*time.Millisecond)
	}
	// The linger's deadline replaces any other in the loop's one timer
	// heap (timeouts.go), timeouts on or off.
	c.lingerUntil = monoNow() + int64(linger)
	l.unfile(c)
	l.fileAt(c, c.lingerUntil)
	l.discardInput(c)
}

// discardInput has the backend read and drop a lingering connection's
// input until the peer's FIN.
func (l *Loop) discardInput(c *Conn) { l.be.discard(c) }

// closeConn is the only place a connection's descriptor is closed: on its
// loop, under mu (so no Sender is writing to it), after the backend
// forgets it (epoll follows open file descriptions, not numbers; a ring's
// requests in flight are cancelled by their user data).
func (l *Loop) closeConn(c *Conn) {
	if c.isGone() {
		return
	}
	c.mu.Lock()
	c.closed = true
	c.dropOutputLocked()
	l.be.unwatch(c)
	unix.Close(c.fd)
	c.mu.Unlock()
	l.conns[c.fd] = nil
	c.advance(stateClosed)
	l.nconns--
	l.open.Add(-1)
	l.unfile(c)
	l.h.OnClose(c)
}
