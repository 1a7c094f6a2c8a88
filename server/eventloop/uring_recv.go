// The io_uring backend's receives (backend_uring.go has the ring and its
// turn): a multishot receive per connection into the loop's buffer ring,
// re-armed when it ends, cancelled while the connection is paused, and the
// bytes each completion delivers handed to the loop as a read's would be.
//
// Owner: the loop goroutine, as for all of the backend (backend_uring.go).

package eventloop

import (
	"golang.org/x/sys/unix"

	"weaseldb/internal/uring"
)

// received handles bytes a receive delivered, as a read would.
func (u *uringBackend) received(c *Conn, data []byte) {
	l := u.l
	c.lastInputAt = l.now
	switch c.state {
	case stateReading:
		l.consume(c, data)
	case statePaused:
		// Received after the pause, before its cancel took effect: kept,
		// and parsed when the client catches up.
		c.in = append(c.in, data...)
	default:
		// Input stopped, draining or lingering: discarded, as epoll's
		// loop discards what it reads then.
	}
	l.afterInput(c)
}

// recvResult follows a receive completion: the end of file, an error, or
// a multishot receive that ended and must be armed again.
func (u *uringBackend) recvResult(c *Conn, cqe *uring.CQE) {
	l := u.l
	switch res := cqe.Res; {
	case res == 0:
		c.io.recv = recvIdle
		c.eof = true
		if c.state == stateLingering {
			l.closeConn(c)
			return
		}
		l.beginDrain(c)
		return
	case res < 0 && res != -int32(unix.ENOBUFS) && res != -int32(unix.ECANCELED):
		l.closeConn(c) // ECONNRESET and friends: nothing more can be delivered
		return
	}
	if cqe.More() {
		return
	}
	c.io.recv = recvIdle
	if cqe.Res == -int32(unix.ENOBUFS) {
		u.rearm = append(u.rearm, c) // once this turn's buffers are back
		return
	}
	u.armRecv(c)
}

// armRecv starts a multishot receive unless one is in flight or the
// connection is paused or closed.
func (u *uringBackend) armRecv(c *Conn) {
	if c.io.recv != recvIdle || c.state == statePaused || c.isGone() || u.closed {
		return
	}
	c.io.recv = recvArmed
	u.recvs++
	u.sqe().PrepRecvMultishot(c.fd, u.bufs.Group(), userData(opRecv, c.gen, c.fd))
}

// arm starts a new connection's receive.
func (u *uringBackend) arm(c *Conn) error {
	u.armRecv(c)
	return nil
}

// discard receives on a lingering connection: its completions discard
// (received), until the FIN.
func (u *uringBackend) discard(c *Conn) { u.armRecv(c) }

// pause cancels the receive of a paused connection: bytes already on
// their way still arrive and are kept (received).
func (u *uringBackend) pause(c *Conn) {
	if c.io.recv == recvArmed {
		c.io.recv = recvCanceling
		u.sqe().PrepCancel(userData(opRecv, c.gen, c.fd), userData(opCancel, 0, 0))
	}
}

// resume serves a connection on the ready list: parse what the pause kept,
// then receive again.
func (u *uringBackend) resume(c *Conn) {
	l := u.l
	if c.state == stateReading {
		if c.Overloaded() {
			// Behind again before its turn came: wait for the next
			// resume, as epoll's read pass does (the input kept in c.in
			// has no completion to come that would parse it).
			l.pause(c)
			return
		}
		if len(c.in) > 0 {
			l.consume(c, nil)
		}
	}
	l.afterInput(c)
	if !c.isGone() && c.state == stateReading {
		u.armRecv(c)
	}
}
