// Package app wires the server: listeners, event loops, the HTTP/1.1
// handler and the commit pipeline, from a config.Config.
package app

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"time"

	"weaseldb/internal/affinity"
	"weaseldb/server/commit"
	"weaseldb/server/config"
	"weaseldb/server/eventloop"
	"weaseldb/server/metrics"
	"weaseldb/server/pipeline"
	"weaseldb/server/store"
)

// Server is a configured weaseldb server.
type Server struct {
	cfg       config.Config
	Metrics   *metrics.Metrics
	listeners []*eventloop.Listener // one per interface, in config order (Addrs, TCPPort)
	// loopListeners are what the loops serve: listeners, plus with
	// server.listener = "reuseport" every loop's own socket of each TCP
	// interface after the first loop's (which is in listeners).
	loopListeners []*eventloop.Listener
	loops         *eventloop.Server
	commit        *commit.Pipeline[*eventloop.Conn]
	store         *store.Store
	handlers      []*handler // by loop index
	keepalive     time.Duration
	endGrace      time.Duration
	connLimit     ConnectionLimit
	stopped       bool
	yield         bool
	admin         *admin // nil without server.admin_address
}

// Options are knobs for tests and benchmarks that the config file does not
// carry.
type Options struct {
	// DisableDirectWrites makes release threads always hand responses to
	// the loops (the straightforward design) instead of writing themselves.
	DisableDirectWrites bool
	// PipelineSpin is the commit pipeline's spin before a stage parks: 0
	// the default (park at once for WaitIfStageEmpty with yielding loops,
	// the pipeline's default otherwise), negative park at once.
	PipelineSpin time.Duration
	// NoYieldAfterPush keeps a loop running after it pushed a batch instead
	// of yielding its P to the stage goroutines it just woke.
	NoYieldAfterPush bool
	// NoRunToCompletion keeps the stage goroutines' park and wake per batch
	// where the loop that pushes would otherwise run the stages itself
	// (commit.Options.RunToCompletion: unpinned, unlocked WaitIfStageEmpty
	// stages), for comparing the two.
	NoRunToCompletion bool
	// Loop overrides event-loop options (zero fields: defaults).
	Loop eventloop.Options
	// OnLoopError hears about what goes wrong in an event loop or a
	// pipeline stage: a CPU it could not be pinned to, io_uring unavailable,
	// or a panic, which Failed delivers too (nil: nobody; the library does
	// not print, cmd/weaseldb does).
	OnLoopError func(error)
	// Logf hears the server's notices: accepts paused for lack of
	// descriptors, connections refused at max_connections, a
	// max_connections above what the descriptors allow (nil: nobody).
	Logf func(format string, args ...any)
	// SubscriberEndGrace: how long an ended subscription stream may take
	// to deliver its final line before its connection is closed anyway
	// (default DefaultSubscriberEndGrace).
	SubscriberEndGrace time.Duration
}

// New binds every listener (a listener that cannot bind is an error naming
// it; nothing is left open) and builds the loops and the pipeline. Nothing
// runs until Start.
func New(cfg config.Config, opt Options) (*Server, error) {
	strategy, err := pipeline.ParseWaitStrategy(cfg.Commit.WaitStrategy())
	if err != nil {
		return nil, fmt.Errorf("commit.pipeline_wait_strategy: %w", err)
	}
	if err := CheckCPUs(cfg); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, Metrics: metrics.New(), yield: !opt.NoYieldAfterPush,
		store:     store.New(store.OptionsFromConfig(cfg)),
		keepalive: time.Duration(max(1, cfg.Subscription.KeepaliveIntervalSeconds)) * time.Second,
		endGrace:  opt.SubscriberEndGrace,
	}
	if s.endGrace <= 0 {
		s.endGrace = DefaultSubscriberEndGrace
	}
	for _, iface := range cfg.Server.Interfaces {
		if err := s.listen(iface); err != nil {
			s.closeListeners()
			return nil, err
		}
	}
	direct := !opt.DisableDirectWrites
	spin := opt.PipelineSpin
	if spin == 0 && strategy == pipeline.WaitIfStageEmpty && !opt.NoYieldAfterPush {
		// The stages run on the P their producer yields: a stage that spins
		// before parking only delays the next stage, readied on the same P.
		spin = -1
	}
	s.commit, err = commit.New(commit.Options[*eventloop.Conn]{
		WaitStrategy:            strategy,
		ReleaseThreads:          cfg.Commit.PipelineReleaseThreads,
		OkResolveIterations:     cfg.Benchmark.OkResolveIterations,
		OkResolveSpin:           time.Duration(cfg.Benchmark.OkResolveSpinNs),
		CommitResolveSpin:       time.Duration(cfg.Benchmark.CommitResolveSpinNs),
		StatusResolveSpin:       time.Duration(cfg.Benchmark.StatusResolveSpinNs),
		CommitResolveIterations: cfg.Benchmark.CommitResolveIterations,
		StatusResolveIterations: cfg.Benchmark.StatusResolveIterations,
		OkBodyBytes:             cfg.Benchmark.OkBodyBytes,
		Responder:               &responder{direct: direct},
		Metrics:                 s.Metrics,
		SpinBeforePark:          spin,
		StageCPUs:               cfg.Commit.PipelineCPUs,
		StageWaits:              cfg.Commit.PipelineStageWaits,
		LockThreads:             cfg.Server.ThreadNames.LockAll(),
		Unnamed:                 cfg.Server.ThreadNames.Unnamed(),
		Store:                   s.store,
		OnSubscribe: func(c *eventloop.Conn, sub *store.Subscription) {
			s.handlers[c.Loop().ID()].register(c, sub)
		},
		OnPublish: s.notifyPublish,
		OnError:   opt.OnLoopError,
		// The loop that pushed runs the stages where they would run on
		// its P anyway (after its yield), minus the parks and wakes.
		RunToCompletion: !opt.NoYieldAfterPush && !opt.NoRunToCompletion,
	})
	if err != nil {
		s.closeListeners()
		return nil, err
	}
	lo := loopOptions(cfg, opt)
	s.connLimit = connectionLimit(cfg, len(s.loopListeners))
	if s.connLimit.Warning != "" && opt.Logf != nil {
		opt.Logf("warning: %s", s.connLimit.Warning)
	}
	if lo.MaxConns == 0 {
		lo.MaxConns = s.connLimit.Max
	}
	report := opt.OnLoopError
	s.loops, err = eventloop.NewServer(s.loopListeners, cfg.Server.IOThreads, lo, func(int) eventloop.Handler {
		h := newHandler(s)
		s.handlers = append(s.handlers, h)
		return h
	}, report)
	if err != nil {
		s.commit.Close()
		s.closeListeners()
		return nil, err
	}
	for i, l := range s.loops.Loops() {
		s.handlers[i].loop = l
	}
	s.Metrics.RegisterLoopStats(causeNames(), s.loopStats)
	if cfg.Server.AdminAddress != "" {
		if s.admin, err = newAdmin(cfg.Server.AdminAddress, s.Metrics); err != nil {
			s.loops.Close()
			s.commit.Close()
			s.closeListeners()
			return nil, err
		}
	}
	return s, nil
}

