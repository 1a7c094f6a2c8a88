// Package uring is a small io_uring binding: a ring with its submission and
// completion queues mapped into this process, the operations an event loop
// of network connections needs (multishot accept and receive into a
// provided-buffer ring, poll, send, writev, shutdown, close, cancel, nop),
// submit-and-wait with a timeout, and registered files and ring descriptor
// (files.go).
//
// It is hand-written on golang.org/x/sys/unix because the pure-Go io_uring
// packages found (giouring, iouring-go) are unmaintained, and an event loop
// needs only this much of the interface.
//
// Ownership: a Ring is used by one goroutine, which should be locked to its
// OS thread when the ring is created with SetupSingleIssuer (the kernel
// then refuses submissions from any other thread). Nothing here is
// goroutine-safe. The rings and the buffer ring live in memory mapped
// outside the Go heap, so the kernel may write them at any time without
// the garbage collector moving or freeing them.
package uring

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Setup flags (io_uring_setup(2)).
const (
	SetupClamp        = 1 << 4
	SetupRDisabled    = 1 << 6 // created disabled: EnableRings from the thread that will submit
	SetupSubmitAll    = 1 << 7
	SetupCoopTaskrun  = 1 << 8
	SetupSingleIssuer = 1 << 12
	SetupDeferTaskrun = 1 << 13
)

// Features the kernel reports (params.features).
const (
	FeatSingleMmap = 1 << 0
	FeatNoDrop     = 1 << 1
	FeatFastPoll   = 1 << 5
	FeatExtArg     = 1 << 8
)

// Opcodes (the subset used here).
const (
	opNop         = 0
	opWritev      = 2
	opPollAdd     = 6
	opRecvmsg     = 10
	opTimeout     = 11
	opAccept      = 13
	opAsyncCancel = 14
	opClose       = 19
	opSend        = 26
	opRecv        = 27
	opShutdown    = 34
)

// SQE flags.
const (
	sqeIOLink       = 1 << 2
	sqeBufferSelect = 1 << 5
)

// CQE flags.
const (
	// CQEFBuffer: the completion used a provided buffer, whose id is
	// flags >> 16.
	CQEFBuffer = 1 << 0
	// CQEFMore: a multishot request stays armed and will post more.
	CQEFMore = 1 << 1
)

const (
	acceptMultishot = 1 << 0 // sqe.ioprio of IORING_OP_ACCEPT
	recvMultishot   = 1 << 1 // sqe.ioprio of IORING_OP_RECV
	pollAddMulti    = 1 << 0 // sqe.len of IORING_OP_POLL_ADD

	cancelAll = 1 << 0 // sqe.op_flags of IORING_OP_ASYNC_CANCEL
	cancelFd  = 1 << 1

	enterGetEvents = 1 << 0
	enterExtArg    = 1 << 3

	offSQRing = 0
	offCQRing = 0x8000000
	offSQEs   = 0x10000000

	registerEnableRings = 12
	registerPbufRing    = 22
	unregisterPbufRing  = 23
)

// params is struct io_uring_params.
type params struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqOffsets
	cqOff                                                                  cqOffsets
}

type sqOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

// SQE is struct io_uring_sqe (64 bytes).
type SQE struct {
	Opcode      uint8
	Flags       uint8
	Ioprio      uint16
	Fd          int32
	Off         uint64
	Addr        uint64
	Len         uint32
	OpFlags     uint32
	UserData    uint64
	BufIndex    uint16
	Personality uint16
	FileIndex   int32
	Addr3       uint64
	pad         uint64
}

// CQE is struct io_uring_cqe (16 bytes).
type CQE struct {
	UserData uint64
	Res      int32
	Flags    uint32
}

// BufferID is the provided buffer a completion filled (valid when
// Flags&CQEFBuffer != 0).
func (c *CQE) BufferID() uint16 { return uint16(c.Flags >> 16) }

// More reports whether a multishot request is still armed.
func (c *CQE) More() bool { return c.Flags&CQEFMore != 0 }

// Ring is one io_uring instance.
type Ring struct {
	fd       int
	flags    uint32
	features uint32

	sqMem, cqMem, sqeMem []byte
	sqHead, sqTail       *uint32
	sqMask, sqEntries    uint32
	sqArray              []uint32
	sqes                 []SQE
	sqLocalTail          uint32 // SQEs handed out, not yet published

	cqHead, cqTail *uint32
	cqMask         uint32
	cqes           []CQE

	// rawEnter: io_uring_enter is a raw system call (SetRawEnter).
	rawEnter bool
	// enterFd and enterFlags are what io_uring_enter names the ring by:
	// its descriptor, or its registration with enterRegisteredRng
	// (RegisterRingFd).
	enterFd    int
	enterFlags uint32
}

