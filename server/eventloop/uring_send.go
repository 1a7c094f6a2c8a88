// The io_uring backend's sends (backend_uring.go has the ring and its
// turn): at most one send per connection in flight, of everything it owes,
// its buffers referenced until the completion; and the cancels of what is
// in flight when a connection closes.
//
// Owner: the loop goroutine; a connection's sending state is also read by
// senders under Conn.mu (backend_uring.go).

package eventloop

import (
	"golang.org/x/sys/unix"

	"weaseldb/internal/uring"
)

// flush submits a send of what c owes, unless one is in flight (its
// completion sends the rest) or nothing is owed. The iovecs and the
// buffers they point to stay referenced until the completion.
func (u *uringBackend) flush(c *Conn) {
	l := u.l
	c.mu.Lock()
	if c.closed || c.io.sending || c.outBytes == 0 || u.closed {
		c.mu.Unlock()
		return
	}
	v := c.iovecsLocked(c.io.sendIov)
	c.io.sendRefs = append(c.io.sendRefs, c.chunks[:len(v)]...) // the buffers v points into
	c.io.sendIov = v
	c.io.sending, c.flushScheduled = true, true
	c.writeSince = l.now // the write clock: the peer must take bytes within the write timeout
	c.mu.Unlock()
	ud := userData(opSend, c.gen, c.fd)
	u.sends[ud] = c
	u.sqe().PrepWritev(c.fd, v, ud)
	if l.opt.WriteTimeout > 0 {
		l.file(c, l.now+int64(l.opt.WriteTimeout))
	}
}

// sent handles a send's completion: what the peer took leaves the queue,
// the rest is sent next, and a connection that owes nothing more makes
// progress (resumes reading, finishes its drain, hears OnDrained).
func (u *uringBackend) sent(cqe *uring.CQE) {
	l := u.l
	c := u.sends[cqe.UserData]
	delete(u.sends, cqe.UserData)
	if c == nil {
		return
	}
	c.mu.Lock()
	c.io.sending = false
	clear(c.io.sendRefs)
	c.io.sendRefs = c.io.sendRefs[:0]
	clear(c.io.sendIov)
	if c.closed {
		c.mu.Unlock()
		return
	}
	if cqe.Res < 0 {
		c.mu.Unlock()
		if cqe.Res != -int32(unix.ECANCELED) {
			l.closeConn(c) // EPIPE, ECONNRESET: nothing more can be delivered
		}
		return
	}
	c.consumeLocked(int(cqe.Res))
	c.writeSince = l.now
	done := c.outBytes == 0
	c.flushScheduled = !done
	if done && c.inflight.Load() == 0 {
		c.idleSince = l.now
	}
	c.mu.Unlock()
	if !done {
		u.flush(c)
		return
	}
	if c.NotifyDrained && l.drainH != nil {
		l.drainH.OnDrained(c)
	}
	if !c.isGone() {
		l.afterProgress(c)
	}
}

// unwatch cancels what is in flight for a connection being closed (by
// user data, which stays right after the descriptor is closed and its
// number reused).
func (u *uringBackend) unwatch(c *Conn) {
	if u.closed {
		return
	}
	if c.io.recv == recvArmed {
		c.io.recv = recvCanceling
		u.sqe().PrepCancel(userData(opRecv, c.gen, c.fd), userData(opCancel, 0, 0))
	}
	if c.io.sending {
		u.sqe().PrepCancel(userData(opSend, c.gen, c.fd), userData(opCancel, 0, 0))
	}
}
