// The io_uring backend of a loop (Options.Backend = BackendIOUring): one
// ring per loop, created disabled and enabled on the loop's locked thread
// (single issuer, task work deferred to it); a multishot accept per
// listener; a multishot receive per connection into the loop's
// provided-buffer ring; a multishot poll of the wake eventfd; and the
// responses as sends (writev) in the ring, so that one io_uring_enter
// submits every response of the turn and waits for the next requests.
// Senders never write to sockets themselves here: they queue and post to
// the loop, which owns every send. Everything above this file (handler,
// order, output queue, timeouts, stop) is the same for both backends.
//
// Owner: the loop goroutine, for everything here and the Conn fields it
// touches (recv; sending, sendIov and sendRefs under Conn.mu); the ring is
// never used from another thread.
//
// Each request's user data names its kind, the connection's generation and
// its descriptor (or the listener's index), so a completion for a
// connection closed since (a cancelled receive, say) is recognised and
// dropped like a stale epoll event; the provided buffer it may carry is
// given back all the same.

package eventloop

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"weaseldb/internal/uring"
)

// Backend names an event loop's I/O interface with the kernel.
type Backend string

// The backends.
const (
	BackendEpoll   Backend = "epoll"
	BackendIOUring Backend = "io_uring"
)

// opKind is what a submission was for (the top byte of its user data).
type opKind uint8

const (
	opWake opKind = iota + 1
	opAccept
	opRecv
	opSend
	opCancel
)

func userData(kind opKind, gen uint32, fd int) uint64 {
	return uint64(kind)<<56 | uint64(gen)<<24 | uint64(fd)&0xffffff
}

func splitUserData(ud uint64) (kind opKind, gen uint32, fd int) {
	return opKind(ud >> 56), uint32(ud >> 24), int(ud & 0xffffff)
}

// recvState is where a connection's multishot receive stands.
type recvState uint8

const (
	recvIdle      recvState = iota // none in flight
	recvArmed                      // in flight
	recvCanceling                  // cancelled, its last completion not seen yet
)

const (
	uringEntries = 1024
	uringBufs    = 512 // provided buffers per loop, of Options.ReadBufferSize each
	uringBgid    = 1
)

// uringLoop is a loop's ring and what the loop keeps about it.
type uringLoop struct {
	l     *Loop
	ring  *uring.Ring
	bufs  *uring.BufRing
	rearm []*Conn // connections whose receive ended for want of buffers
	recvs int     // receives in flight (armed or cancelling), closed connections' included
	// sends holds every connection with a send in flight, by the send's
	// user data, until its completion: a connection closed meanwhile
	// stays referenced, and so do the buffers the kernel still reads.
	sends  map[uint64]*Conn
	cqeFn  func(*uring.CQE)
	closed bool
}

// newUringLoop creates the loop's ring, disabled until the loop's thread
// enables it, with its buffer ring.
func newUringLoop(l *Loop) (*uringLoop, error) {
	ring, err := uring.New(uringEntries, uring.SetupSingleIssuer|uring.SetupDeferTaskrun|uring.SetupRDisabled|uring.SetupSubmitAll)
	if err != nil {
		return nil, err
	}
	bufs, err := ring.RegisterBufRing(uringBgid, uringBufs, l.opt.ReadBufferSize)
	if err != nil {
		ring.Close()
		return nil, err
	}
	u := &uringLoop{l: l, ring: ring, bufs: bufs, sends: make(map[uint64]*Conn)}
	u.cqeFn = u.complete
	return u, nil
}

// ProbeIOUring reports why io_uring cannot serve here (nil: it can): the
// kernel must be 6.1 or later (multishot receive into a buffer ring came in
// 6.0, deferred task work in 6.1), and a ring and a buffer ring are set up
// and torn down.
func ProbeIOUring() error {
	var u unix.Utsname
	if err := unix.Uname(&u); err == nil {
		release := unix.ByteSliceToString(u.Release[:])
		var major, minor int
		if _, err := fmt.Sscanf(release, "%d.%d", &major, &minor); err == nil && (major < 6 || major == 6 && minor < 1) {
			return fmt.Errorf("%w: kernel %s, the backend needs 6.1 or later", uring.ErrUnsupported, release)
		}
	}
	ring, err := uring.New(8, 0)
	if err != nil {
		return err
	}
	defer ring.Close()
	b, err := ring.RegisterBufRing(1, 2, 4096)
	if err != nil {
		return err
	}
	return b.Close()
}

