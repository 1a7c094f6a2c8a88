package loadtester

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"weaseldb/internal/procstat"
)

// Hand-written hot path: each network thread runs its own edge-triggered
// epoll loop over the connections it owns, on a locked OS thread, writing
// pre-formatted requests and parsing responses without allocating.
//
// Who owns what: a netThread's connections, pacer (openloop.go) and window
// (window.go) are its loop's alone; its books (books.go) are shared with the
// collector under netThread.mu, which the loop holds for one batch of events
// at a time; its inbox is filled by the connect threads (connect.go) under
// the inbox's lock and drained by the loop; wakePending and stopping are
// atomics any goroutine may touch. What the loop leaves on exit (its tail,
// service histogram, samples, CPU, per-kind books and whether it kept its
// receive stamps) is read by the collector only after every loop has
// exited.
//
// Hazards handled (numbered as in docs/epoll_hazards.md): the epoll data word carries a slot
// and a generation, so an event for a closed connection whose slot was reused
// is dropped (#1); a connection is put in the table before EPOLL_CTL_ADD on
// the loop thread (#3); reads go on until EAGAIN or a short read, and a
// peer's FIN is read to EOF (#4); the interest mask is registered once and
// never modified (#9); short writes wait for EPOLLOUT (#8); wake-ups are
// coalesced with a flag cleared before the inbox is drained (#15); EINTR from
// epoll_wait is retried.
//
// Accounting (docs/load_tester.md) lives in what the loop already keeps: the
// per-connection ring of send times. A response is charged to the warm-up or
// to the measured window by comparing its ring entry with the window's start;
// nothing new is sent once the window has closed; the timeout sweep looks at
// the head of each ring on the thread's coarse clock. The drain, the count of
// what never finished and the lower bounds are done once, at the window's
// close (window.go), off the per-request path; in rate mode the drain also
// sends the requests due in the window that were still waiting for a
// connection when it closed (openloop.go's schedule, which never sends a
// request due at or after the window's end).

const (
	wakeSlot    = -1 // epoll data of the thread's eventfd
	timerSlot   = -2 // epoll data of the open-loop timerfd
	eventBatch  = 256
	readBufSize = 64 << 10
	// lateSendThreshold: an open-loop send this late while a connection was
	// free means the client could not keep its schedule.
	lateSendThreshold = int64(2 * time.Millisecond)
	connInterest      = unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET
)

type connState uint8

const (
	connConnecting connState = iota
	connActive
	connClosed
)

// conn is one connection, owned by one network thread (loop thread only).
type conn struct {
	fd       int
	slot     int32 // index in the thread's table
	gen      int32 // generation of the slot when this conn took it
	connSlot int   // which of the --concurrency connections this is
	failures int   // consecutive failed attempts of its slot before it (back-off: retryFailures)
	state    connState
	parser   respParser
	tls      *tlsConn // https: reads and writes go through it (tlsconn.go); nil for plaintext
	h2       *h2Conn  // --http2: the responses are frames (h2conn.go); nil for HTTP/1.1

	// Rings over the requests in flight, oldest at head. sendTimes: when
	// each was due (open loop: its intended send time; closed loop: its
	// send). sentAt, open loop only: when it was written, for the service
	// time and --timeout.
	sendTimes []int64
	sentAt    []int64
	kinds     []uint8  // workload: each request's kind (kinds.go)
	seqs      []uint64 // a kind is referred to by {{answered:...}}: each request's {{seq}}
	mask      int
	head      int
	inflight  int
	sent      int
	received  int

	pending         []byte // request bytes the socket has not taken yet
	partial         []byte // an incomplete response head, kept between reads
	connectDeadline int64
	inFreeList      bool // open loop: on the thread's list of connections with room
	onReadyList     bool // used its read budget with bytes maybe left (hazard #5)
	peerClosed      bool // RDHUP/HUP seen: read on to EOF, short reads included
	dirty           bool // open loop: has requests to flush this turn
}

// handoff carries a connection (or a failed attempt) from a connect thread.
type handoff struct {
	fd       int
	connSlot int
	failures int           // consecutive failed attempts for this slot, for back-off
	backoff  time.Duration // how long the slot backed off before this attempt (connect.go)
	err      error         // the attempt failed before reaching the loop
	// https: the connection's TLS state, its handshake's length and
	// whether it resumed a session.
	tls       *tlsConn
	handshake time.Duration
	resumed   bool
}

