// The epoll backend of a loop (Options.Backend = BackendEpoll, the
// default): one epoll instance per loop, edge-triggered for connections
// (EPOLLIN|EPOLLRDHUP, EPOLLOUT only while bytes are owed), level-triggered
// and EPOLLEXCLUSIVE for listeners; the loop reads to EAGAIN under a
// per-turn budget, writes with write or writev, and accepts with accept4.
// A Sender may write to a socket itself (sender.go).
//
// Owner: the loop goroutine, for everything here and the Conn fields of
// epollConn.
//
// The data word of each registration holds (fd, generation); listeners and
// the wake eventfd have generation 0. An event whose generation does not
// match the connection now at that number is stale and dropped.

package eventloop

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// epollConn is a connection's state under epoll (loop goroutine only).
type epollConn struct {
	outArmed bool // EPOLLOUT is in the interest mask
	rdhup    bool // the peer's FIN was reported: read until EOF
}

// epollBackend is a loop's epoll instance and what the loop keeps about it.
type epollBackend struct {
	l      *Loop
	epfd   int
	events []unix.EpollEvent
	iov    []unix.Iovec // the loop's writev list
}

// newEpollBackend creates the epoll instance with the wake eventfd in it.
func newEpollBackend(l *Loop) (*epollBackend, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	e := &epollBackend{
		l: l, epfd: epfd,
		events: make([]unix.EpollEvent, l.opt.EventBatchSize),
		iov:    make([]unix.Iovec, 0, maxIovecs),
	}
	if err := e.ctl(unix.EPOLL_CTL_ADD, l.wakeFd, unix.EPOLLIN|unix.EPOLLET, 0); err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("register eventfd: %w", err)
	}
	return e, nil
}

func (e *epollBackend) traits() backendTraits { return backendTraits{} }

func (e *epollBackend) start() error { return nil }

func (e *epollBackend) close() { unix.Close(e.epfd) }

func (e *epollBackend) release() { unix.Close(e.epfd) }

// ctl is epoll_ctl with (fd, generation) in the data word.
func (e *epollBackend) ctl(op, fd int, events uint32, gen uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd), Pad: int32(gen)}
	for {
		err := unix.EpollCtl(e.epfd, op, fd, &ev)
		if err != unix.EINTR {
			return err
		}
	}
}

// wait waits for events and dispatches them.
func (e *epollBackend) wait(timeoutMs int) {
	l := e.l
	n, err := unix.EpollWait(e.epfd, e.events, timeoutMs)
	for err == unix.EINTR { // the Go runtime's preemption signals: routine
		n, err = unix.EpollWait(e.epfd, e.events, l.waitTimeout())
	}
	if err != nil {
		panic(fmt.Sprintf("epoll_wait: %v", err))
	}
	l.now = monoNow() // the turn's clock: every deadline set in this turn starts here
	for i := 0; i < n; i++ {
		e.dispatch(e.events[i])
		if i&63 == 63 && l.wakePending.Load() != 0 {
			l.drainPosts() // completions do not wait behind a big batch
		}
	}
}

// dispatch applies one event. The data word holds (fd, generation): an
// event whose generation does not match the connection now at that number
// is stale (the descriptor was closed and reused within one batch) and is
// dropped.
func (e *epollBackend) dispatch(ev unix.EpollEvent) {
	l := e.l
	fd, gen := int(ev.Fd), uint32(ev.Pad)
	if gen == 0 {
		if fd == l.wakeFd {
			l.Wakeups.Add(1)
			var buf [8]byte
			unix.Read(l.wakeFd, buf[:])
			l.drainPosts()
			return
		}
		for i, ln := range l.listeners {
			if ln.fd == fd && l.lnActive[i] {
				e.acceptFrom(i)
			}
		}
		return
	}
	if fd < 0 || fd >= len(l.conns) || l.conns[fd] == nil || l.conns[fd].gen != gen {
		l.StaleEvents.Add(1)
		return
	}
	c := l.conns[fd]
	if ev.Events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) != 0 && c.io.outArmed {
		l.flushAndProgress(c)
		if c.isGone() {
			return
		}
	}
	if ev.Events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		if ev.Events&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			c.io.rdhup = true
		}
		e.readConn(c)
	}
}

// addListener registers listener i. EPOLLEXCLUSIVE wakes one (or a few)
// loops per connection instead of all; it is ADD-only, so pausing a
// listener is DEL and resuming is ADD. Level-triggered, so a capped accept
// burst is reported again on the next wait.
func (e *epollBackend) addListener(i int) error {
	ln := e.l.listeners[i]
	if err := e.ctl(unix.EPOLL_CTL_ADD, ln.fd, unix.EPOLLIN|unix.EPOLLEXCLUSIVE, 0); err != nil {
		return fmt.Errorf("register listener %s: %w", ln.addr, err)
	}
	return nil
}

func (e *epollBackend) removeListener(i int) {
	e.ctl(unix.EPOLL_CTL_DEL, e.l.listeners[i].fd, 0, 0)
}

