package loadtester

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The plain socket: raw reads and writes (the epoll engine's), what their
// errnos mean, and the transport (protocol.go) that moves bytes through the
// thread's engine alone.
//
// Who owns what: a plainIO holds nothing; its connection is its loop's.

// rawRead and rawWrite skip the scheduler's syscall bookkeeping: the sockets
// are non-blocking, so the calls never block.
func rawRead(fd int, p []byte) (int, unix.Errno) {
	if len(p) == 0 {
		return 0, 0
	}
	n, _, errno := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), 0
}

func rawWrite(fd int, p []byte) (int, unix.Errno) {
	if len(p) == 0 {
		return 0, 0
	}
	n, _, errno := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), 0
}

func errnoKind(errno unix.Errno) errorKind {
	switch errno {
	case unix.ECONNRESET, unix.EPIPE, unix.ECONNABORTED:
		return errReset
	case unix.ETIMEDOUT:
		return errTimeout
	}
	return errIO
}

// plainIO is the transport of a plain socket, HTTP/1.1's or h2c's: one
// a thread (transports), holding the thread's engine and events.
type plainIO struct {
	eng engine     // the thread's engine, which moves the bytes
	ev  connEvents // the thread, told of a failed write
}

func (s *plainIO) read(c *conn, p []byte) (int, int64, unix.Errno) {
	return s.eng.read(c, p)
}

func (*plainIO) shortReadDrains() bool              { return true }
func (*plainIO) failure(errno unix.Errno) errorKind { return errnoKind(errno) }
func (*plainIO) owes() bool                         { return false }
func (*plainIO) buffered() bool                     { return false }
func (*plainIO) cut() bool                          { return false }

// write keeps what the socket does not take in c.pending for EPOLLOUT.
func (s *plainIO) write(c *conn, out []byte) {
	if len(c.pending) > 0 {
		c.pending = append(c.pending, out...)
		return
	}
	n, errno := s.eng.write(c, out)
	switch {
	case errno == unix.EAGAIN || errno == unix.EINTR:
		n = 0
	case errno != 0:
		s.ev.writeFailed(c, errnoKind(errno))
		return
	}
	if n < len(out) {
		c.pending = append(c.pending[:0], out[n:]...)
	}
}

// flush writes c.pending after EPOLLOUT or for an open-loop turn.
func (s *plainIO) flush(c *conn) {
	n, errno := s.eng.write(c, c.pending)
	switch {
	case errno == unix.EAGAIN || errno == unix.EINTR:
		return
	case errno != 0:
		s.ev.writeFailed(c, errnoKind(errno))
		return
	}
	rest := copy(c.pending, c.pending[n:])
	c.pending = c.pending[:rest]
}