// netThread is one network thread: its epoll loop and the connections it
// owns. Every field is the loop's alone unless its comment or its type's
// says otherwise (ownership: above).
type netThread struct {
	id    int
	r     *runner
	epfd  int
	evfd  int
	conns []*conn
	gens  []int32
	free  []int32
	rbuf  []byte
	wbuf  []byte // dynamic requests rendered for one write
	batch []byte // static request repeated --pipeline times
	rend  *renderer
	// fast: one kind, the same bytes every time: the closed loop writes
	// --pipeline copies of it from batch, no rendering.
	fast     bool
	kb       []kindBooks // workload: each kind's measured counts (kinds.go; the loop's until it exits)
	kindNext uint64      // closed loop: this thread's sends so far, which pick the next kind
	base     time.Time   // the run's clock origin: times are ns since base
	evs      []unix.EpollEvent

	mu    sync.Mutex // held by the loop for one batch of events, by the collector to take the books
	books books      // guarded by mu (books.go)

	win        window // the measured window and its drain (window.go)
	pace       pacer  // the open-loop schedule (openloop.go); pace.on() is false in the closed loop
	sweepEvery int64
	pwait2     bool          // the kernel has epoll_pwait2: waits time out in ns (else ms, and a timerfd paces)
	rx         rxStamps      // open loop over TCP: responses stamped by the kernel, read on the loop's wakes (rxstamp.go)
	timeout    unix.Timespec // epoll_pwait2's timeout, kept off the stack for the raw syscall

	inbox       inbox
	wakePending atomic.Bool
	stopping    atomic.Bool

	ready     []*conn // connections to read again before the next blocking wait
	readyScan []*conn

	cpu threadCPU // written as the loop exits
}

// threadCPU is a network thread's own CPU time (ThreadCPU) and wall time
// over its loop.
type threadCPU struct{ cpu, wall time.Duration }

// busy is the share of its wall time the thread was on a CPU (0 if unknown).
func (u threadCPU) busy() float64 {
	if u.wall <= 0 {
		return 0
	}
	return u.cpu.Seconds() / u.wall.Seconds()
}

// inbox carries handed-off connections from the connect threads (any
// goroutine puts, under mu) to the loop (which takes them all at once).
type inbox struct {
	mu     sync.Mutex
	list   []handoff // guarded by mu
	closed bool      // guarded by mu: the loop has exited and takes no more
	spare  []handoff // loop only: the list taken last, reused
}

// put queues h; false when the loop has exited (the caller closes the fd).
func (b *inbox) put(h handoff) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.list = append(b.list, h)
	return true
}

// take returns everything queued, swapping lists so neither side allocates.
func (b *inbox) take() []handoff {
	b.mu.Lock()
	b.list, b.spare = b.spare[:0], b.list
	b.mu.Unlock()
	return b.spare
}

// close refuses later handoffs and returns those never taken.
func (b *inbox) close() []handoff {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	left := b.list
	b.list = nil
	return left
}

