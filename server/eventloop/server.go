package eventloop

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Server is a set of loops sharing listeners.
type Server struct {
	loops     []*Loop
	listeners []*Listener
	report    func(error)
	failed    chan error // a loop's PanicError, buffered for every loop
	started   bool
	open      atomic.Int64 // connections open across the loops (Options.MaxConns)
}

// NewServer creates n loops, each with every shared listener and its own
// (ListenTCPReusePort) registered, and a handler per loop from newHandler. report (may be nil) hears about what
// goes wrong in a loop: a CPU it could not be pinned to, or a panic (then
// Failed delivers it too).
func NewServer(listeners []*Listener, n int, opt Options, newHandler func(loopID int) Handler, report func(error)) (*Server, error) {
	if n < 1 {
		return nil, fmt.Errorf("eventloop: need at least one loop, got %d", n)
	}
	opt.fill()
	if err := chooseBackend(&opt); err != nil {
		return nil, err
	}
	for _, ln := range listeners {
		if ln.owner >= n {
			return nil, fmt.Errorf("eventloop: listener %s belongs to loop %d of %d", ln.addr, ln.owner, n)
		}
	}
	s := &Server{listeners: listeners, report: report, failed: make(chan error, n)}
	for i := 0; i < n; i++ {
		var mine []*Listener
		for _, ln := range listeners {
			if ln.owner < 0 || ln.owner == i {
				mine = append(mine, ln)
			}
		}
		l, err := newLoop(i, mine, newHandler(i), opt, &s.open, report)
		if err != nil {
			for _, prev := range s.loops {
				prev.closeFds()
			}
			return nil, fmt.Errorf("event loop %d: %w", i, err)
		}
		s.loops = append(s.loops, l)
	}
	return s, nil
}

// Backend is the backend the loops run on (chooseBackend: epoll when
// io_uring was asked for and is unavailable).
func (s *Server) Backend() Backend { return s.loops[0].opt.Backend }

// Loops returns the loops (for per-loop counters).
func (s *Server) Loops() []*Loop { return s.loops }

// Counters are the loops' event counts, summed over the loops. Any
// goroutine; each field is read atomically (the set is not a snapshot).
type Counters struct {
	Accepted     int64           // connections accepted (those closed at once for the limit included)
	Open         int64           // connections open now
	StaleEvents  int64           // events dropped for a generation that no longer matches
	AcceptPauses int64           // listeners paused for descriptor exhaustion or an accept error
	Wakeups      int64           // eventfd wake-ups of a sleeping loop
	ClosedBy     map[Cause]int64 // connections the loops closed on their own, by cause
}

// Counters sums the loops' counters.
func (s *Server) Counters() Counters {
	c := Counters{Open: s.open.Load(), ClosedBy: make(map[Cause]int64, numCauses-1)}
	for _, l := range s.loops {
		c.Accepted += l.Accepted.Load()
		c.StaleEvents += l.StaleEvents.Load()
		c.AcceptPauses += l.AcceptPauses.Load()
		c.Wakeups += l.Wakeups.Load()
		for cause := CauseNone + 1; cause < numCauses; cause++ {
			c.ClosedBy[cause] += l.closedBy[cause].Load()
		}
	}
	return c
}

// Causes lists the causes of a close by the loops (for /metrics labels).
func Causes() []Cause {
	out := make([]Cause, 0, numCauses-1)
	for c := CauseNone + 1; c < numCauses; c++ {
		out = append(out, c)
	}
	return out
}

// Start runs every loop in its own goroutine.
func (s *Server) Start() {
	s.started = true
	for _, l := range s.loops {
		go l.run(s.failed)
	}
}

// Failed delivers the *PanicError of each loop that panicked, once. The
// loop closed its connections before; the server keeps serving on the
// other loops until its owner stops it, which it should: weaseldb fails
// fast (a graceful stop of the rest, then a non-zero exit) rather than
// run short of a loop.
func (s *Server) Failed() <-chan error { return s.failed }

// Stop stops accepting, lets every loop answer and write what it already
// read, and waits until they all exited or timeout passed (then connections
// still open are closed). The listeners are closed (the unix socket file
// removed) once no loop has them registered.
func (s *Server) Stop(timeout time.Duration) error {
	by := monoNow() + int64(timeout)
	for _, l := range s.loops {
		l.stopBy.Store(by)
		l.stopReq.Store(true)
		l.wake()
	}
	var errs []error
	if s.started {
		limit := time.After(timeout + 2*time.Second)
		for _, l := range s.loops {
			select {
			case <-l.done:
				if l.err != nil {
					errs = append(errs, l.err)
				}
			case <-limit:
				errs = append(errs, fmt.Errorf("event loop %d did not stop in time", l.id))
			}
		}
	}
	for _, ln := range s.listeners {
		if err := ln.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Close releases the loops' wake descriptors. Call it after Stop and after
// every Sender stopped (the pipeline joined): a post after Close would
// write to a closed descriptor number.
func (s *Server) Close() {
	for _, l := range s.loops {
		if l.wakeFd >= 0 {
			unix.Close(l.wakeFd)
			l.wakeFd = -1
		}
	}
}