// start runs on the loop's locked thread before its first wait.
func (u *uringLoop) start() error {
	if u.ring.Flags()&uring.SetupRDisabled != 0 {
		if err := u.ring.EnableRings(); err != nil {
			return err
		}
	}
	u.sqe().PrepPollMultishot(u.l.wakeFd, unix.POLLIN, userData(opWake, 0, 0))
	return nil
}

// sqe returns a submission slot, submitting what is queued when the ring
// is full.
func (u *uringLoop) sqe() *uring.SQE {
	for {
		if s := u.ring.GetSQE(); s != nil {
			return s
		}
		if _, err := u.ring.Submit(); err != nil {
			panic(fmt.Sprintf("io_uring submit: %v", err))
		}
	}
}

// wait submits what the turn queued and waits for completions (at most
// timeoutMs; -1: until one comes), then handles them.
func (u *uringLoop) wait(timeoutMs int) {
	var timeout time.Duration = -1
	if timeoutMs >= 0 {
		timeout = time.Duration(timeoutMs) * time.Millisecond
	}
	if _, err := u.ring.SubmitAndWait(timeout); err != nil {
		panic(fmt.Sprintf("io_uring_enter: %v", err))
	}
	u.l.now = monoNow()
	u.ring.Completions(u.cqeFn)
	u.bufs.Publish()
	if len(u.rearm) > 0 {
		for i, c := range u.rearm {
			u.rearm[i] = nil
			if !c.isGone() {
				u.armRecv(c)
			}
		}
		u.rearm = u.rearm[:0]
	}
}

func (u *uringLoop) complete(cqe *uring.CQE) {
	l := u.l
	kind, gen, fd := splitUserData(cqe.UserData)
	switch kind {
	case opWake:
		l.Wakeups.Add(1)
		var buf [8]byte
		unix.Read(l.wakeFd, buf[:])
		l.drainPosts()
		if !cqe.More() && !u.closed {
			u.sqe().PrepPollMultishot(l.wakeFd, unix.POLLIN, userData(opWake, 0, 0))
		}
	case opAccept:
		u.accepted(fd, cqe)
	case opRecv:
		if !cqe.More() {
			u.recvs--
		}
		c := u.conn(fd, gen)
		if cqe.Flags&uring.CQEFBuffer != 0 {
			id := cqe.BufferID()
			if c != nil && cqe.Res > 0 {
				u.received(c, u.bufs.Buf(id, int(cqe.Res)))
			}
			u.bufs.Recycle(id, false)
		}
		if c != nil && !c.isGone() {
			u.recvResult(c, cqe)
		}
	case opSend:
		u.sent(cqe)
	}
}

// conn is the connection a completion is for, or nil when it was closed
// since (the descriptor may even serve another connection now).
func (u *uringLoop) conn(fd int, gen uint32) *Conn {
	l := u.l
	if fd < 0 || fd >= len(l.conns) || l.conns[fd] == nil || l.conns[fd].gen != gen {
		l.StaleEvents.Add(1)
		return nil
	}
	return l.conns[fd]
}

