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
	if sh, ok := l.h.(StopHandler); ok {
		sh.OnStop(l)
	}
	for _, c := range l.conns {
		if c != nil {
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
	if l.ur != nil {
		l.ur.close()
	} else {
		unix.Close(l.epfd)
	}
}
