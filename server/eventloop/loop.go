// Package eventloop is WeaselDB's I/O layer: event loops, one goroutine
// each, that accept, read, and write connections, with a thread-safe send
// path for responses completed on other goroutines.
//
// Where things are: loop.go (the loop goroutine and its turn), backend.go
// (the seam to the kernel, chosen once per loop) with one file per backend
// behind it (backend_*.go), accept.go, read.go, write.go (flush),
// close.go (drain, linger, close), timers.go (the loop's clock, deadlines
// and wait timeout), wake.go (posts from other goroutines), stop.go,
// conn.go (a connection and its ordering of responses), outqueue.go (its
// output queue), sender.go (the send path for other goroutines),
// options.go, handler.go, listener.go, server.go.
//
// This file: a loop, its backend, and the goroutine that waits on it and
// runs each turn. Ownership: every field of Loop is the loop goroutine's,
// except the atomics (wakePending, stopReq, stopBy, the counters) and what
// postMu guards (posts), which other goroutines use through wake.go; a
// Conn's fields are split the same way (see conn.go).
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
	"weaseldb/internal/threadname"
)

// Loop is one backend instance and the goroutine that waits on it.
type Loop struct {
	id        int
	be        backend       // chosen once, in newLoop (backend.go)
	traits    backendTraits // be's, fixed
	wakeFd    int
	h         Handler
	opt       Options
	listeners []*Listener
	lnActive  []bool  // accepted on by this loop's backend
	lnResume  []int64 // monotonic ns when a paused listener is re-added

	// Loop goroutine only.
	conns           []*Conn // by descriptor number
	nconns          int
	ready           []*Conn
	scratch         []byte
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
	report        func(error)        // hears what goes wrong in the loop (may be nil)
	now           int64              // the loop's clock: read once per turn, after the wait
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
	wfd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	l := &Loop{
		id: id, wakeFd: wfd, h: h, opt: opt, report: report,
		listeners: listeners,
		lnActive:  make([]bool, len(listeners)),
		lnResume:  make([]int64, len(listeners)),
		scratch:   make([]byte, opt.ReadBufferSize),
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
	if l.be, err = newBackend(l); err != nil {
		unix.Close(wfd)
		return nil, err
	}
	l.traits = l.be.traits()
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
	l.be.release()
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

// PanicError is the failure of a loop that panicked. Its connections were
// closed (the peers see the connection end rather than hang) and its
// listeners dropped from its backend; the other loops still serve, but a
// server missing a loop is not the one configured, so its owner should
// stop it (Server.Failed). A loop goroutine ended by runtime.Goexit (a
// handler calling t.FailNow, log.Fatal's cousins in a library) fails the
// same way, with Goexit set: recover sees nothing then, so without it the
// loop would vanish unnoticed.
type PanicError struct {
	Loop   int
	Value  any    // what the loop panicked with (nil for a Goexit)
	Stack  []byte // the loop goroutine's stack at the panic
	Goexit bool   // the goroutine ended by runtime.Goexit, not a panic
}

func (e *PanicError) Error() string {
	if e.Goexit {
		return fmt.Sprintf("event loop %d ended by runtime.Goexit\n%s", e.Loop, e.Stack)
	}
	return fmt.Sprintf("event loop %d panicked: %v\n%s", e.Loop, e.Value, e.Stack)
}

// run is the loop goroutine.
func (l *Loop) run(failed chan<- error) {
	defer close(l.done)
	returned := false // set on the loop's one normal return
	defer func() {
		r := recover()
		if r != nil || !returned {
			// No value and no normal return: runtime.Goexit ended the loop.
			l.err = &PanicError{Loop: l.id, Value: r, Stack: debug.Stack(), Goexit: r == nil}
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
	if l.traits.lockThread || l.opt.LockThreads {
		// A backend that takes submissions from one thread only (a ring)
		// keeps it for the goroutine's life, like a pinned loop's.
		runtime.LockOSThread()
		locked = true
	}
	if locked && !l.opt.Unnamed {
		// A thread of its own: worth a name for top -H and perf. The old
		// name is back before the goroutine (and so the thread) ends.
		restore, err := threadname.Name(fmt.Sprintf("io-%d", l.id))
		if err != nil {
			l.warn(err)
		}
		defer restore()
	}
	if err := l.be.start(); err != nil {
		panic(fmt.Sprintf("%s: %v", l.opt.Backend, err))
	}
	for {
		l.be.wait(l.waitTimeout()) // sets the turn's clock, handles what came
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
			returned = true
			return
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