func newNetThread(r *runner, id int) (*netThread, error) {
	t := &netThread{id: id, r: r, epfd: -1, evfd: -1, base: r.base,
		evs:        make([]unix.EpollEvent, eventBatch),
		rbuf:       make([]byte, readBufSize),
		books:      books{measured: newPhaseStats(), warm: newPhaseStats()},
		win:        window{start: r.mStart, closeAt: r.windowEnd.Load(), drainFor: int64(r.cfg.drain())},
		pace:       pacer{tfd: -1},
		sweepEvery: int64(r.cfg.sweepEvery())}
	var err error
	if t.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, wrapErr("epoll_create1", err)
	}
	if t.evfd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		t.closeFds()
		return nil, wrapErr("eventfd", err)
	}
	if err = t.addFd(t.evfd, wakeSlot, 0, unix.EPOLLIN|unix.EPOLLET); err != nil {
		t.closeFds()
		return nil, err
	}
	t.pwait2 = probePwait2(t.epfd)
	if r.cfg.OpenLoop() {
		if !t.pwait2 { // a millisecond timeout is too coarse to pace by: a timerfd wakes the loop
			if t.pace.tfd, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC); err != nil {
				t.closeFds()
				return nil, wrapErr("timerfd_create", err)
			}
			if err = t.addFd(t.pace.tfd, timerSlot, 0, unix.EPOLLIN|unix.EPOLLET); err != nil {
				t.closeFds()
				return nil, err
			}
		}
		prof, kind := r.cfg.schedule()
		t.pace.init(prof, kind, r.cfg.Seed, r.cfg.NetworkThreads, id, int64(r.cfg.SendSlack), r.cfg.Burst)
		t.rx.on = stampsWanted(&r.cfg)
		t.books.svc = newHistogram()
	}
	dynamic := false
	for _, k := range r.kinds {
		dynamic = dynamic || k.tmpl.dynamic()
	}
	if dynamic {
		t.rend = newRenderer(id, r.cfg.NetworkThreads, len(r.kinds), uint64(r.seed))
	}
	if t.fast = len(r.kinds) == 1 && !dynamic; t.fast {
		for range r.cfg.Pipeline {
			t.batch = append(t.batch, r.tmpl.static...)
		}
	}
	if r.cfg.Workload != nil {
		t.kb = make([]kindBooks, len(r.kinds))
		for i := range t.kb {
			t.kb[i] = newKindBooks(r.cfg.OpenLoop())
		}
	}
	if r.cfg.VegetaMax > 0 {
		t.books.samples = newSampler(max(1, r.cfg.VegetaMax/r.cfg.NetworkThreads))
	}
	if r.cfg.TLS != nil {
		t.books.tls = &tlsBooks{hist: newHistogram()}
	}
	return t, nil
}

func (t *netThread) addFd(fd int, slot, gen int32, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: slot, Pad: gen}
	if err := unix.EpollCtl(t.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return wrapErr("epoll_ctl add", err)
	}
	return nil
}

