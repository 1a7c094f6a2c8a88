// The io_uring backend's accepts (backend_uring.go has the ring and its
// turn): a multishot accept per listener, restarted when it ends, paused
// with the epoll loop's back-off when descriptors run out.
//
// Owner: the loop goroutine (backend_uring.go).

package eventloop

import (
	"golang.org/x/sys/unix"

	"weaseldb/internal/uring"
)

// addListener starts a multishot accept on listener i.
func (u *uringBackend) addListener(i int) error {
	u.sqe().PrepAcceptMultishot(u.l.listeners[i].fd, userData(opAccept, 0, i))
	return nil
}

// removeListener cancels listener i's accept.
func (u *uringBackend) removeListener(i int) {
	if !u.closed {
		u.sqe().PrepCancel(userData(opAccept, 0, i), userData(opCancel, 0, 0))
	}
}

// accepted handles an accept completion of listener i, as the epoll
// backend's acceptFrom does for one accept4 call.
func (u *uringBackend) accepted(i int, cqe *uring.CQE) {
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
		l.takeAccepted(int(res), ln)
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
