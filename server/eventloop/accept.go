// Accepting connections: the listeners a loop's backend accepts on,
// pausing on descriptor exhaustion, and registering a new connection, or
// refusing it past MaxConns (the accepting itself is the backend's). Loop goroutine only: lnActive,
// lnResume and the conn table are the loop's; the open-connection count is
// an atomic shared by the Server's loops; the counters are atomics read by
// /metrics.

package eventloop

import (
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

var genCounter atomic.Uint32

func nextGen() uint32 {
	for {
		if g := genCounter.Add(1); g != 0 {
			return g
		}
	}
}

// addListener has the backend accept on listener i.
func (l *Loop) addListener(i int) error {
	if err := l.be.addListener(i); err != nil {
		return err
	}
	l.lnActive[i] = true
	return nil
}

func (l *Loop) removeListener(i int) {
	if l.lnActive[i] {
		l.be.removeListener(i)
		l.lnActive[i] = false
	}
}

func (l *Loop) anyListenerPaused() bool {
	for i := range l.lnActive {
		if !l.lnActive[i] {
			return true
		}
	}
	return false
}

// takeAccepted takes a connection the backend accepted on ln: counted,
// refused past MaxConns, else registered.
func (l *Loop) takeAccepted(fd int, ln *Listener) {
	l.Accepted.Add(1)
	l.acceptErrLogged = false
	if !l.admit() {
		l.refuseOverLimit(fd, ln)
		return
	}
	if !ln.unix {
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	}
	l.registerAdmitted(fd, ln.unix)
}

// admit counts a new connection against MaxConns, across the Server's
// loops (add first, then check, so two loops cannot both take the last
// place). false: over the limit, nothing counted.
func (l *Loop) admit() bool {
	n := l.open.Add(1)
	if limit := l.opt.MaxConns; limit > 0 && n > int64(limit) {
		l.open.Add(-1)
		return false
	}
	return true
}

// pauseAccepts stops the backend accepting on listener i for
// AcceptBackoff after accept failed with err, and says so at most once a
// second (and once per streak of EMFILE-like errors).
func (l *Loop) pauseAccepts(i int, err error) {
	ln := l.listeners[i]
	l.removeListener(i)
	l.lnResume[i] = l.now + int64(l.opt.AcceptBackoff)
	l.AcceptPauses.Add(1)
	if !l.acceptErrLogged || l.now-l.acceptErrAt >= int64(time.Second) {
		l.acceptErrLogged = true
		l.acceptErrAt = l.now
		l.logf("loop %d: accept on %s: %v; pausing accepts for %v at a time", l.id, ln.addr, err, l.opt.AcceptBackoff)
	}
}

// refuseOverLimit closes a connection accepted past MaxConns at once: the
// loops keep serving the connections they have, and the backlog never
// fills with connections nobody will read. Logged at most once a second.
func (l *Loop) refuseOverLimit(fd int, ln *Listener) {
	unix.Close(fd)
	l.closedBy[CauseConnLimit].Add(1)
	if l.now-l.limitLoggedAt >= int64(time.Second) || l.limitLoggedAt == 0 {
		l.limitLoggedAt = l.now
		l.logf("loop %d: %d connections open (max_connections); closing new connections on %s until some end", l.id, l.opt.MaxConns, ln.addr)
	}
}

// registerAdmitted publishes the connection in the table first and then
// has the backend arm its input, so what the backend reports finds the
// connection. Its header clock starts now.
func (l *Loop) registerAdmitted(fd int, isUnix bool) *Conn {
	c := &Conn{loop: l, fd: fd, gen: nextGen(), isUnix: isUnix, heapIdx: -1, idleSince: l.now}
	for fd >= len(l.conns) {
		l.conns = append(l.conns, make([]*Conn, max(64, len(l.conns)))...)
	}
	l.conns[fd] = c
	l.nconns++
	l.h.OnOpen(c)
	if err := l.be.arm(c); err != nil {
		l.closeConn(c)
		return nil
	}
	if l.timeoutsOn() {
		if at, _ := l.deadlineOf(c); at > 0 {
			l.file(c, at)
		} else {
			l.file(c, l.now+int64(l.minTimeout))
		}
	}
	switch {
	case l.lateAccept:
		c.lateStop = true // drains after its first requests (stop.go)
	case l.stopSeen:
		l.beginDrain(c)
	}
	return c
}