// ConnectionLimit is the effective max_connections.
func (s *Server) ConnectionLimit() ConnectionLimit { return s.connLimit }

// Counters are the event loops' counters (accepts, closes by cause, ...).
func (s *Server) Counters() eventloop.Counters { return s.loops.Counters() }

func causeNames() []string {
	var out []string
	for _, c := range eventloop.Causes() {
		out = append(out, c.String())
	}
	return out
}

func (s *Server) loopStats() metrics.LoopStats {
	c := s.loops.Counters()
	st := metrics.LoopStats{StaleEvents: c.StaleEvents, AcceptPauses: c.AcceptPauses, Wakeups: c.Wakeups, ClosedBy: map[string]int64{}}
	for cause, n := range c.ClosedBy {
		st.ClosedBy[cause.String()] = n
	}
	for i, l := range s.loops.Loops() {
		st.Loops = append(st.Loops, metrics.LoopCount{Accepted: l.Accepted.Load(), Requests: s.handlers[i].requests.Load()})
	}
	return st
}

// notifyPublish wakes the loops that stream to subscribers (the persist
// stage calls it after a batch appended to the subscription log).
func (s *Server) notifyPublish() {
	for _, h := range s.handlers {
		h.notifyPublish()
	}
}

// listen binds one interface: a unix socket or a shared TCP socket, or
// with server.listener = "reuseport" one SO_REUSEPORT socket per loop on
// the same port (port 0: the port the first one got).
func (s *Server) listen(iface config.Interface) error {
	var ln *eventloop.Listener
	var err error
	switch {
	case iface.Type == config.InterfaceUnix:
		ln, err = eventloop.ListenUnix(iface.Path)
	case s.cfg.Server.Listener == config.ListenerReusePort:
		ln, err = eventloop.ListenTCPReusePort(iface.Address, iface.Port, 0)
	default:
		ln, err = eventloop.ListenTCP(iface.Address, iface.Port)
	}
	if err != nil {
		return err
	}
	s.listeners = append(s.listeners, ln)
	s.loopListeners = append(s.loopListeners, ln)
	if ln.Owner() < 0 {
		return nil
	}
	for i := 1; i < s.cfg.Server.IOThreads; i++ {
		own, err := eventloop.ListenTCPReusePort(iface.Address, ln.Port(), i)
		if err != nil {
			return fmt.Errorf("loop %d: %w", i, err)
		}
		s.loopListeners = append(s.loopListeners, own)
	}
	return nil
}

func (s *Server) closeListeners() {
	for _, ln := range s.loopListeners {
		ln.Close()
	}
}

// Addrs lists the listeners as "tcp 127.0.0.1:8080" or "unix /path".
func (s *Server) Addrs() []string {
	out := make([]string, len(s.listeners))
	for i, ln := range s.listeners {
		out[i] = ln.Addr()
	}
	return out
}

// TCPPort is the bound port of listener i (0 for a unix socket).
func (s *Server) TCPPort(i int) int { return s.listeners[i].Port() }

