package loadtester

import (
	"golang.org/x/sys/unix"

	"weaseldb/internal/uring"
)

// The engine seam: a network thread's interface with the kernel, chosen
// once when the thread is built (newEngine) and never tested again, as the
// server's loops choose theirs (server/eventloop/backend.go). epoll
// (engine_epoll.go) reports readiness and the thread reads and writes its
// sockets itself; io_uring (engine_uring.go) reports completions of the
// receives and sends its ring did, and a read or write is a copy from or
// into memory the ring owns. Either way the engine hands each connection
// with input to the shared loop (onReadable, finishConnect, onWake), and
// the transports (protocol.go) move their bytes through read and write. The
// accounting, pacer, window, stages, checks and protocols never see which
// engine runs.
//
// Who owns what: an engine is its thread's loop's alone (thread.go).

// IO backends (Config.IOBackend).
const (
	IOBackendEpoll   = "epoll"
	IOBackendIOUring = "io_uring"
)

// defaultIOBackend is DefaultConfig's engine: io_uring, which cost the
// client less CPU per request than epoll in every shape measured against
// both weaseldb and nginx (docs/load_tester.md, "The default engine");
// where the kernel refuses it the run falls back to epoll and says why. A
// test runs the suite on the other one: LOADTESTER_TEST_IO_BACKEND.
var defaultIOBackend = IOBackendIOUring

// ResolveIOBackend is the engine a run asked for asked runs on, and why
// it falls back to epoll ("" when it does not): io_uring where the kernel
// refuses it (kernel.io_uring_disabled, a seccomp profile's EPERM, ENOSYS
// from an old kernel or qemu-user) runs on epoll.
func ResolveIOBackend(asked string) (backend, fallback string) {
	if asked != IOBackendIOUring {
		return IOBackendEpoll, ""
	}
	if err := uring.Probe(); err != nil {
		return IOBackendEpoll, err.Error()
	}
	return IOBackendIOUring, ""
}

// engine is what a network thread's loop asks of the kernel. Every call
// is per turn, per connection or per read or write, never per byte.
type engine interface {
	// start runs on the loop's locked OS thread before its first wait.
	start() error
	// wait submits what the turn queued and blocks until there is input
	// or timeout ns passed (0: does not block); it reports whether it
	// returned a full batch (more is ready).
	wait(timeout int64) (full bool)
	// dispatch handles what the last wait returned, under accounts.mu.
	dispatch()
	// add starts watching a connection just put in the table: its
	// connect's end, then its input.
	add(c *conn) error
	// remove stops watching c and closes its descriptor.
	remove(c *conn)
	// read and write move c's bytes, with a socket read's and write's
	// meaning: n > 0, EAGAIN, EINTR, n == 0 at the end of the stream, or
	// another errno; a read also returns when the bytes arrived, on the
	// run's clock (0: unknown).
	read(c *conn, p []byte) (n int, stamp int64, errno unix.Errno)
	write(c *conn, p []byte) (n int, errno unix.Errno)
	// close releases the engine's descriptors once the loop is done.
	close()
}

// newEngine is t's engine: the one choice of it in the thread's life.
func newEngine(t *netThread, backend string) (engine, error) {
	if backend == IOBackendIOUring {
		return newUringEngine(t)
	}
	return newEpollEngine(t)
}
