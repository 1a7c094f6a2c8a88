// Stopping: stop accepting, drain every connection, then close what the
// loop owns (also after a panic). Loop goroutine only.

package eventloop

import "golang.org/x/sys/unix"

// beginStop: stop accepting, then drain every connection.
func (l *Loop) beginStop() {
	l.stopSeen = true
	l.deadline = l.stopBy.Load()
	for i := range l.listeners {
		l.removeListener(i)
	}
	l.closeOwnListeners()
	if sh, ok := l.h.(StopHandler); ok {
		sh.OnStop(l)
	}
	for _, c := range l.conns {
		if c != nil && !c.lateStop { // a late one drains after its first requests
			// Requests already read but not yet parsed are parsed now.
			if len(c.in) > 0 && c.parsing() {
				l.consume(c, nil)
				if c.needFlush {
					c.needFlush = false
					l.flush(c)
				}
			}
			if !c.isGone() {
				c.markLastOwed()
				l.beginDrain(c)
			}
		}
	}
	l.h.OnTurnEnd(l)
}

// abort closes everything this loop owns (after a stop, or a panic).
func (l *Loop) abort() {
	defer func() { recover() }() // a second panic must not escape the loop goroutine
	for _, c := range l.conns {
		if c != nil {
			l.closeConn(c)
		}
	}
	for i := range l.listeners {
		l.removeListener(i)
	}
	// The eventfd stays open: a Sender may still post to this loop; the
	// Server closes it once nothing can (see Server.Close).
	l.be.close()
}

// closeOwnListeners closes the listeners this loop alone serves
// (SO_REUSEPORT) as it stops, without losing the connections queued on
// them: the kernel would reset those at close, and while the socket is
// open it keeps hashing new connections to it, which no other loop would
// accept. So it takes every connection the backlog holds (accept4 until
// EAGAIN, the listener already out of the loop's set), closes the
// listener, and serves those connections as the stop serves open ones:
// each is read, answered, and closed after its last response (which says
// Connection: close) once its first requests are in (lateStop, read.go;
// one that sends nothing is closed by the header timeout or the stop's
// deadline). A connection that completes its handshake between the last
// accept and the close is refused, as on a shared listener closed at the
// end of a stop; with the sysctl net.ipv4.tcp_migrate_req=1 the kernel
// moves it to another listener of the group instead. An accept the backend
// completes after the listener was removed lands in acceptLate too.
func (l *Loop) closeOwnListeners() {
	l.lateAccept = true
	defer func() { l.lateAccept = false }()
	for _, ln := range l.listeners {
		if ln.owner != l.id || ln.closed.Load() {
			continue
		}
		for {
			fd, _, err := unix.Accept4(ln.fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
			if err == unix.EINTR || err == unix.ECONNABORTED || err == unix.EPROTO {
				continue
			}
			if err != nil {
				break // EAGAIN: the backlog is empty; anything else: nothing more to take
			}
			l.acceptLate(fd, ln)
		}
		ln.Close()
	}
}

// acceptLate registers a connection taken from the loop's own listener as
// it stops (see closeOwnListeners), counted like any accepted one.
func (l *Loop) acceptLate(fd int, ln *Listener) {
	l.Accepted.Add(1)
	if !l.admit() {
		l.refuseOverLimit(fd, ln)
		return
	}
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	was := l.lateAccept
	l.lateAccept = true
	l.registerAdmitted(fd, false)
	l.lateAccept = was
}
