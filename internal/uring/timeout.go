package uring

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Timeouts and links: a request that completes at a time, and the flag
// that makes the next request wait for the one before it, so the kernel
// can run a request at a time without the thread awake.

// Timeout flags (sqe.timeout_flags of IORING_OP_TIMEOUT).
const (
	// TimeoutAbs: the timespec is an absolute CLOCK_MONOTONIC time, not a
	// delay from submission.
	TimeoutAbs = 1 << 0
	// TimeoutETimeSuccess (Linux 5.16): an expired timeout completes as a
	// success for its link, so the request linked after it runs when it
	// fires instead of being cancelled; its own Res is still -ETIME.
	TimeoutETimeSuccess = 1 << 5
)

// PrepTimeout completes when ts passes (relative, or absolute on
// CLOCK_MONOTONIC with TimeoutAbs: flags), or once count other requests
// completed (0: only on time): Res -ETIME when it fired, 0 when count
// completions ended it, -ECANCELED when cancelled. The kernel reads ts
// when the SQE is submitted: it must stay valid until then, not longer.
func (s *SQE) PrepTimeout(ts *unix.Timespec, count uint32, flags uint32, userData uint64) {
	s.Opcode, s.Fd, s.UserData = opTimeout, -1, userData
	s.Addr = uint64(uintptr(unsafe.Pointer(ts)))
	s.Len = 1
	s.Off = uint64(count)
	s.OpFlags = flags
}

// Link makes the next SQE handed out run only once this one completed
// successfully (IOSQE_IO_LINK): after a timeout with TimeoutETimeSuccess,
// a send that goes when the timeout fires. A failed link cancels what
// follows it (-ECANCELED).
func (s *SQE) Link() { s.Flags |= sqeIOLink }
