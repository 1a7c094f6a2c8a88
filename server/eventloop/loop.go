// Package eventloop is WeaselDB's I/O layer: edge-triggered epoll loops, one
// goroutine each, that accept, read, and write connections, with a
// thread-safe send path for responses completed on other goroutines.
//
// Where things are: loop.go (the loop goroutine and event dispatch),
// accept.go, read.go, write.go (flush), close.go (drain, linger, close),
// timers.go (the loop's clock, deadlines and epoll timeout), wake.go (posts
// from other goroutines), stop.go, conn.go (a connection and its ordering of
// responses), outqueue.go (its output queue), sender.go (the send path for
// other goroutines), options.go, handler.go, listener.go, server.go.
//
// This file: one epoll instance and the goroutine that waits on it and
// dispatches its events. Ownership: every field of Loop is the loop
// goroutine's, except the atomics (wakePending, stopReq, stopBy, the
// counters) and what postMu guards (posts), which other goroutines use
// through wake.go; a Conn's fields are split the same way (see conn.go).
package eventloop

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"weaseldb/internal/affinity"
)

// Loop is one epoll instance and the goroutine that waits on it.
type Loop struct {
	id        int
	epfd      int
	wakeFd    int
	h         Handler
	opt       Options
	listeners []*Listener
	lnActive  []bool  // registered in this loop's epoll set
	lnResume  []int64 // monotonic ns when a paused listener is re-added

	// Loop goroutine only.
	conns           []*Conn // by descriptor number
	nconns          int
	ready           []*Conn
	events          []unix.EpollEvent
	scratch         []byte
	iov             []unix.Iovec
	stopSeen        bool
	acceptErrLogged bool
	// lateAccept: registering connections taken from the loop's own listener
	// as it stops (stop.go), which drain after their first requests.
	lateAccept    bool
	deadline      int64 // shutdown: force-close after this (monotonic ns); 0: none
	timerAt       int64 // the handler's SetTimer (monotonic ns); 0: none
	drainH        DrainHandler
	timeoutH      TimeoutHandler
	marker        LastResponseMarker // nil: a last response goes unmarked
	ur            *uringLoop         // the io_uring backend; nil: epoll (uring.go)
	report        func(error)        // hears what goes wrong in the loop (may be nil)
	now           int64              // the loop's clock: read once per turn, after epoll_wait
	timeouts      deadlineHeap       // connections by the time to look at their deadlines
	minTimeout    time.Duration      // the smallest enabled connection timeout; 0: none
	limitLoggedAt int64              // when the connection limit was last logged
	acceptErrAt   int64              // when an accept error was last logged

	open *atomic.Int64 // connections open across the Server's loops (MaxConns)

	wakePending atomic.Int32
	postMu      sync.Mutex
	posts       []*Conn
	postsSpare  []*Conn
	stopReq     atomic.Bool
	stopBy      atomic.Int64

	// Counters, summed over the loops by Server.Counters (and /metrics).
	Accepted     atomic.Int64
	StaleEvents  atomic.Int64
	AcceptPauses atomic.Int64
	Wakeups      atomic.Int64
	closedBy     [numCauses]atomic.Int64

	done chan struct{}
	err  error
}

// ID is the loop's index.
func (l *Loop) ID() int { return l.id }

// Conns is the number of open connections (loop goroutine only).
func (l *Loop) Conns() int { return l.nconns }

func newLoop(id int, listeners []*Listener, h Handler, opt Options, open *atomic.Int64, report func(error)) (*Loop, error) {
	epfd := -1
	if opt.Backend != BackendIOUring {
		var err error
		if epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
			return nil, fmt.Errorf("epoll_create1: %w", err)
		}
	}
	wfd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	l := &Loop{
		id: id, epfd: epfd, wakeFd: wfd, h: h, opt: opt, report: report,
		listeners: listeners,
		lnActive:  make([]bool, len(listeners)),
		lnResume:  make([]int64, len(listeners)),
		events:    make([]unix.EpollEvent, opt.EventBatchSize),
		scratch:   make([]byte, opt.ReadBufferSize),
		iov:       make([]unix.Iovec, 0, maxIovecs),
		done:      make(chan struct{}),
		open:      open,
		now:       monoNow(),
	}
	if l.open == nil {
		l.open = new(atomic.Int64)
	}
	l.drainH, _ = h.(DrainHandler)
	l.timeoutH, _ = h.(TimeoutHandler)
	l.marker, _ = h.(LastResponseMarker)
	for _, d := range []time.Duration{opt.HeaderTimeout, opt.BodyTimeout, opt.IdleTimeout, opt.WriteTimeout} {
		if d > 0 && (l.minTimeout == 0 || d < l.minTimeout) {
			l.minTimeout = d
		}
	}
	if opt.Backend == BackendIOUring {
		if l.ur, err = newUringLoop(l); err != nil {
			l.closeFds()
			return nil, fmt.Errorf("io_uring: %w", err)
		}
	} else if err := l.ctl(unix.EPOLL_CTL_ADD, wfd, unix.EPOLLIN|unix.EPOLLET, 0); err != nil {
		l.closeFds()
		return nil, fmt.Errorf("register eventfd: %w", err)
	}
	for i := range listeners {
		if err := l.addListener(i); err != nil {
			l.closeFds()
			return nil, err
		}
	}
	return l, nil
}

func (l *Loop) closeFds() {
	unix.Close(l.wakeFd)
	if l.ur != nil {
		l.ur.closed = true
		l.ur.bufs.Close()
		l.ur.ring.Close()
	} else {
		unix.Close(l.epfd)
	}
}

