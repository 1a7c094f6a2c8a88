// The seam between a loop and the kernel: the one backend a loop runs on,
// chosen once (chooseBackend in NewServer, newBackend in newLoop), and what
// the rest of the package asks of it. epoll (backend_epoll.go) reports
// readiness, and the backend reads and writes itself; io_uring
// (backend_uring.go) reports completions of the receives, sends and
// accepts its ring did. Either way the backend hands input to the shared
// code (consume, afterInput), and the shared code asks it to flush, pause,
// resume and forget connections. These three files alone know which
// backend runs; the rest sees the backend interface and backendTraits.
//
// Owner: the loop goroutine, for the backend and every connIO (a Conn's
// backend state), except the fields a backend documents as under Conn.mu.

package eventloop

import (
	"fmt"
)

// Backend names an event loop's I/O interface with the kernel.
type Backend string

// The backends.
const (
	BackendEpoll   Backend = "epoll"
	BackendIOUring Backend = "io_uring"
)

// backend is what a loop asks of its I/O interface with the kernel. Every
// call is per event, per connection or per turn, never per byte.
type backend interface {
	// traits are fixed for the backend's life: newLoop reads them once.
	traits() backendTraits
	// start runs on the loop's thread before its first wait.
	start() error
	// wait waits for events (at most timeoutMs; -1: until one comes),
	// sets the turn's clock (Loop.now) and handles them.
	wait(timeoutMs int)
	// addListener starts accepting on listener i; removeListener stops.
	addListener(i int) error
	removeListener(i int)
	// arm starts the input of a connection just registered (an error:
	// it cannot be served, the caller closes it).
	arm(c *Conn) error
	// resume serves a connection from the loop's ready list.
	resume(c *Conn)
	// pause stops the input of a connection that just paused.
	pause(c *Conn)
	// discard reads and drops a lingering connection's input until the
	// peer's FIN, then closes it.
	discard(c *Conn)
	// flush writes, or submits, what c owes.
	flush(c *Conn)
	// unwatch forgets a connection being closed, under c.mu, before its
	// descriptor is closed.
	unwatch(c *Conn)
	// close tears the backend down once the loop closed every connection
	// (a stop or a panic).
	close()
	// release frees what the backend holds, for a loop that never ran.
	release()
}

// backendTraits are the differences between the backends that the shared
// code must act on.
type backendTraits struct {
	// lockThread: the loop goroutine holds its OS thread for its life
	// (a ring takes submissions from one thread only).
	lockThread bool
	// asyncSends: a flush submits a send that completes in a later turn,
	// so nothing is written when flush returns, and only the loop sends
	// (a Sender queues and posts rather than write itself).
	asyncSends bool
}

// connIO is a connection's backend state, each backend's in its own part
// (defined in its file).
type connIO struct {
	epollConn
	uringConn
}

// chooseBackend checks the backend asked for: an unknown name is refused,
// and io_uring where it is unavailable is replaced with epoll, saying why.
func chooseBackend(opt *Options) error {
	switch opt.Backend {
	case BackendEpoll:
	case BackendIOUring:
		if err := ProbeIOUring(); err != nil {
			// Disabled by sysctl, refused by a container's seccomp profile,
			// or an old kernel: serve on epoll and say why.
			opt.Backend = BackendEpoll
			if opt.Logf != nil {
				opt.Logf("io_uring unavailable, using epoll: %v", err)
			}
		}
	default:
		return fmt.Errorf("eventloop: unknown backend %q (want %q or %q)", opt.Backend, BackendEpoll, BackendIOUring)
	}
	return nil
}

// newBackend creates the backend of l: the one choice of it in a loop's
// life.
func newBackend(l *Loop) (backend, error) {
	if l.opt.Backend == BackendIOUring {
		u, err := newUringBackend(l)
		if err != nil {
			return nil, fmt.Errorf("io_uring: %w", err)
		}
		return u, nil
	}
	return newEpollBackend(l)
}