func (t *netThread) closeFds() {
	for _, fd := range []int{t.pace.tfd, t.evfd, t.epfd} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// handOff queues a connection for this thread; any goroutine may call it.
// It reports false when the thread has stopped (the caller closes the fd).
func (t *netThread) handOff(h handoff) bool {
	if !t.inbox.put(h) {
		return false
	}
	if t.wakePending.CompareAndSwap(false, true) {
		t.wake()
	}
	return true
}

func (t *netThread) wake() {
	one := [8]byte{1}
	unix.Write(t.evfd, one[:])
}

// stop asks the loop to exit; it returns at once.
func (t *netThread) stop() {
	t.stopping.Store(true)
	t.wake()
}

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
		if t.rx.on {
			t.rx.resync(t.base)
			t.rx.full = n == len(t.evs)
		}
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
	if c.state == connActive && ev.Events&unix.EPOLLOUT != 0 && (len(c.pending) > 0 || c.tls != nil && c.tls.owes()) {
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

// adopt puts a handed-off connection in the table, then registers it
// (hazard #3: ADD reports readiness that already exists).
func (t *netThread) adopt(h handoff) {
	t.books.measured.bookBackoff(h.backoff)
	if h.err != nil {
		t.books.measured.errors[connectErrorKind(h.err)]++
		t.sampleError(t.now(), 0, connectErrorKind(h.err))
		t.r.requestConn(h.connSlot, h.failures+1)
		return
	}
	var slot int32
	if n := len(t.free); n > 0 {
		slot = t.free[n-1]
		t.free = t.free[:n-1]
	} else {
		slot = int32(len(t.conns))
		t.conns = append(t.conns, nil)
		t.gens = append(t.gens, 1)
	}
	ring := 1
	for ring < t.r.cfg.Pipeline {
		ring <<= 1
	}
	c := &conn{fd: h.fd, slot: slot, gen: t.gens[slot], connSlot: h.connSlot, failures: h.failures, state: connConnecting,
		sendTimes: make([]int64, ring), mask: ring - 1,
		connectDeadline: t.now() + int64(t.r.cfg.ConnectTimeout)}
	if t.pace.on() {
		c.sentAt = make([]int64, ring)
	}
	if t.kb != nil {
		c.kinds = make([]uint8, ring)
	}
	for _, k := range t.r.kinds {
		if k.referred {
			c.seqs = make([]uint64, ring)
			break
		}
	}
	c.parser.headOnly = t.r.cfg.Method == "HEAD"
	c.parser.keepHead, c.parser.keepBody = t.r.checkNeeds.Header, t.r.checkNeeds.Body
	if t.r.h2req != nil {
		c.h2 = newH2Conn(ring)
	}
	if h.tls != nil {
		c.tls = h.tls
		tb := t.books.tls
		tb.hist.RecordValue(max(1, int64(h.handshake)))
		tb.handshakes++
		if h.resumed {
			tb.resumed++
		}
	}
	if t.rx.on && !t.rx.enable(c.fd) {
		t.rx.on = false
	}
	t.conns[slot] = c
	if err := t.addFd(c.fd, slot, c.gen, connInterest); err != nil {
		t.books.measured.errors[errConnect]++
		t.closeConn(c, true)
	}
}

// finishConnect runs on the first event of a connecting socket.
func (t *netThread) finishConnect(c *conn) {
	soErr, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && soErr != 0 {
		err = unix.Errno(soErr)
	}
	if err != nil {
		kind := connectErrorKind(err)
		t.books.measured.errors[kind]++
		t.sampleError(t.now(), 0, kind)
		t.closeConn(c, true)
		return
	}
	c.state = connActive
	t.books.measured.connsOpened++
	t.books.open++
	if c.h2 != nil {
		t.h2Start(c)
		if c.state != connActive {
			return
		}
	}
	now := t.now()
	if c.tls != nil {
		// The handshake may have read past its end: bytes the server sent
		// right after it (HTTP/2's SETTINGS) can wait in the tls.Conn
		// with the socket empty, where no edge would ever report them.
		t.onReadable(c)
		if c.state != connActive {
			return
		}
	}
	if t.pace.on() {
		// The schedule starts with the first connection, so connect time is
		// not charged as latency; but not once the window has closed: a
		// schedule started then would have nothing due in the window, and
		// the thread's share of it would vanish from every count instead
		// of being dropped (countDropped).
		if !t.pace.scheduling && !t.win.closing && now < t.win.closeAt {
			t.pace.begin(now)
		}
		t.offerFree(c)
		return
	}
	t.topUp(c, now)
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
		var n int
		var stamp int64
		var errno unix.Errno
		switch {
		case c.tls != nil:
			var tlsErr bool
			if n, errno, tlsErr = c.tls.read(t.rbuf[off:], c.peerClosed); tlsErr {
				t.failConn(c, t.now(), errTLS)
				return
			}
		case t.rx.on:
			n, stamp, errno = t.rx.read(c.fd, t.rbuf[off:])
		default:
			n, errno = rawRead(c.fd, t.rbuf[off:])
		}
		if errno == unix.EAGAIN {
			return
		}
		now := t.now()
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			t.failConn(c, now, errnoKind(errno))
			return
		}
		if n == 0 {
			t.onEOF(c, now)
			return
		}
		c.partial = c.partial[:0]
		t.books.measured.bytesIn += int64(n)
		at := now // when the response arrived: the kernel's stamp, or now
		switch {
		case stamp > 0:
			at = min(stamp, now)
			t.rx.stamped = true
		case t.rx.on: // data without a stamp, timed by the loop's clock; a kernel that stamps nothing turns stamps off
			t.rx.on = t.rx.noStamp()
		}
		if !t.consume(c, t.rbuf[:off+n], at) {
			return
		}
		if t.pace.on() {
			t.offerFree(c)
		} else {
			t.topUp(c, now)
		}
		// A short read drained the socket (a TLS read returns one record:
		// it reads on until the transport finds the socket empty).
		if off+n < len(t.rbuf) && !c.peerClosed && c.tls == nil {
			return
		}
	}
}

// consume parses responses from data; false means the connection closed.
func (t *netThread) consume(c *conn, data []byte, now int64) bool {
	if c.h2 != nil {
		return t.consumeH2(c, data, now)
	}
	for len(data) > 0 {
		n, done, err := c.parser.feed(data)
		if err != nil {
			t.failConn(c, now, errParse)
			return false
		}
		data = data[n:]
		if done {
			if c.inflight == 0 { // a response nobody asked for
				t.failConn(c, now, errParse)
				return false
			}
			t.complete(c, now)
			if c.parser.close || t.quotaDone(c) {
				t.retire(c, now)
				return false
			}
			continue
		}
		if n == 0 {
			if len(data) >= maxHeaderBytes {
				t.failConn(c, now, errParse)
				return false
			}
			c.partial = append(c.partial, data...)
			break
		}
	}
	return true
}