// logf passes a notice to Options.Logf.
func (l *Loop) logf(format string, args ...any) {
	if l.opt.Logf != nil {
		l.opt.Logf(format, args...)
	}
}

// warn tells the loop's owner about something that went wrong but does
// not stop the loop.
func (l *Loop) warn(err error) {
	if l.report != nil {
		l.report(fmt.Errorf("event loop %d: %w", l.id, err))
	}
}

// ctl is epoll_ctl with (fd, generation) in the data word.
func (l *Loop) ctl(op, fd int, events uint32, gen uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd), Pad: int32(gen)}
	for {
		err := unix.EpollCtl(l.epfd, op, fd, &ev)
		if err != unix.EINTR {
			return err
		}
	}
}

// PanicError is the failure of a loop that panicked. Its connections were
// closed (the peers see the connection end rather than hang) and its
// listeners dropped from its epoll set; the other loops still serve, but a
// server missing a loop is not the one configured, so its owner should
// stop it (Server.Failed).
type PanicError struct {
	Loop  int
	Value any    // what the loop panicked with
	Stack []byte // the loop goroutine's stack at the panic
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("event loop %d panicked: %v\n%s", e.Loop, e.Value, e.Stack)
}

// run is the loop goroutine.
func (l *Loop) run(failed chan<- error) {
	defer close(l.done)
	defer func() {
		if r := recover(); r != nil {
			l.err = &PanicError{Loop: l.id, Value: r, Stack: debug.Stack()}
			l.abort()
			failed <- l.err // buffered for every loop: never blocks
			if l.report != nil {
				l.report(l.err)
			}
		}
	}()
	locked := false
	if len(l.opt.IOCPUs) > 0 {
		// Locked and never unlocked: the pinned thread ends with the goroutine.
		cpu := l.opt.IOCPUs[l.id%len(l.opt.IOCPUs)]
		if err := affinity.PinCurrentThread([]int{cpu}); err != nil {
			l.warn(err)
		} else {
			locked = true
		}
	}
	if l.ur != nil || l.opt.LockThreads {
		// The ring takes submissions from this thread only: locked for
		// the goroutine's life, like a pinned loop's.
		runtime.LockOSThread()
		locked = true
	}
	if locked {
		// A thread of its own: worth a name for top -H and perf. The old
		// name is back before the goroutine (and so the thread) ends.
		restore, err := NameThread(fmt.Sprintf("io-%d", l.id))
		if err != nil {
			l.warn(err)
		}
		defer restore()
	}
	if l.ur != nil {
		if err := l.ur.start(); err != nil {
			panic(fmt.Sprintf("io_uring: %v", err))
		}
	}
	for {
		if l.ur != nil {
			l.ur.wait(l.waitTimeout()) // sets the turn's clock, handles the completions
		} else {
			l.waitEpoll()
		}
		l.serveReady()
		if l.wakePending.Load() != 0 {
			l.drainPosts()
		}
		if l.timerAt != 0 && l.now >= l.timerAt {
			l.timerAt = 0 // fired: the handler re-arms it if it still needs one
		}
		l.h.OnTurnEnd(l)
		l.runTimers()
		if l.stopReq.Load() && !l.stopSeen {
			l.beginStop()
		}
		if l.stopSeen && l.nconns == 0 {
			l.abort()
			return
		}
	}
}

// waitEpoll waits for events and dispatches them.
func (l *Loop) waitEpoll() {
	n, err := unix.EpollWait(l.epfd, l.events, l.waitTimeout())
	for err == unix.EINTR { // the Go runtime's preemption signals: routine
		n, err = unix.EpollWait(l.epfd, l.events, l.waitTimeout())
	}
	if err != nil {
		panic(fmt.Sprintf("epoll_wait: %v", err))
	}
	l.now = monoNow() // the turn's clock: every deadline set in this turn starts here
	for i := 0; i < n; i++ {
		l.dispatch(l.events[i])
		if i&63 == 63 && l.wakePending.Load() != 0 {
			l.drainPosts() // completions do not wait behind a big batch
		}
	}
}

// markLast marks data as its connection's last response, when the
// protocol can (any goroutine: marker is set before the loop starts).
func (l *Loop) markLast(data []byte) []byte {
	if l.marker == nil {
		return data
	}
	return l.marker.MarkLast(data)
}

// dispatch applies one event. The data word holds (fd, generation): an
// event whose generation does not match the connection now at that number
// is stale (the descriptor was closed and reused within one batch) and is
// dropped.
func (l *Loop) dispatch(ev unix.EpollEvent) {
	fd, gen := int(ev.Fd), uint32(ev.Pad)
	if gen == 0 {
		if fd == l.wakeFd {
			l.Wakeups.Add(1)
			var buf [8]byte
			unix.Read(l.wakeFd, buf[:])
			l.drainPosts()
			return
		}
		for i, ln := range l.listeners {
			if ln.fd == fd && l.lnActive[i] {
				l.acceptFrom(i)
			}
		}
		return
	}
	if fd < 0 || fd >= len(l.conns) || l.conns[fd] == nil || l.conns[fd].gen != gen {
		l.StaleEvents.Add(1)
		return
	}
	c := l.conns[fd]
	if ev.Events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) != 0 && c.outArmed {
		l.flushAndProgress(c)
		if c.isGone() {
			return
		}
	}
	if ev.Events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		if ev.Events&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			c.rdhup = true
		}
		l.readConn(c)
	}
}