// SetRawEnter makes every io_uring_enter a raw system call, without the
// scheduler's system-call bookkeeping: the calling goroutine keeps its P
// while the kernel waits, and sysmon does not keep waking to watch it (the
// load tester's epoll loop measured about 15% less CPU per request so).
// Only for a goroutine locked to its thread, with the other goroutines
// given Ps of their own; a signal (a preemption, a stop-the-world) ends the
// wait with EINTR, so the runtime waits at most a signal's delivery.
func (r *Ring) SetRawEnter(on bool) { r.rawEnter = on }

// ErrUnsupported wraps why the kernel would not give a ring: io_uring
// disabled by sysctl (kernel.io_uring_disabled), refused by a seccomp
// profile (as container runtimes do by default), or a kernel too old.
var ErrUnsupported = errors.New("io_uring unavailable")

// New sets up a ring of at least entries submission slots (a power of two
// is used) and twice as many completion slots. flags are Setup* values;
// when the kernel refuses SetupDeferTaskrun or SetupSingleIssuer (before
// 6.1 and 6.0), New retries without them.
func New(entries uint32, flags uint32) (*Ring, error) {
	var p params
	var fd int
	var err error
	prev := ^uint32(0)
	for _, f := range []uint32{flags, flags &^ SetupDeferTaskrun, flags &^ (SetupDeferTaskrun | SetupSingleIssuer)} {
		if f == prev {
			continue
		}
		prev = f
		p = params{flags: f | SetupClamp}
		if fd, err = setup(entries, &p); err != unix.EINVAL {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: io_uring_setup: %w", ErrUnsupported, err)
	}
	r := &Ring{fd: fd, flags: p.flags, features: p.features, enterFd: fd}
	if err := r.mapRings(&p); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return r, nil
}

func setup(entries uint32, p *params) (int, error) {
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(p)), 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

func (r *Ring) mapRings(p *params) error {
	sqSize := int(p.sqOff.array) + int(p.sqEntries)*4
	cqSize := int(p.cqOff.cqes) + int(p.cqEntries)*int(unsafe.Sizeof(CQE{}))
	if p.features&FeatSingleMmap == 0 {
		return fmt.Errorf("%w: the kernel lacks IORING_FEAT_SINGLE_MMAP", ErrUnsupported)
	}
	size := max(sqSize, cqSize)
	mem, err := unix.Mmap(r.fd, offSQRing, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return fmt.Errorf("mmap the rings: %w", err)
	}
	r.sqMem, r.cqMem = mem, mem
	sqes, err := unix.Mmap(r.fd, offSQEs, int(p.sqEntries)*int(unsafe.Sizeof(SQE{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		unix.Munmap(mem)
		return fmt.Errorf("mmap the SQEs: %w", err)
	}
	r.sqeMem = sqes
	base := unsafe.Pointer(&mem[0])
	r.sqHead = (*uint32)(unsafe.Add(base, p.sqOff.head))
	r.sqTail = (*uint32)(unsafe.Add(base, p.sqOff.tail))
	r.sqMask = *(*uint32)(unsafe.Add(base, p.sqOff.ringMask))
	r.sqEntries = *(*uint32)(unsafe.Add(base, p.sqOff.ringEntries))
	r.sqArray = unsafe.Slice((*uint32)(unsafe.Add(base, p.sqOff.array)), p.sqEntries)
	r.sqes = unsafe.Slice((*SQE)(unsafe.Pointer(&sqes[0])), p.sqEntries)
	r.cqHead = (*uint32)(unsafe.Add(base, p.cqOff.head))
	r.cqTail = (*uint32)(unsafe.Add(base, p.cqOff.tail))
	r.cqMask = *(*uint32)(unsafe.Add(base, p.cqOff.ringMask))
	r.cqes = unsafe.Slice((*CQE)(unsafe.Add(base, p.cqOff.cqes)), p.cqEntries)
	r.sqLocalTail = atomic.LoadUint32(r.sqTail)
	return nil
}

// EnableRings enables a ring created with SetupRDisabled. With
// SetupSingleIssuer the calling thread becomes the one that may submit:
// create the ring anywhere, enable it on the loop's locked thread.
func (r *Ring) EnableRings() error {
	_, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerEnableRings, 0, 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("enable the ring: %w", errno)
	}
	return nil
}

// Flags are the setup flags the kernel accepted.
func (r *Ring) Flags() uint32 { return r.flags }

// Features are the kernel's IORING_FEAT_* bits.
func (r *Ring) Features() uint32 { return r.features }

// Fd is the ring's descriptor.
func (r *Ring) Fd() int { return r.fd }

// Close unmaps the rings and closes the descriptor; the kernel cancels
// what is still in flight. A ring whose descriptor was registered
// (RegisterRingFd) is closed from the registering thread.
func (r *Ring) Close() error {
	if r.fd < 0 {
		return nil
	}
	r.unregisterRingFd() // an error leaves the registration to the thread's exit
	unix.Munmap(r.sqeMem)
	unix.Munmap(r.sqMem)
	err := unix.Close(r.fd)
	r.fd = -1
	return err
}

// GetSQE returns a cleared submission slot, or nil when every slot is
// taken by SQEs not yet submitted (call Submit and try again).
func (r *Ring) GetSQE() *SQE {
	head := atomic.LoadUint32(r.sqHead)
	if r.sqLocalTail-head >= r.sqEntries {
		return nil
	}
	i := r.sqLocalTail & r.sqMask
	r.sqArray[i] = i
	r.sqLocalTail++
	s := &r.sqes[i]
	*s = SQE{}
	return s
}

// Pending is the number of SQEs handed out and not yet submitted.
func (r *Ring) Pending() uint32 { return r.sqLocalTail - atomic.LoadUint32(r.sqTail) }

// Submit publishes the SQEs handed out and submits them without waiting
// (it also runs completion work the kernel deferred to this thread, so
// completions that are due show up).
func (r *Ring) Submit() (int, error) { return r.enter(0, enterGetEvents, -1) }

// SubmitAndWait publishes and submits the SQEs handed out, then waits
// until at least one completion is ready or timeout passed (timeout < 0:
// no limit; 0: do not wait). It returns the number of SQEs the kernel
// took. EINTR and ETIME are not errors: the caller looks at what
// completed and calls again.
func (r *Ring) SubmitAndWait(timeout time.Duration) (int, error) {
	if timeout == 0 {
		return r.Submit()
	}
	return r.enter(1, enterGetEvents, timeout)
}

// SubmitAndWaitN is SubmitAndWait waiting for at least minComplete
// completions ready (the ones already in the queue count): a caller that
// submits requests that complete at once (sends into a socket with room)
// asks for those plus one, so their completions alone do not end the wait.
func (r *Ring) SubmitAndWaitN(minComplete uint32, timeout time.Duration) (int, error) {
	if timeout == 0 || minComplete == 0 {
		return r.Submit()
	}
	return r.enter(minComplete, enterGetEvents, timeout)
}

// getEventsArg is struct io_uring_getevents_arg.
type getEventsArg struct {
	sigmask   uint64
	sigmaskSz uint32
	minWaitUs uint32
	ts        uint64
}

func (r *Ring) enter(minComplete uint32, flags uint32, timeout time.Duration) (int, error) {
	toSubmit := r.sqLocalTail - atomic.LoadUint32(r.sqTail)
	atomic.StoreUint32(r.sqTail, r.sqLocalTail) // release: the SQEs are written
	var argp unsafe.Pointer
	var argsz uintptr
	var ts unix.Timespec
	var arg getEventsArg
	if flags&enterGetEvents != 0 && timeout > 0 {
		ts = unix.NsecToTimespec(int64(timeout))
		arg.ts = uint64(uintptr(unsafe.Pointer(&ts)))
		argp, argsz = unsafe.Pointer(&arg), unsafe.Sizeof(arg)
		flags |= enterExtArg
	}
	var n uintptr
	var errno unix.Errno
	if r.rawEnter {
		n, _, errno = unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.enterFd), uintptr(toSubmit), uintptr(minComplete),
			uintptr(flags|r.enterFlags), uintptr(argp), argsz)
	} else {
		n, _, errno = unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.enterFd), uintptr(toSubmit), uintptr(minComplete),
			uintptr(flags|r.enterFlags), uintptr(argp), argsz)
	}
	if errno != 0 {
		if errno == unix.EINTR || errno == unix.ETIME || errno == unix.EBUSY {
			return int(n), nil
		}
		return int(n), fmt.Errorf("io_uring_enter: %w", errno)
	}
	return int(n), nil
}

