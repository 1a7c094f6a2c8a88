// Accepting connections: the listeners in each loop's epoll set, the
// accept burst, pausing on descriptor exhaustion, and registering a new
// connection. Loop goroutine only: lnActive, lnResume and the conn table are
// the loop's; Accepted and AcceptPauses are atomics read by /metrics.

package eventloop

import (
	"fmt"
	"os"
	"sync/atomic"

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

// addListener registers listener i. EPOLLEXCLUSIVE wakes one (or a few)
// loops per connection instead of all; it is ADD-only, so pausing a
// listener is DEL and resuming is ADD. Level-triggered, so a capped accept
// burst is reported again on the next wait.
func (l *Loop) addListener(i int) error {
	if err := l.ctl(unix.EPOLL_CTL_ADD, l.listeners[i].fd, unix.EPOLLIN|unix.EPOLLEXCLUSIVE, 0); err != nil {
		return fmt.Errorf("register listener %s: %w", l.listeners[i].addr, err)
	}
	l.lnActive[i] = true
	return nil
}

func (l *Loop) removeListener(i int) {
	if l.lnActive[i] {
		l.ctl(unix.EPOLL_CTL_DEL, l.listeners[i].fd, 0, 0)
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

func (l *Loop) acceptFrom(i int) {
	ln := l.listeners[i]
	for n := 0; n < l.opt.AcceptBatch; n++ {
		fd, _, err := unix.Accept4(ln.fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if err != nil {
			switch err {
			case unix.EINTR, unix.ECONNABORTED, unix.EPROTO:
				continue
			case unix.EAGAIN:
				return // normal with EPOLLEXCLUSIVE: another loop took it
			case unix.EMFILE, unix.ENFILE, unix.ENOBUFS, unix.ENOMEM:
				// Out of descriptors: the backlog stays readable, so a
				// level-triggered listener would spin. Leave the epoll set
				// and come back after a timed back-off.
				l.removeListener(i)
				l.lnResume[i] = monoNow() + int64(l.opt.AcceptBackoff)
				l.AcceptPauses.Add(1)
				if !l.acceptErrLogged {
					l.acceptErrLogged = true // once per streak, not every back-off
					fmt.Fprintf(os.Stderr, "weaseldb: loop %d: accept on %s: %v; pausing accepts for %v at a time\n", l.id, ln.addr, err, l.opt.AcceptBackoff)
				}
				return
			default:
				fmt.Fprintf(os.Stderr, "weaseldb: loop %d: accept on %s: %v\n", l.id, ln.addr, err)
				return
			}
		}
		l.Accepted.Add(1)
		l.acceptErrLogged = false
		if !ln.unix {
			unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		}
		l.register(fd, ln.unix)
	}
}

// register publishes the connection in the table first and then adds it
// to epoll, so the readiness that ADD reports (once, edge-triggered) finds
// the connection.
func (l *Loop) register(fd int, isUnix bool) *Conn {
	c := &Conn{loop: l, fd: fd, gen: nextGen(), isUnix: isUnix}
	for fd >= len(l.conns) {
		l.conns = append(l.conns, make([]*Conn, max(64, len(l.conns)))...)
	}
	l.conns[fd] = c
	l.nconns++
	l.h.OnOpen(c)
	if err := l.ctl(unix.EPOLL_CTL_ADD, fd, connMask(false), c.gen); err != nil {
		l.closeConn(c)
		return nil
	}
	if l.stopSeen {
		l.beginDrain(c)
	}
	return c
}
