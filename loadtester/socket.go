package loadtester

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The plain socket: raw reads and writes, and what their errnos mean.

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