// complete records the response at the head of the connection's pipeline,
// in the warm-up's books or the measured window's by when it was due.
func (t *netThread) complete(c *conn, now int64) {
	if t.r.checks != nil && !t.passChecks(c) {
		c.received++ // a response all the same (--requests-per-conn)
		t.loseHead(c, now, errCheck)
		return
	}
	head := c.head
	c.head = (head + 1) & c.mask
	c.inflight--
	t.record(c, head, now, c.parser.status)
}

// passChecks judges the response just read against every --check,
// counting each check's outcome when the request belongs to the measured
// window.
func (t *netThread) passChecks(c *conn) bool {
	b := &t.books
	resp := &b.checkResp
	resp.Status, resp.Header, resp.Body = c.parser.status, c.parser.head, c.parser.body
	measured := c.sendTimes[c.head] >= t.win.start
	if measured && b.checkPass == nil {
		b.checkPass, b.checkFail = make([]int64, len(t.r.checks)), make([]int64, len(t.r.checks))
	}
	ok := true
	for i, ch := range t.r.checks {
		pass := ch.Pass(resp)
		ok = ok && pass
		switch {
		case !measured:
		case pass:
			b.checkPass[i]++
		default:
			b.checkFail[i]++
		}
	}
	return ok
}

// record books ring entry i's response (status) at now.
func (t *netThread) record(c *conn, head int, now int64, status int) {
	start := c.sendTimes[head]
	c.received++
	latency := now - start
	status = min(status, maxStatus)
	var kind uint8
	if c.kinds != nil {
		kind = c.kinds[head]
	}
	if c.seqs != nil && status >= 200 && status < 300 && t.r.kinds[kind].referred {
		t.rend.answered[kind], t.rend.hasAnswered[kind] = c.seqs[head], true
	}
	b := &t.books
	if start < t.win.start {
		b.warm.requests++
		b.warm.status[status]++
		b.warm.hist.RecordValue(latency)
		return
	}
	m := &b.measured
	if err := m.hist.RecordValue(latency); err != nil {
		m.recordErrors++
	}
	m.requests++
	m.status[status]++
	svc := int64(-1)
	if c.sentAt != nil {
		svc = now - c.sentAt[head]
		b.svc.RecordValue(svc)
	}
	if t.kb != nil {
		kb := &t.kb[kind]
		kb.hist.RecordValue(latency)
		kb.answered++
		kb.status[status]++
		if svc >= 0 {
			kb.svc.RecordValue(svc)
		}
	}
	if b.samples != nil {
		b.samples.add(sample{start: start, latency: latency, code: uint16(status), kind: kind})
	}
}

// phase is the books of the phase a request due at due belongs to.
func (t *netThread) phase(due int64) *phaseStats {
	if due < t.win.start {
		return &t.books.warm
	}
	return &t.books.measured
}

func (t *netThread) quotaDone(c *conn) bool {
	q := t.r.cfg.RequestsPerConn
	return q > 0 && c.received >= q
}

// retire closes a connection that finished normally (its quota, or the
// server's Connection: close); requests still in flight were not answered.
func (t *netThread) retire(c *conn, now int64) {
	t.lose(c, now, errEOF)
	t.closeConn(c, false)
}

func (t *netThread) onEOF(c *conn, now int64) {
	truncated := false
	if c.parser.finishAtEOF() && c.inflight > 0 { // a body delimited by the close
		// Over TLS such a body is complete only after the server's
		// close_notify (RFC 9112 §9.8): a bare close may have cut it, and
		// counting it answered would hide a broken server.
		if truncated = c.tls != nil && c.tls.cut; truncated {
			t.loseHead(c, now, errTruncated)
		} else {
			t.complete(c, now)
		}
	}
	t.lose(c, now, errEOF)
	t.closeConn(c, truncated)
}

// failConn closes a broken connection, charging its requests in flight (at
// least one error, so a failure is never silent).
func (t *netThread) failConn(c *conn, now int64, kind errorKind) {
	if c.inflight == 0 {
		t.books.measured.errors[kind]++
		t.sampleError(now, 0, kind)
	}
	t.lose(c, now, kind)
	t.closeConn(c, true)
}

// lose counts every request in flight on c as failed with kind, in the
// books of the phase it was due in.
func (t *netThread) lose(c *conn, now int64, kind errorKind) {
	for c.inflight > 0 {
		t.loseHead(c, now, kind)
	}
}