// Completions calls f for every completion ready now, in order, then
// marks them seen. f must not keep the pointer.
func (r *Ring) Completions(f func(*CQE)) int {
	head := atomic.LoadUint32(r.cqHead)
	tail := atomic.LoadUint32(r.cqTail) // acquire: the CQEs up to tail are written
	n := 0
	for ; head != tail; head++ {
		f(&r.cqes[head&r.cqMask])
		n++
	}
	atomic.StoreUint32(r.cqHead, head) // release: the slots may be reused
	return n
}

// CompletionsUpTo is Completions for at most max completions (max <= 0:
// every one); the rest stay in the queue for the next call.
func (r *Ring) CompletionsUpTo(max int, f func(*CQE)) int {
	if max <= 0 {
		return r.Completions(f)
	}
	head := atomic.LoadUint32(r.cqHead)
	tail := atomic.LoadUint32(r.cqTail) // acquire: the CQEs up to tail are written
	if tail-head > uint32(max) {
		tail = head + uint32(max)
	}
	n := 0
	for ; head != tail; head++ {
		f(&r.cqes[head&r.cqMask])
		n++
	}
	atomic.StoreUint32(r.cqHead, head) // release: the slots may be reused
	return n
}

// Ready is the number of completions in the queue, not yet seen.
func (r *Ring) Ready() uint32 { return atomic.LoadUint32(r.cqTail) - atomic.LoadUint32(r.cqHead) }

