package loadtester

import (
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Hand-written hot path: each network thread runs its own loop over the
// connections it owns, on a locked OS thread, on one engine (engine.go:
// edge-triggered epoll, or io_uring), writing pre-formatted requests and
// parsing responses without allocating. The hazards below are the epoll
// engine's; the io_uring engine's are in engine_uring.go.
//
// Who owns what: a netThread's connections, pacer (openloop.go) and engine
// are its loop's alone; its accounting (accounts.go: the books and the
// window) is shared with the collector under accounts.mu, which the loop
// holds for one batch of events at a time; its inbox is filled by the connect threads (connect.go) under
// the inbox's lock and drained by the loop; wakePending and stopping are
// atomics any goroutine may touch. What the loop leaves on exit (its tail,
// service histogram, samples, CPU, per-kind books and whether it kept its
// receive stamps) is read by the collector only after every loop has
// exited.
//
// Where the rest is: the loop (loop.go), a connection's life (connlife.go),
// its protocol seam (protocol.go: transport and protocol, chosen once at
// adopt), HTTP/1.1 (http1.go), HTTP/2 (h2conn.go, h2send.go, h2headers.go),
// the plain socket (socket.go), receive stamps (rxstamp.go), TLS
// (tlsconn.go), sending (write.go, openloop.go), the accounting
// (accounts.go; booking: record.go).
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

// netThread is one network thread: its loop and the connections it
// owns. Every field is the loop's alone unless its comment or its type's
// says otherwise (ownership: above).
type netThread struct {
	id       int
	r        *runner
	evfd     int // the connect threads' and the collector's wake-up (wake); the engine watches it
	conns    []*conn
	gens     []int32
	free     []int32
	rbuf     []byte
	requests           // what its protocols frame (requests.go)
	base     time.Time // the run's clock origin: times are ns since base
	eng      engine    // the kernel interface, chosen once (engine.go)
	// transports: its plain sockets' transports, holding eng (protocol.go)
	transports transports

	acct accounts // its books, their lock and its view of the window (accounts.go)

	mode       loadMode // what sends the requests (mode.go): &closedLoop, &openLoop or a ramp
	closedLoop          // the closed loop's sends (mode_closed.go)
	openLoop            // the open loop's pacer and sends (mode_open.go); pace.on() is false in the closed loop
	sweepEvery int64
	rx         rxStamps // open loop over TCP: responses stamped by the kernel, read on the loop's wakes (rxstamp.go)

	inbox       inbox
	wakePending atomic.Bool
	stopping    atomic.Bool

	ready     []*conn // connections to read again before the next blocking wait
	readyScan []*conn

	cpu      threadCPU // written as the loop exits
	startErr error     // the engine would not start (written before the loop exits)
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
	t := &netThread{id: id, r: r, evfd: -1, base: r.base,
		rbuf:       make([]byte, readBufSize),
		openLoop:   openLoop{pace: pacer{tfd: -1}},
		sweepEvery: int64(r.cfg.sweepEvery())}
	var err error
	if t.evfd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		return nil, wrapErr("eventfd", err)
	}
	if t.eng, err = newEngine(t, r.ioBackend); err != nil {
		t.closeFds()
		return nil, err
	}
	if r.cfg.OpenLoop() {
		prof, kind := r.cfg.schedule()
		t.pace.init(prof, kind, r.cfg.Seed, r.cfg.NetworkThreads, id, int64(r.cfg.SendSlack), r.cfg.Burst)
		t.rx.on = stampsWanted(&r.cfg) && r.ioBackend != IOBackendIOUring // io_uring stamps each completion as it is reaped
	}
	t.transports.init(t.eng, t, &t.rx, &t.conns)
	t.requests = newRequests(r, id)
	t.acct.init(r, &t.pace, t.rend)
	t.mode = newLoadMode(t)
	return t, nil
}

// closeFds closes the descriptors the thread owns: the wake eventfd and
// the pacer's timerfd (the engine closes its own and then calls this).
func (t *netThread) closeFds() {
	for _, fd := range []int{t.pace.tfd, t.evfd} {
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