// loseHead counts the oldest request in flight on c as failed with kind,
// or passes it if it is a stream that already ended (booked then).
func (t *netThread) loseHead(c *conn, now int64, kind errorKind) {
	if c.h2 != nil && c.h2.done[c.head] { // a stream that ended behind an open one: already booked
		c.h2.done[c.head] = false
		c.head = (c.head + 1) & c.mask
		c.inflight--
		return
	}
	start := c.sendTimes[c.head]
	t.phase(start).failedBy[kind]++
	if start >= t.win.start {
		var reqKind uint8
		if c.kinds != nil {
			reqKind = c.kinds[c.head]
			t.kb[reqKind].failed++
		}
		t.sampleRequestError(now, start, kind, reqKind)
	}
	c.head = (c.head + 1) & c.mask
	c.inflight--
}

// closeConn unregisters and closes c and asks for its replacement, after
// a back-off if c failed or never got a response (retryFailures).
func (t *netThread) closeConn(c *conn, failed bool) {
	if c.state == connActive {
		t.books.open--
	}
	c.state = connClosed
	unix.EpollCtl(t.epfd, unix.EPOLL_CTL_DEL, c.fd, nil)
	unix.Close(c.fd)
	t.conns[c.slot] = nil
	t.gens[c.slot]++
	t.free = append(t.free, c.slot)
	// While draining, a connection is still replaced when requests due in
	// the window wait for one (a --requests-per-conn quota, a reset):
	// they are owed a send before the drain ends.
	if !t.stopping.Load() && (!t.win.closing || t.backlog()) {
		t.r.requestConn(c.connSlot, c.retryFailures(failed))
	}
}

// retryFailures is the failure count c's replacement starts from. A
// response (any status) proves that the slot's connect and handshake
// work, so the back-off starts over: none after a normal close, the first
// step after a failure. A connection that never got one adds to its slot's
// count however it ended (a refused connect, a handshake or certificate
// the server rejects on the first read, a close right after accept), so a
// target that refuses every connection sees the back-off grow to its cap;
// so does an HTTP/2 connection whose server's SETTINGS refuse the request
// (h2Settings), answers or not: its replacement would meet the same.
func (c *conn) retryFailures(failed bool) int {
	switch {
	case c.received == 0, c.h2 != nil && c.h2.refused:
		return c.failures + 1
	case failed:
		return 1
	}
	return 0
}

// topUp keeps up to --pipeline requests in flight (closed loop). A
// pipelined connection is refilled once at least half its depth is free, in
// one write: measured against nginx at depth 16, that cut the client's CPU
// per request by about a sixth and raised req/s, since fewer, larger writes
// mean fewer segments for both ends to process (wrk's Lua pipelining refills
// only when all 16 are answered).
func (t *netThread) topUp(c *conn, now int64) {
	if now >= t.win.closeAt { // the window has closed: nothing new is sent
		return
	}
	if c.parser.close { // the response being read ends the connection: never reused
		return
	}
	depth := t.r.cfg.Pipeline
	want := depth - c.inflight
	quotaLeft := math.MaxInt
	if q := t.r.cfg.RequestsPerConn; q > 0 {
		quotaLeft = q - c.sent
		want = min(want, quotaLeft)
	}
	if want <= 0 {
		return
	}
	if c.h2 != nil {
		want = min(want, c.h2.room())
	}
	if refillAt := max(1, depth/2); c.inflight > 0 && want < refillAt && quotaLeft >= refillAt || want <= 0 {
		return
	}
	var out []byte
	if c.h2 != nil {
		t.wbuf = t.appendH2Requests(t.wbuf[:0], c, want)
		out = t.wbuf
	} else if t.fast {
		out = t.batch[:want*len(t.r.tmpl.static)]
	} else {
		t.wbuf = t.wbuf[:0]
		for j := range want {
			kind := t.r.kindOf(t.kindNext)
			t.kindNext++
			var seq uint64
			t.wbuf, seq = t.appendOne(t.wbuf, kind)
			c.setKind((c.head+c.inflight+j)&c.mask, kind, seq)
		}
		out = t.wbuf
	}
	for range want {
		c.sendTimes[(c.head+c.inflight)&c.mask] = now
		c.inflight++
	}
	c.sent += want
	t.phase(now).sent += int64(want)
	t.write(c, out)
}