// PrepNop prepares a no-op.
func (s *SQE) PrepNop(userData uint64) {
	s.Opcode, s.UserData = opNop, userData
}

// PrepAcceptMultishot accepts connections on the listening fd until
// cancelled, one completion each (Res: the new descriptor, created with
// SOCK_NONBLOCK|SOCK_CLOEXEC).
func (s *SQE) PrepAcceptMultishot(fd int, userData uint64) {
	s.Opcode, s.Fd, s.UserData = opAccept, int32(fd), userData
	s.Ioprio = acceptMultishot
	s.OpFlags = unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC
}

// PrepRecvMultishot receives on fd into buffers of the provided-buffer
// group bgid until cancelled, the buffer group runs dry, or the peer ends
// its side (Res 0).
func (s *SQE) PrepRecvMultishot(fd int, bgid uint16, userData uint64) {
	s.Opcode, s.Fd, s.UserData = opRecv, int32(fd), userData
	s.Ioprio = recvMultishot
	s.Flags = sqeBufferSelect
	s.BufIndex = bgid
}

// PrepPollMultishot posts a completion each time fd becomes ready for
// events (a poll mask such as unix.POLLIN), until cancelled.
func (s *SQE) PrepPollMultishot(fd int, events uint32, userData uint64) {
	s.Opcode, s.Fd, s.UserData = opPollAdd, int32(fd), userData
	s.OpFlags = events
	s.Len = pollAddMulti
}

// PrepPollOnce posts one completion when fd becomes ready for events.
func (s *SQE) PrepPollOnce(fd int, events uint32, userData uint64) {
	s.Opcode, s.Fd, s.UserData = opPollAdd, int32(fd), userData
	s.OpFlags = events
}

// PrepSend sends len(buf) bytes from buf, which must stay valid and
// unmoved until the completion (memory outside the Go heap, or pinned).
func (s *SQE) PrepSend(fd int, buf []byte, userData uint64) {
	s.Opcode, s.Fd, s.UserData = opSend, int32(fd), userData
	if len(buf) > 0 {
		s.Addr = uint64(uintptr(unsafe.Pointer(&buf[0])))
	}
	s.Len = uint32(len(buf))
	s.OpFlags = unix.MSG_NOSIGNAL
}

// PrepWritev writes the iovecs, which (and the memory they point to) must
// stay valid and unmoved until the completion.
func (s *SQE) PrepWritev(fd int, iov []unix.Iovec, userData uint64) {
	s.Opcode, s.Fd, s.UserData = opWritev, int32(fd), userData
	if len(iov) > 0 {
		s.Addr = uint64(uintptr(unsafe.Pointer(&iov[0])))
	}
	s.Len = uint32(len(iov))
}

// PrepShutdown is shutdown(fd, how).
func (s *SQE) PrepShutdown(fd int, how int, userData uint64) {
	s.Opcode, s.Fd, s.UserData = opShutdown, int32(fd), userData
	s.Len = uint32(how)
}

// PrepClose closes fd.
func (s *SQE) PrepClose(fd int, userData uint64) {
	s.Opcode, s.Fd, s.UserData = opClose, int32(fd), userData
}

// PrepCancelFd cancels every request in flight on fd (each completes with
// -ECANCELED); its own completion's Res is how many it found, or -ENOENT.
func (s *SQE) PrepCancelFd(fd int, userData uint64) {
	s.Opcode, s.Fd, s.UserData = opAsyncCancel, int32(fd), userData
	s.OpFlags = cancelAll | cancelFd
}

// PrepCancel cancels the request submitted with user data target.
func (s *SQE) PrepCancel(target uint64, userData uint64) {
	s.Opcode, s.Addr, s.UserData = opAsyncCancel, target, userData
	s.Fd = -1
}
