package loadtester

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The epoll engine (engine.go): an edge-triggered epoll set of the
// thread's eventfd, the open loop's timerfd where epoll_pwait2 is missing,
// and every connection, whose sockets the thread reads and writes itself
// with raw system calls (socket.go). Its wait and dispatch are loop.go's.
//
// Who owns what: the loop's alone, like the rest of a netThread; the
// descriptors and the event batch are netThread's fields (epfd, evs,
// pwait2, timeout), where the tests that drive a thread by hand find them.
type epollEngine struct {
	t *netThread
	n int // events the last wait returned
}

// newEpollEngine creates t's epoll set and registers the wake eventfd (and
// the pacer's timerfd, where the kernel lacks epoll_pwait2).
func newEpollEngine(t *netThread) (*epollEngine, error) {
	var err error
	if t.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, wrapErr("epoll_create1", err)
	}
	t.evs = make([]unix.EpollEvent, eventBatch)
	if err = t.addFd(t.evfd, wakeSlot, 0, unix.EPOLLIN|unix.EPOLLET); err != nil {
		return nil, err
	}
	t.pwait2 = probePwait2(t.epfd)
	if t.r.cfg.OpenLoop() && !t.pwait2 { // a millisecond timeout is too coarse to pace by: a timerfd wakes the loop
		if t.pace.tfd, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC); err != nil {
			return nil, wrapErr("timerfd_create", err)
		}
		if err = t.addFd(t.pace.tfd, timerSlot, 0, unix.EPOLLIN|unix.EPOLLET); err != nil {
			return nil, err
		}
	}
	return &epollEngine{t: t}, nil
}

func (e *epollEngine) start() error { return nil }

func (e *epollEngine) wait(timeout int64) bool {
	e.n = e.t.epollWait(timeout)
	return e.n == len(e.t.evs)
}

func (e *epollEngine) dispatch() {
	t := e.t
	for i := range e.n {
		t.dispatch(&t.evs[i])
	}
}

// add registers c (hazard #3: ADD reports readiness that already exists).
func (e *epollEngine) add(c *conn) error { return e.t.addFd(c.fd, c.slot, c.gen, connInterest) }

func (e *epollEngine) remove(c *conn) {
	unix.EpollCtl(e.t.epfd, unix.EPOLL_CTL_DEL, c.fd, nil)
	unix.Close(c.fd)
}

func (e *epollEngine) read(c *conn, p []byte) (int, int64, unix.Errno) {
	n, errno := rawRead(c.fd, p)
	return n, 0, errno
}

func (e *epollEngine) write(c *conn, p []byte) (int, unix.Errno) { return rawWrite(c.fd, p) }

func (e *epollEngine) close() { e.t.closeFds() }

// wait is one epoll wait on the loop's own timeout, for the tests that
// drive a thread's events by hand.
func (t *netThread) wait() int { return t.epollWait(t.waitTimeout()) }

// epollWait returns the next batch of events, blocking at most timeout
// ns (waitTimeout). One epoll wait per turn: a non-blocking poll before
// the blocking one cost an extra syscall every time the client was ahead
// of the server, which is the normal case for a closed-loop client. The
// timeout is epoll_pwait2's, in nanoseconds, so the open loop sleeps on
// its own clock with no timerfd to re-arm and read on every wake (two
// syscalls a wake); where epoll_pwait2 is missing (kernel < 5.11) the
// millisecond epoll_pwait and the pacer's timerfd do the same.
//
// The wait is a raw syscall. The scheduler then keeps this thread's P while
// it sleeps (Run gives the other goroutines their own Ps), and sysmon, which
// otherwise keeps waking to watch a P in a syscall, stays idle: measured
// here, 4000 fewer sysmon wake-ups per second and about 15% less CPU per
// request. A stop-the-world or a preemption signal interrupts the wait with
// EINTR, so the runtime is never kept waiting longer than a signal delivery.
func (t *netThread) epollWait(timeout int64) int {
	if t.lazySleep(timeout) { // responses wait, stamped; this wait collects them
		timeout = 0
	}
	evs := t.evs
	var n uintptr
	var errno unix.Errno
	if t.pwait2 {
		t.timeout = unix.NsecToTimespec(timeout)
		n, _, errno = unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(t.epfd),
			uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)), uintptr(unsafe.Pointer(&t.timeout)), 0, 0)
	} else {
		if t.pace.tfd >= 0 {
			t.pace.arm(t.pace.wakeAt, t.now())
		}
		ms := (timeout + int64(time.Millisecond) - 1) / int64(time.Millisecond)
		n, _, errno = unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(t.epfd),
			uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)), uintptr(ms), 0, 0)
	}
	if errno != 0 { // EINTR is routine (the runtime's signals): poll again
		return 0
	}
	return int(n)
}

// probePwait2 is havePwait2, replaced by a test to run the timerfd
// fallback on a kernel that has epoll_pwait2.
var probePwait2 = havePwait2

// havePwait2 reports whether the kernel has epoll_pwait2 (Linux 5.11),
// asking it once with a zero timeout on epfd, which has nothing ready yet.
func havePwait2(epfd int) bool {
	var ev [1]unix.EpollEvent
	var zero unix.Timespec
	_, _, errno := unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(epfd),
		uintptr(unsafe.Pointer(&ev[0])), 1, uintptr(unsafe.Pointer(&zero)), 0, 0)
	return errno != unix.ENOSYS
}

func (t *netThread) dispatch(ev *unix.EpollEvent) {
	slot, gen := ev.Fd, ev.Pad
	switch slot {
	case wakeSlot:
		t.onWake()
		return
	case timerSlot:
		var buf [8]byte
		rawRead(t.pace.tfd, buf[:])
		t.pace.armedFor = 0
		return
	}
	if slot < 0 || int(slot) >= len(t.conns) {
		return
	}
	c := t.conns[slot]
	if c == nil || c.gen != gen { // stale event: the slot was reused (hazard #1)
		return
	}
	if c.state == connConnecting {
		t.finishConnect(c)
		if c.state != connActive {
			return
		}
	}
	if ev.Events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		if ev.Events&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			c.peerClosed = true
		}
		t.onReadable(c)
	}
	if c.state == connActive && ev.Events&unix.EPOLLOUT != 0 && (len(c.pending) > 0 || c.io.owes()) {
		t.flush(c)
	}
}