// write sends out, keeping what the socket does not take for EPOLLOUT.
func (t *netThread) write(c *conn, out []byte) {
	t.books.measured.bytesOut += int64(len(out))
	if c.tls != nil {
		t.writeTLS(c, out)
		return
	}
	if len(c.pending) > 0 {
		c.pending = append(c.pending, out...)
		return
	}
	n, errno := rawWrite(c.fd, out)
	switch {
	case errno == unix.EAGAIN || errno == unix.EINTR:
		n = 0
	case errno != 0:
		t.failConn(c, t.now(), errnoKind(errno))
		return
	}
	if n < len(out) {
		c.pending = append(c.pending[:0], out[n:]...)
	}
}

// flush writes owed bytes after EPOLLOUT or for an open-loop turn.
func (t *netThread) flush(c *conn) {
	if c.tls != nil {
		t.flushTLS(c)
		return
	}
	n, errno := rawWrite(c.fd, c.pending)
	switch {
	case errno == unix.EAGAIN || errno == unix.EINTR:
		return
	case errno != 0:
		t.failConn(c, t.now(), errnoKind(errno))
		return
	}
	rest := copy(c.pending, c.pending[n:])
	c.pending = c.pending[:rest]
}

// sweep enforces the connect timeout and the response timeout. The oldest
// request in flight on a connection is at the head of its ring, so one look
// per connection finds a request past its own deadline (--timeout from its
// own send). A connection cannot skip a response, so it is closed, and the
// requests behind the late one fail with it.
func (t *netThread) sweep(now int64) {
	timeout := int64(t.r.cfg.Timeout)
	for _, c := range t.conns {
		switch {
		case c == nil:
		case c.state == connConnecting && now > c.connectDeadline:
			t.books.measured.errors[errConnectTimeout]++
			t.sampleError(now, 0, errConnectTimeout)
			t.closeConn(c, true)
		case c.state == connActive && c.inflight > 0 && now-c.sentAtOf(c.head) > timeout:
			t.lose(c, now, errTimeout)
			t.closeConn(c, true)
		}
	}
}

// sentAtOf is when ring entry i was written.
func (c *conn) sentAtOf(i int) int64 {
	if c.sentAt != nil {
		return c.sentAt[i]
	}
	return c.sendTimes[i]
}

// shutdown closes every connection and fd; later handoffs are refused.
func (t *netThread) shutdown() {
	for _, h := range t.inbox.close() {
		if h.err == nil {
			unix.Close(h.fd)
		}
	}
	t.mu.Lock()
	for _, c := range t.conns { // books.open keeps the count at the end, for the last interval
		if c != nil {
			unix.Close(c.fd)
		}
	}
	t.conns = nil
	t.mu.Unlock()
	t.closeFds()
}

// appendOne appends one request of kind to dst, with its {{seq}} (0 for
// a kind whose bytes never change).
func (t *netThread) appendOne(dst []byte, kind uint8) ([]byte, uint64) {
	tm := t.r.kinds[kind].tmpl
	if !tm.dynamic() {
		return append(dst, tm.static...), 0
	}
	return t.rend.appendRequest(dst, tm)
}

// setKind notes the kind and {{seq}} of the request in ring entry i.
func (c *conn) setKind(i int, kind uint8, seq uint64) {
	if c.kinds != nil {
		c.kinds[i] = kind
	}
	if c.seqs != nil {
		c.seqs[i] = seq
	}
}

// sampleError keeps a failure of a connection itself, with no request in
// flight, for --vegeta (only what belongs to the measured window).
func (t *netThread) sampleError(now, start int64, kind errorKind) {
	t.sampleRequestError(now, start, kind, 0)
}

// sampleRequestError keeps a failed request of kind reqKind (start: when
// it was due) or, with start 0, a failure of the connection itself, for
// --vegeta; only what belongs to the measured window.
func (t *netThread) sampleRequestError(now, start int64, kind errorKind, reqKind uint8) {
	if t.books.samples == nil {
		return
	}
	if start == 0 {
		if now < t.win.start || now >= t.win.closeAt {
			return
		}
		start = now
	}
	t.books.samples.add(sample{start: start, latency: now - start, errKind: kind + 1, kind: reqKind})
}

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