// acceptFrom accepts up to AcceptBatch connections from listener i (the
// listener is level-triggered: what is left is reported again).
func (e *epollBackend) acceptFrom(i int) {
	l := e.l
	ln := l.listeners[i]
	for n := 0; n < l.opt.AcceptBatch; n++ {
		fd, _, err := unix.Accept4(ln.fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if err != nil {
			switch err {
			case unix.EINTR, unix.ECONNABORTED, unix.EPROTO:
				continue
			case unix.EAGAIN:
				return // normal with EPOLLEXCLUSIVE: another loop took it
			default:
				// Out of descriptors (EMFILE, ENFILE, ENOBUFS, ENOMEM) or an
				// errno nobody expected: the backlog stays readable, so a
				// level-triggered listener would spin. Leave the epoll set and
				// come back after a timed back-off.
				l.pauseAccepts(i, err)
				return
			}
		}
		l.takeAccepted(fd, ln)
	}
}

// arm adds a connection just published in the table: the readiness that
// ADD reports (once, edge-triggered) finds it.
func (e *epollBackend) arm(c *Conn) error {
	return e.ctl(unix.EPOLL_CTL_ADD, c.fd, connMask(false), c.gen)
}

// unwatch takes a connection out of the set before its descriptor closes
// (epoll follows open file descriptions, not numbers).
func (e *epollBackend) unwatch(c *Conn) {
	e.ctl(unix.EPOLL_CTL_DEL, c.fd, 0, 0)
}

// resume gives a connection that used up its read budget another pass.
func (e *epollBackend) resume(c *Conn) { e.readConn(c) }

// pause needs nothing: a paused connection is not read (readConn), and the
// edges that come meanwhile are read when it resumes.
func (e *epollBackend) pause(*Conn) {}

// readConn reads until EAGAIN (edge-triggered), at most ReadBudget bytes
// this turn; a connection with more is put on the ready list.
func (e *epollBackend) readConn(c *Conn) {
	l := e.l
	switch c.state {
	case stateLingering:
		e.discard(c)
		return
	case statePaused, stateDraining, stateClosed:
		return
	}
	if len(c.in) > 0 && c.parsing() && !c.Overloaded() {
		l.consume(c, nil) // left over from a pause
	}
	budget := l.opt.ReadBudget
	for !c.isGone() {
		if c.Overloaded() {
			l.pause(c)
			break
		}
		n, err := unix.Read(c.fd, l.scratch)
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			if err == unix.EAGAIN {
				break
			}
			l.closeConn(c) // ECONNRESET and friends: nothing more can be delivered
			return
		}
		if n == 0 {
			c.eof = true
			l.beginDrain(c)
			break
		}
		c.lastInputAt = l.now
		if c.parsing() {
			l.consume(c, l.scratch[:n])
		}
		budget -= n
		// A short read emptied the socket: later data raises a new edge.
		// Unless the FIN was reported, which only a read returning 0 shows.
		if n < len(l.scratch) && !c.io.rdhup {
			break
		}
		if budget <= 0 {
			l.addReady(c)
			break
		}
	}
	l.afterInput(c)
}

// discard reads and drops a lingering connection's input to EAGAIN; the
// FIN (or an error) closes it.
func (e *epollBackend) discard(c *Conn) {
	l := e.l
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

// connMask derives the interest mask from the connection's state, the only
// place that does (so a MOD never forgets ET or RDHUP).
func connMask(outArmed bool) uint32 {
	m := uint32(unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLET)
	if outArmed {
		m |= unix.EPOLLOUT
	}
	return m
}

func (e *epollBackend) setOutArmed(c *Conn, armed bool) {
	if c.io.outArmed == armed {
		return
	}
	c.io.outArmed = armed
	if err := e.ctl(unix.EPOLL_CTL_MOD, c.fd, connMask(armed), c.gen); err != nil {
		e.l.closeConn(c)
	}
}

// flush writes what c owes from the loop; on EAGAIN it arms EPOLLOUT, and
// it disarms it once nothing is owed. It keeps the write clock (started
// when the socket first refuses bytes, restarted whenever it takes some)
// and the idle clock (started when the last owed byte is written with no
// request in flight).
func (e *epollBackend) flush(c *Conn) {
	l := e.l
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	done, err := true, error(nil)
	before := c.outBytes
	if before > 0 {
		done, err = c.writeLocked(&e.iov)
	}
	if err != nil {
		c.mu.Unlock()
		l.closeConn(c)
		return
	}
	c.flushScheduled = !done
	wroteAll := done && before > 0
	clockStarts := !done && (c.outBytes < before || !c.io.outArmed)
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
	wasArmed := c.io.outArmed
	e.setOutArmed(c, !done)
	if done && wasArmed && c.NotifyDrained && l.drainH != nil && !c.isGone() {
		l.drainH.OnDrained(c)
	}
}
