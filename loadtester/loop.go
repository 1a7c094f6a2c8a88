package loadtester

import (
	"runtime"
	"time"
	"weaseldb/internal/procstat"

	"golang.org/x/sys/unix"
)

// A network thread's loop (thread.go has the thread and its ownership):
// each turn waits on the thread's engine (engine.go: epoll or io_uring),
// which dispatches what came; then the wake-ups from the connect threads,
// and the read cycle of a readable connection, which reads through the
// connection's transport and hands what it read to the connection's
// protocol (protocol.go).
//
// Who owns what: everything here runs on the loop's locked OS thread and
// touches only what thread.go says is the loop's; the books are written
// under accounts.mu, which loop holds for one batch of events.

// loop runs the thread until stop. It locks its OS thread so the loop
// keeps one thread (an io_uring ring takes submissions from it alone) and
// its CPU accounting means something.
func (t *netThread) loop() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if t.mode.paced() {
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
	if err := t.eng.start(); err != nil {
		// The ring would not enable on this thread (never seen once its
		// setup worked): the thread ends, and its connections with it.
		t.startErr = err
		t.shutdown()
		return
	}
	cpu0, _ := procstat.ThreadCPU()
	wall0 := time.Now()
	defer func() {
		cpu1, _ := procstat.ThreadCPU()
		t.cpu = threadCPU{cpu: cpu1 - cpu0, wall: time.Since(wall0)}
		t.shutdown()
	}()
	nextSweep := t.now() + t.sweepEvery
	for !t.acct.win.finished {
		full := t.eng.wait(t.waitTimeout())
		t.rx.turn(t.base, full)
		t.acct.mu.Lock()
		t.eng.dispatch()
		t.serveReady()
		now := t.now()
		t.mode.turn(now)
		if now >= nextSweep {
			t.sweep(now)
			nextSweep = now + t.sweepEvery
		}
		if now >= t.acct.win.closeAt || t.stopping.Load() {
			t.closeWindow(now)
		}
		t.acct.mu.Unlock()
	}
}

// now is the monotonic time in ns since the run's origin (vDSO, no syscall).
func (t *netThread) now() int64 { return int64(time.Since(t.base)) }

// waitTimeout is how long the next wait may block, in ns: not at all when
// connections are still owed reads (the ready list), else until the
// pacer's next send (open loop), the end of the drain or the sweep
// interval, whichever comes first.
func (t *netThread) waitTimeout() int64 {
	timeout := t.sweepEvery
	if len(t.ready) > 0 {
		return 0
	}
	if wake := t.pace.wakeAt; wake != 0 || t.acct.win.closing {
		now := t.now()
		if wake != 0 {
			timeout = min(timeout, max(wake-now, 0))
		}
		if t.acct.win.closing {
			timeout = min(timeout, max(t.acct.win.drainEnd-now, 0))
		}
	}
	return timeout
}

// onWake clears the wake flag, then takes the inbox (hazard #15: a handoff
// after the clear wakes us again).
func (t *netThread) onWake() {
	var buf [8]byte
	rawRead(t.evfd, buf[:])
	t.wakePending.Store(false)
	t.acct.win.closeAt = t.r.windowEnd.Load() // an interrupt moves the window's end
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
		n, stamp, errno := c.io.read(c, t.rbuf[off:])
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
		t.acct.books.measured.bytesIn += int64(n)
		at := now // when the response arrived: the kernel's stamp (stampedIO), or now
		if stamp > 0 {
			at = min(stamp, now)
		}
		if !c.proto.consume(t, c, t.rbuf[:off+n], at) {
			return
		}
		t.mode.served(c, now)
		// A short read drained the socket (a TLS read returns one record:
		// it reads on until the transport finds the socket empty).
		if off+n < len(t.rbuf) && !c.peerClosed && c.io.shortReadDrains() {
			return
		}
	}
}