// received handles bytes a receive delivered, as a read would.
func (u *uringLoop) received(c *Conn, data []byte) {
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
func (u *uringLoop) recvResult(c *Conn, cqe *uring.CQE) {
	l := u.l
	switch res := cqe.Res; {
	case res == 0:
		c.recv = recvIdle
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
	c.recv = recvIdle
	if cqe.Res == -int32(unix.ENOBUFS) {
		u.rearm = append(u.rearm, c) // once this turn's buffers are back
		return
	}
	u.armRecv(c)
}

// armRecv starts a multishot receive unless one is in flight or the
// connection is paused or closed.
func (u *uringLoop) armRecv(c *Conn) {
	if c.recv != recvIdle || c.state == statePaused || c.isGone() || u.closed {
		return
	}
	c.recv = recvArmed
	u.recvs++
	u.sqe().PrepRecvMultishot(c.fd, u.bufs.Group(), userData(opRecv, c.gen, c.fd))
}

// pauseRecv cancels the receive of a paused connection: bytes already on
// their way still arrive and are kept (received).
func (u *uringLoop) pauseRecv(c *Conn) {
	if c.recv == recvArmed {
		c.recv = recvCanceling
		u.sqe().PrepCancel(userData(opRecv, c.gen, c.fd), userData(opCancel, 0, 0))
	}
}

// resume serves a connection on the ready list: parse what the pause kept,
// then receive again.
func (u *uringLoop) resume(c *Conn) {
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

// flush submits a send of what c owes, unless one is in flight (its
// completion sends the rest) or nothing is owed. The iovecs and the
// buffers they point to stay referenced until the completion.
func (u *uringLoop) flush(c *Conn) {
	l := u.l
	c.mu.Lock()
	if c.closed || c.sending || c.outBytes == 0 || u.closed {
		c.mu.Unlock()
		return
	}
	v := c.iovecsLocked(c.sendIov)
	c.sendRefs = append(c.sendRefs, c.chunks[:len(v)]...) // the buffers v points into
	c.sendIov = v
	c.sending, c.flushScheduled = true, true
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
func (u *uringLoop) sent(cqe *uring.CQE) {
	l := u.l
	c := u.sends[cqe.UserData]
	delete(u.sends, cqe.UserData)
	if c == nil {
		return
	}
	c.mu.Lock()
	c.sending = false
	clear(c.sendRefs)
	c.sendRefs = c.sendRefs[:0]
	clear(c.sendIov)
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
func (u *uringLoop) unwatch(c *Conn) {
	if u.closed {
		return
	}
	if c.recv == recvArmed {
		c.recv = recvCanceling
		u.sqe().PrepCancel(userData(opRecv, c.gen, c.fd), userData(opCancel, 0, 0))
	}
	if c.sending {
		u.sqe().PrepCancel(userData(opSend, c.gen, c.fd), userData(opCancel, 0, 0))
	}
}

// addListener starts a multishot accept on listener i.
func (u *uringLoop) addListener(i int) {
	u.sqe().PrepAcceptMultishot(u.l.listeners[i].fd, userData(opAccept, 0, i))
}

// removeListener cancels listener i's accept.
func (u *uringLoop) removeListener(i int) {
	if !u.closed {
		u.sqe().PrepCancel(userData(opAccept, 0, i), userData(opCancel, 0, 0))
	}
}

// accepted handles an accept completion of listener i, as acceptFrom does
// for one accept4 call.
func (u *uringLoop) accepted(i int, cqe *uring.CQE) {
	l := u.l
	if i >= len(l.listeners) || !l.lnActive[i] {
		switch {
		case cqe.Res < 0:
		case l.stopSeen && i < len(l.listeners) && l.listeners[i].owner == l.id:
			l.acceptLate(int(cqe.Res), l.listeners[i]) // see closeOwnListeners: not lost
		default:
			unix.Close(int(cqe.Res)) // accepted as the listener was removed
		}
		return
	}
	ln := l.listeners[i]
	switch res := cqe.Res; {
	case res >= 0:
		fd := int(res)
		l.Accepted.Add(1)
		l.acceptErrLogged = false
		if !l.admit() {
			l.refuseOverLimit(fd, ln)
		} else {
			if !ln.unix {
				unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
			}
			l.registerAdmitted(fd, ln.unix)
		}
	case res == -int32(unix.EINTR) || res == -int32(unix.ECONNABORTED) || res == -int32(unix.EPROTO) || res == -int32(unix.EAGAIN):
	case res == -int32(unix.ECANCELED):
		return
	default:
		// Out of descriptors, or an errno nobody expected: the multishot
		// accept has ended; come back after the back-off, as epoll's loop
		// does.
		l.lnActive[i] = false // the accept is gone: nothing to cancel
		l.pauseAccepts(i, unix.Errno(-res))
		return
	}
	if !cqe.More() && l.lnActive[i] {
		u.addListener(i) // the multishot accept ended: start another
	}
}

// close tears the ring down once the loop closed every connection: the
// cancels they queued are submitted, their last completions awaited for a
// short while (so the kernel no longer writes into the buffers), then the
// buffer ring and the ring go.
func (u *uringLoop) close() {
	if u.closed {
		return
	}
	deadline := time.Now().Add(200 * time.Millisecond)
	for u.recvs > 0 && time.Now().Before(deadline) {
		if _, err := u.ring.SubmitAndWait(10 * time.Millisecond); err != nil {
			break
		}
		u.ring.Completions(func(cqe *uring.CQE) {
			if cqe.Flags&uring.CQEFBuffer != 0 {
				u.bufs.Recycle(cqe.BufferID(), false)
			}
			if kind, _, _ := splitUserData(cqe.UserData); kind == opRecv && !cqe.More() {
				u.recvs--
			}
		})
	}
	u.closed = true
	quiet := u.recvs <= 0
	if quiet {
		u.bufs.Close()
	}
	u.ring.Close()
	if !quiet {
		// A receive that never reported its end might still be written
		// by the kernel: the buffers' memory is left mapped rather than
		// risk it landing in memory reused since.
		u.l.warn(errors.New("io_uring: receives still in flight at close; their buffers are left mapped"))
	}
}
