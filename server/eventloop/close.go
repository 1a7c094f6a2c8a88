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

func (l *Loop) discardInput(c *Conn) {
	if l.ur != nil {
		l.ur.armRecv(c) // its completions discard (uring.go), until the FIN
		return
	}
	for !c.isGone() {
		n, err := unix.Read(c.fd, l.scratch)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return
		}
		if err != nil || n == 0 {
			l.closeConn(c)
			return
		}
	}
}

// closeConn is the only place a connection's descriptor is closed: on its
// loop, under mu (so no Sender is writing to it), EPOLL_CTL_DEL first
// (epoll follows open file descriptions, not numbers).
func (l *Loop) closeConn(c *Conn) {
	if c.isGone() {
		return
	}
	c.mu.Lock()
	c.closed = true
	c.dropOutputLocked()
	if l.ur != nil {
		l.ur.unwatch(c)
	} else {
		l.ctl(unix.EPOLL_CTL_DEL, c.fd, 0, 0)
	}
	unix.Close(c.fd)
	c.mu.Unlock()
	l.conns[c.fd] = nil
	c.advance(stateClosed)
	l.nconns--
	l.open.Add(-1)
	l.unfile(c)
	l.h.OnClose(c)
}
