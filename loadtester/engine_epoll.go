package loadtester

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The epoll engine (engine.go): an edge-triggered epoll set of the
// thread's eventfd, the open loop's timerfd where epoll_pwait2 is missing,
// and every connection, whose sockets the thread reads and writes itself
// with raw system calls (socket.go). It owns the epoll set and the event
// batch; the thread it serves owns the eventfd and the pacer's timerfd
// (closeFds), which the engine only registers.
//
// Who owns what: the loop's alone, like the rest of a netThread.
type epollEngine struct {
	t       *netThread
	epfd    int
	evs     []unix.EpollEvent // the last wait's events
	n       int               // how many of evs the last wait returned
	pwait2  bool              // the kernel has epoll_pwait2: waits time out in ns (else ms, and a timerfd paces)
	timeout unix.Timespec     // epoll_pwait2's timeout, kept off the stack for the raw syscall
}

// newEpollEngine creates t's epoll set and registers the wake eventfd (and
// the pacer's timerfd, where the kernel lacks epoll_pwait2).
// On an error nothing of the engine's stays open.
func newEpollEngine(t *netThread) (*epollEngine, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, wrapErr("epoll_create1", err)
	}
	e := &epollEngine{t: t, epfd: epfd, evs: make([]unix.EpollEvent, eventBatch)}
	if err = e.register(); err != nil {
		unix.Close(epfd)
		return nil, err
	}
	return e, nil
}

// register adds the thread's eventfd and, where epoll_pwait2 is missing
// and the loop is open, the pacer's timerfd, which it creates.
func (e *epollEngine) register() error {
	t := e.t
	if err := e.addFd(t.evfd, wakeSlot, 0, unix.EPOLLIN|unix.EPOLLET); err != nil {
		return err
	}
	e.pwait2 = probePwait2(e.epfd)
	if !t.r.cfg.OpenLoop() || e.pwait2 {
		return nil
	}
	// A millisecond timeout is too coarse to pace by: a timerfd wakes the loop.
	var err error
	if t.pace.tfd, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC); err != nil {
		return wrapErr("timerfd_create", err)
	}
	return e.addFd(t.pace.tfd, timerSlot, 0, unix.EPOLLIN|unix.EPOLLET)
}

// addFd registers fd with its slot and generation in the epoll data word.
func (e *epollEngine) addFd(fd int, slot, gen int32, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: slot, Pad: gen}
	if err := unix.EpollCtl(e.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return wrapErr("epoll_ctl add", err)
	}
	return nil
}

func (e *epollEngine) start() error { return nil }

func (e *epollEngine) wait(timeout int64) bool {
	e.n = e.epollWait(timeout)
	return e.n == len(e.evs)
}

func (e *epollEngine) dispatch() {
	for i := range e.n {
		e.dispatchEvent(&e.evs[i])
	}
}

// add registers c (hazard #3: ADD reports readiness that already exists).
func (e *epollEngine) add(c *conn) error { return e.addFd(c.fd, c.slot, c.gen, connInterest) }

func (e *epollEngine) remove(c *conn) {
	unix.EpollCtl(e.epfd, unix.EPOLL_CTL_DEL, c.fd, nil)
	unix.Close(c.fd)
}

func (e *epollEngine) read(c *conn, p []byte) (int, int64, unix.Errno) {
	n, errno := rawRead(c.fd, p)
	return n, 0, errno
}

func (e *epollEngine) write(c *conn, p []byte) (int, unix.Errno) { return rawWrite(c.fd, p) }

// close closes the epoll set, then the thread's descriptors it watched.
func (e *epollEngine) close() {
	unix.Close(e.epfd)
	e.t.closeFds()
}

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
func (e *epollEngine) epollWait(timeout int64) int {
	t := e.t
	if e.lazySleep(timeout) { // responses wait, stamped; this wait collects them
		timeout = 0
	}
	evs := e.evs
	var n uintptr
	var errno unix.Errno
	if e.pwait2 {
		e.timeout = unix.NsecToTimespec(timeout)
		n, _, errno = unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(e.epfd),
			uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)), uintptr(unsafe.Pointer(&e.timeout)), 0, 0)
	} else {
		if t.pace.tfd >= 0 {
			t.pace.arm(t.pace.wakeAt, t.now())
		}
		ms := (timeout + int64(time.Millisecond) - 1) / int64(time.Millisecond)
		n, _, errno = unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(e.epfd),
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

// dispatchEvent hands one event to the thread: a wake, the pacer's timer,
// or a connection's readiness.
func (e *epollEngine) dispatchEvent(ev *unix.EpollEvent) {
	t := e.t
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

// lazySleep sleeps for timeout ns without waking for responses, when the
// thread may (rxstamp.go): the next wait then only collects what arrived.
// It reports whether it slept. The io_uring engine defers its reads its
// own way (engine_uring_open.go).
func (e *epollEngine) lazySleep(timeout int64) bool {
	rx := &e.t.rx
	if !rx.on || rx.full || !e.t.mayDeferReads(timeout) {
		return false
	}
	rx.sleep = unix.NsecToTimespec(timeout)
	// EINTR (the runtime's signals) ends the sleep early: the loop just
	// turns once more.
	unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&rx.sleep)), 0, 0)
	return true
}
