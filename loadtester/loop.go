package loadtester

import (
	"runtime"
	"time"
	"unsafe"
	"weaseldb/internal/procstat"

	"golang.org/x/sys/unix"
)

// A network thread's epoll loop (netloop.go has the thread and its
// ownership): the wait, the dispatch of each event, the wake-ups from
// the connect threads, and the read cycle of a readable connection, which
// reads through the connection's transport and hands what it read to the
// connection's protocol (seam.go).
//
// Who owns what: everything here runs on the loop's locked OS thread and
// touches only what netloop.go says is the loop's; the books are written
// under netThread.mu, which loop holds for one batch of events.

// loop runs the thread until stop. It locks its OS thread so the epoll loop
// keeps one thread and its CPU accounting means something.
func (t *netThread) loop() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if t.pace.on() {
		// Linux stretches a sleeping thread's timeouts (epoll_pwait2's, the
		// lazy reads' nanosleep) by its timer slack, 50 µs by default, to
		// coalesce wake-ups; the pacer chooses its own slack
		// (Config.SendSlack), so the kernel's is cut to 1 ns on this locked
		// thread, and put back before the thread is released.
		if old, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0); err == nil {
			unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
			defer unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(old), 0, 0, 0)
		}
	}
	cpu0, _ := procstat.ThreadCPU()
	wall0 := time.Now()
	defer func() {
		cpu1, _ := procstat.ThreadCPU()
		t.cpu = threadCPU{cpu: cpu1 - cpu0, wall: time.Since(wall0)}
		t.shutdown()
	}()
	nextSweep := t.now() + t.sweepEvery
	for !t.win.finished {
		n := t.wait()
		t.rx.turn(t.base, n == len(t.evs))
		t.mu.Lock()
		for i := range n {
			t.dispatch(&t.evs[i])
		}
		t.serveReady()
		now := t.now()
		if t.pace.scheduling { // closing too: requests due in the window may still wait for a connection
			t.schedule(now)
		}
		if now >= nextSweep {
			t.sweep(now)
			nextSweep = now + t.sweepEvery
		}
		if now >= t.win.closeAt || t.stopping.Load() {
			t.closeWindow(now)
		}
		t.mu.Unlock()
	}
}

// now is the monotonic time in ns since the run's origin (vDSO, no syscall).
func (t *netThread) now() int64 { return int64(time.Since(t.base)) }

// wait returns the next batch of events: at once when connections are
// still owed reads (the ready list), else after blocking until an event,
// the pacer's next send (open loop), the end of the drain or the sweep
// interval, whichever comes first. One epoll wait per turn: a non-blocking
// poll before the blocking one cost an extra syscall every time the client
// was ahead of the server, which is the normal case for a closed-loop
// client. The timeout is epoll_pwait2's, in nanoseconds, so the open loop
// sleeps on its own clock with no timerfd to re-arm and read on every wake
// (two syscalls a wake); where epoll_pwait2 is missing (kernel < 5.11) the
// millisecond epoll_pwait and the pacer's timerfd do the same.
//
// The wait is a raw syscall. The scheduler then keeps this thread's P while
// it sleeps (Run gives the other goroutines their own Ps), and sysmon, which
// otherwise keeps waking to watch a P in a syscall, stays idle: measured
// here, 4000 fewer sysmon wake-ups per second and about 15% less CPU per
// request. A stop-the-world or a preemption signal interrupts the wait with
// EINTR, so the runtime is never kept waiting longer than a signal delivery.
func (t *netThread) wait() int {
	timeout := t.sweepEvery
	if len(t.ready) > 0 {
		timeout = 0
	} else if wake := t.pace.wakeAt; wake != 0 || t.win.closing {
		now := t.now()
		if wake != 0 {
			timeout = min(timeout, max(wake-now, 0))
		}
		if t.win.closing {
			timeout = min(timeout, max(t.win.drainEnd-now, 0))
		}
	}
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

// onWake clears the wake flag, then takes the inbox (hazard #15: a handoff
// after the clear wakes us again).
func (t *netThread) onWake() {
	var buf [8]byte
	rawRead(t.evfd, buf[:])
	t.wakePending.Store(false)
	t.win.closeAt = t.r.windowEnd.Load() // an interrupt moves the window's end
	for _, h := range t.inbox.take() {
		t.adopt(h)
	}
}

// readBudget is the most full reads one connection gets per loop turn, so a
// connection streaming a large body cannot starve the others (hazard #5).
const readBudget = 8

// serveReady reads again from connections that used their budget.
func (t *netThread) serveReady() {
	if len(t.ready) == 0 {
		return
	}
	t.readyScan, t.ready = t.ready, t.readyScan[:0]
	for i, c := range t.readyScan {
		c.onReadyList = false
		if c.state == connActive {
			t.onReadable(c)
		}
		t.readyScan[i] = nil
	}
}

// onReadable reads until EAGAIN or a short read (a later arrival raises a new
// edge), parses every response, and tops the pipeline up after each read.
// After readBudget full reads it queues c on the ready list instead.
func (t *netThread) onReadable(c *conn) {
	for reads := 0; c.state == connActive; reads++ {
		if reads == readBudget {
			if !c.onReadyList {
				c.onReadyList = true
				t.ready = append(t.ready, c)
			}
			return
		}
		off := copy(t.rbuf, c.partial)
		n, stamp, errno := c.io.read(t, c, t.rbuf[off:])
		if errno == unix.EAGAIN {
			return
		}
		now := t.now()
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			t.failConn(c, now, c.io.failure(errno))
			return
		}
		if n == 0 {
			t.onEOF(c, now)
			return
		}
		c.partial = c.partial[:0]
		t.books.measured.bytesIn += int64(n)
		at := now // when the response arrived: the kernel's stamp (stampedIO), or now
		if stamp > 0 {
			at = min(stamp, now)
		}
		if !c.proto.consume(t, c, t.rbuf[:off+n], at) {
			return
		}
		if t.pace.on() {
			t.offerFree(c)
		} else {
			t.topUp(c, now)
		}
		// A short read drained the socket (a TLS read returns one record:
		// it reads on until the transport finds the socket empty).
		if off+n < len(t.rbuf) && !c.peerClosed && c.io.shortReadDrains() {
			return
		}
	}
}
