// Options tune the loops. They are read-only once the loops start.

package eventloop

import "time"

// Options tune the loops. A zero or negative field takes the default of
// DefaultOptions, except the timeouts and MaxConns, where zero means off
// (whether a Sender writes to sockets itself is NewSender's argument, not
// an option of the loops).
type Options struct {
	EventBatchSize int           // events per epoll_wait
	ReadBufferSize int           // bytes per read call
	ReadBudget     int           // bytes read from one connection per turn before others get a go
	AcceptBatch    int           // accepts per listener event before others get a go
	HighWater      int           // owed bytes above which a connection is not read
	MaxInflight    int           // unanswered requests above which a connection is not read
	Linger         time.Duration // after SHUT_WR, how long to wait for the peer's FIN
	AcceptBackoff  time.Duration // pause after EMFILE/ENFILE or an unexpected accept error
	IOCPUs         []int         // pin loop i to IOCPUs[i % len]; empty: no pinning
	// Backend is the loops' interface with the kernel: BackendEpoll (the
	// default) or BackendIOUring, which NewServer replaces with epoll,
	// saying why, where io_uring is unavailable.
	Backend Backend
	// UringPeek is how long an io_uring loop with nothing to do looks for
	// completions before it blocks (uring_round.go); 0: it blocks at once.
	UringPeek time.Duration
	// UringRoundBudget is the most completions an io_uring loop handles
	// per turn (uring_round.go); 0: every completion ready.
	UringRoundBudget int
	// LockThreads locks every loop's goroutine to an OS thread of its own,
	// named io-N (internal/threadname). A pinned or io_uring loop is locked, and
	// named, whatever this says; an unpinned epoll loop costs an OS thread
	// switch where it would otherwise hand its P to a goroutine
	// (docs/weaseldb.md, "Thread names", has what was measured).
	LockThreads bool
	// Unnamed leaves every loop's thread unnamed, locked or not
	// (server.thread_names = false).
	Unnamed bool

	// Connection timeouts (timeouts.go). Unlike the fields above, zero (or
	// negative) turns a timeout off; DefaultOptions leaves them off.
	HeaderTimeout time.Duration // accept, or the end of the previous response, to a complete request head
	BodyTimeout   time.Duration // no byte of an announced request body for this long
	IdleTimeout   time.Duration // a keep-alive connection with nothing in flight and nothing owed
	WriteTimeout  time.Duration // owed bytes of which the peer takes none for this long
	// MaxConns bounds the connections open across all loops of a Server:
	// past it a new connection is accepted and closed at once. 0: no limit.
	MaxConns int
	// Logf hears the loops' notices (accepts paused for lack of
	// descriptors, connections refused at MaxConns), each at most once a
	// second; nil: nobody (a library does not print).
	Logf func(format string, args ...any)
}

// DefaultOptions are the defaults for unset Options fields.
func DefaultOptions() Options {
	return Options{
		EventBatchSize: 64,
		ReadBufferSize: 16 << 10,
		ReadBudget:     256 << 10,
		AcceptBatch:    64,
		HighWater:      1 << 20,
		MaxInflight:    1024,
		Linger:         2 * time.Second,
		AcceptBackoff:  100 * time.Millisecond,
	}
}

func (o *Options) fill() {
	d := DefaultOptions()
	orDefault(&o.EventBatchSize, d.EventBatchSize)
	orDefault(&o.ReadBufferSize, d.ReadBufferSize)
	orDefault(&o.ReadBudget, d.ReadBudget)
	orDefault(&o.AcceptBatch, d.AcceptBatch)
	orDefault(&o.HighWater, d.HighWater)
	orDefault(&o.MaxInflight, d.MaxInflight)
	orDefault(&o.Linger, d.Linger)
	orDefault(&o.AcceptBackoff, d.AcceptBackoff)
	if o.Backend == "" {
		o.Backend = BackendEpoll
	}
}

// orDefault replaces a zero or negative option with its default.
func orDefault[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}