// Start runs the event loops.
func (s *Server) Start() {
	s.loops.Start()
	if s.admin != nil {
		s.admin.start()
	}
}

// AdminAddr is the admin listener's bound address ("127.0.0.1:6060"), or ""
// without server.admin_address.
func (s *Server) AdminAddr() string {
	if s.admin == nil {
		return ""
	}
	return s.admin.addr()
}

// Shutdown stops accepting, answers every request already read, writes
// what is owed and closes every connection (force-closing what is left
// after timeout), then stops the pipeline and removes unix socket files.
func (s *Server) Shutdown(timeout time.Duration) error {
	if s.stopped {
		return nil
	}
	s.stopped = true
	if s.admin != nil {
		s.admin.stop()
	}
	err := s.loops.Stop(timeout)
	s.commit.Close()
	s.store.Log.Close()
	s.loops.Close()
	return err
}

// Backend is the event loops' backend: server.io_backend, or epoll where
// io_uring was asked for and is unavailable (OnLoopError heard why).
func (s *Server) Backend() eventloop.Backend { return s.loops.Backend() }

// Failed delivers the error of an event loop that panicked (see
// eventloop.Server.Failed): its connections are closed; the owner should
// Shutdown the rest and exit non-zero, as weaseldb does.
func (s *Server) Failed() <-chan error { return s.loops.Failed() }

// CommittedVersion is the pipeline's committed version.
func (s *Server) CommittedVersion() int64 { return s.commit.CommittedVersion() }

// TuneGOMAXPROCS sets GOMAXPROCS for the configured design and returns the
// value in effect. A GOMAXPROCS environment variable wins.
//
// WaitIfStageEmpty: one P per event loop. A loop that pushed a batch yields
// its P (see handler.OnTurnEnd), and the stage goroutines, which park at
// once instead of spinning, run on it as goroutine switches. A spare P
// would not add parallelism but would cost an OS context switch per batch:
// every goready with an idle P wakes another thread (wakep) that finds
// nothing to do and sleeps again.
//
// WaitIfUpstreamIdle and Never spin, so every stage goroutine needs a P of
// its own besides the loops' (these strategies are meant for dedicated
// cores): io_threads + 3 + release threads.
//
// Either way no P is needed for a loop blocked in epoll_wait: a goroutine
// in a raw syscall keeps its P until sysmon retakes it (20 µs to 10 ms), but
// in this design nothing is left runnable behind a loop that goes to sleep.
//
// Pinned threads (io_cpus, pipeline_cpus) each hold a P whenever they run,
// and a spinning one always: GOMAXPROCS is raised to cover every pinned
// thread plus one for the rest (affinity.GOMAXPROCSFor), even over the
// environment variable, which could otherwise starve a pinned thread.
func TuneGOMAXPROCS(cfg config.Config) int {
	if v, err := strconv.Atoi(os.Getenv("GOMAXPROCS")); err == nil && v > 0 {
		if pinned := pinnedThreads(cfg); pinned > 0 {
			runtime.GOMAXPROCS(affinity.GOMAXPROCSFor(pinned, runtime.GOMAXPROCS(0)))
		}
		return runtime.GOMAXPROCS(0)
	}
	want := max(1, cfg.Server.IOThreads)
	if cfg.Commit.WaitStrategy() != config.WaitIfStageEmpty {
		want += 3 + cfg.Commit.PipelineReleaseThreads
	}
	if pinned := pinnedThreads(cfg); pinned > 0 {
		want = affinity.GOMAXPROCSFor(pinned, want)
	}
	runtime.GOMAXPROCS(want)
	return want
}

// CheckCPUs refuses a config that pins a thread to a CPU this process may
// not use (its sched_getaffinity set, read at start), naming the key and
// the allowed set, so the server fails at start instead of running unpinned.
func CheckCPUs(cfg config.Config) error {
	if pinnedThreads(cfg) == 0 {
		return nil
	}
	allowed, err := affinity.AllowedCPUs()
	if err != nil {
		return err
	}
	check := func(key string, cpus []int) error {
		for i, cpu := range cpus {
			if !slices.Contains(allowed, cpu) {
				return fmt.Errorf("%s[%d]: CPU %d is not available to this process (allowed: %s)",
					key, i, cpu, affinity.FormatCPUList(allowed))
			}
		}
		return nil
	}
	if err := check("server.io_cpus", cfg.Server.IOCPUs); err != nil {
		return err
	}
	for s, cpus := range cfg.Commit.PipelineCPUs {
		if err := check(fmt.Sprintf("commit.pipeline_cpus[%d]", s), cpus); err != nil {
			return err
		}
	}
	return nil
}

// pinnedThreads counts the goroutines the config locks to CPUs.
func pinnedThreads(cfg config.Config) int {
	n := 0
	if len(cfg.Server.IOCPUs) > 0 {
		n += cfg.Server.IOThreads
	}
	threads := []int{1, 1, 1, cfg.Commit.PipelineReleaseThreads}
	for s, cpus := range cfg.Commit.PipelineCPUs {
		if s < len(threads) && len(cpus) > 0 {
			n += threads[s]
		}
	}
	return n
}
