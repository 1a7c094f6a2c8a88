// Package config loads, validates and summarises the weaseldb TOML
// configuration. Every option of the seed's config docs is supported under
// the same snake_case name; unknown keys, wrong types and out-of-range values
// are errors that name the key and the allowed values, and all of them are
// reported at once so a user fixes a config in one pass.
package config

import (
	"fmt"
	"os"
	"strings"
)

// Interface is one listener: a TCP address and port, or a unix socket path.
type Interface struct {
	Type    string // "tcp" or "unix"
	Address string // tcp only: IP address or host name to bind
	Port    int    // tcp only: 0..65535; 0 asks the kernel for an ephemeral port
	Path    string // unix only: socket file path
}

// String renders the listener the way the server logs it.
func (i Interface) String() string {
	if i.Type == InterfaceUnix {
		return "unix:" + i.Path
	}
	return fmt.Sprintf("tcp:%s:%d", i.Address, i.Port)
}

// Interface types.
const (
	InterfaceTCP  = "tcp"
	InterfaceUnix = "unix"
)

// Wait strategy names accepted by commit.pipeline_wait_strategy. They match
// server/pipeline's WaitStrategy.String(); config does not import pipeline so
// that it stays a leaf package.
const (
	WaitIfStageEmpty   = "WaitIfStageEmpty"
	WaitIfUpstreamIdle = "WaitIfUpstreamIdle"
	WaitNever          = "Never"
	// WaitAuto (the default) is WaitIfUpstreamIdle where every pipeline
	// thread has a CPU of its own (commit.pipeline_cpus), WaitIfStageEmpty
	// everywhere else: a spinning stage that shares its core with the loops
	// and the client takes their CPU (docs/weaseldb.md, "Wait strategy").
	WaitAuto = "auto"
)

// WaitStrategies lists the allowed commit.pipeline_wait_strategy values.
var WaitStrategies = []string{WaitAuto, WaitIfStageEmpty, WaitIfUpstreamIdle, WaitNever}

// I/O backends accepted by server.io_backend. They match server/eventloop's
// Backend values.
const (
	IOBackendEpoll   = "epoll"
	IOBackendIOUring = "io_uring"
)

// Listener modes accepted by server.listener.
const (
	ListenerShared    = "shared"    // one socket per interface, every loop on it (EPOLLEXCLUSIVE)
	ListenerReusePort = "reuseport" // one SO_REUSEPORT socket per loop per TCP interface
)

// ListenerModes lists the allowed server.listener values.
var ListenerModes = []string{ListenerShared, ListenerReusePort}

// IOBackends lists the allowed server.io_backend values.
var IOBackends = []string{IOBackendEpoll, IOBackendIOUring}

// ThreadNames is server.thread_names: true, false or "auto".
type ThreadNames string

// The values of server.thread_names.
const (
	ThreadNamesAuto ThreadNames = "auto"
	ThreadNamesOn   ThreadNames = "true"
	ThreadNamesOff  ThreadNames = "false"
)

// LockAll: every loop and stage on a locked, named thread of its own.
func (n ThreadNames) LockAll() bool { return n == ThreadNamesOn }

// Unnamed: no thread is named, even one locked for pinning or io_uring.
func (n ThreadNames) Unnamed() bool { return n == ThreadNamesOff }

// PipelineStages is the number of commit pipeline stages (sequence, resolve,
// persist, release); commit.pipeline_cpus has one list per stage.
const PipelineStages = 4

// ServerConfig is the [server] section.
type ServerConfig struct {
	Interfaces          []Interface
	IOThreads           int
	EventBatchSize      int
	ReadBufferSize      int
	MaxRequestSizeBytes int64
	// IOCPUs pins I/O loop i to IOCPUs[i]; empty means unpinned.
	IOCPUs []int
	// Connection timeouts in seconds (fractions allowed); 0 disables one.
	HeaderTimeoutSeconds float64 // accept, or the end of the previous response, to a complete request head
	BodyTimeoutSeconds   float64 // no byte of an announced request body for this long
	IdleTimeoutSeconds   float64 // a keep-alive connection with nothing in flight and nothing owed
	WriteTimeoutSeconds  float64 // owed bytes of which the peer takes none for this long
	// MaxConnections bounds the open connections; past it a new one is
	// accepted and closed at once. 0: what RLIMIT_NOFILE allows, minus a
	// reserve (see MaxConnectionsFor).
	MaxConnections int
	// IOBackend is the event loops' interface with the kernel: epoll, or
	// io_uring (where unavailable the server says why and uses epoll;
	// docs/io_uring.md has what was measured).
	IOBackend string
	// IOUringPeekNs is how long an io_uring loop with nothing to do looks
	// for completions (non-blocking io_uring_enter) before it blocks in
	// one; 0 (the default): it blocks at once. IOUringRoundBudget is the
	// most completions an io_uring loop handles per turn before it serves
	// its timers and hands its requests on; 0 (the default): every
	// completion ready. Both off by default: docs/io_uring.md has what
	// they were measured to cost and gain.
	IOUringPeekNs      int
	IOUringRoundBudget int
	// AdminAddress, "HOST:PORT", is a listener of its own (plain net/http)
	// serving net/http/pprof under /debug/pprof/ and a copy of /metrics,
	// for looking at a server under load. "" (the default): none. It has
	// no authentication: bind it to loopback or a private network.
	AdminAddress string
	// ThreadNames says which I/O loops and pipeline stages run on OS
	// threads of their own, named io-N, sequence, resolve, persist,
	// release-N, for top -H, ps -L and perf (docs/weaseldb.md, "Thread
	// names"). ThreadNamesAuto (the default) names the threads that are
	// locked anyway (pinned loops and stages, io_uring loops) and runs the
	// rest as goroutines, a stage on the thread of the loop that pushed:
	// where threads share cores, every hand-off between locked goroutines
	// is an OS thread switch, measured at 1.2-1.35x the server's CPU per
	// GET /ok on one core. ThreadNamesOn locks and names every loop and
	// stage; ThreadNamesOff names none (pinned and io_uring loops are
	// still locked: they must be).
	ThreadNames ThreadNames
	// Listener is how the loops share a TCP interface: "shared" (one
	// socket that every loop waits on with EPOLLEXCLUSIVE, which wakes the
	// first waiting loop, so connections opened while the loops are idle
	// pile up on the first ones) or "reuseport" (a socket per loop with
	// SO_REUSEPORT: the kernel spreads connections by a hash of their
	// addresses). Unix sockets are always shared.
	Listener string
}

// WaitStrategy is the wait strategy the pipeline runs with: the key's
// value, or for "auto" the one it resolves to (see WaitAuto).
func (c CommitConfig) WaitStrategy() string {
	if c.PipelineWaitStrategy != WaitAuto {
		return c.PipelineWaitStrategy
	}
	if len(c.PipelineCPUs) > 0 {
		return WaitIfUpstreamIdle
	}
	return WaitIfStageEmpty
}

// CommitConfig is the [commit] section.
type CommitConfig struct {
	MinRequestIDLength         int
	RequestIDRetentionHours    int
	RequestIDRetentionVersions int64
	PipelineWaitStrategy       string
	PipelineReleaseThreads     int
	// PipelineCPUs holds one CPU list per stage; the list of stage s has one
	// CPU per thread of that stage. Empty means unpinned.
	PipelineCPUs [][]int
	// PipelineStageWaits records weaseldb_pipeline_stage_wait_seconds (how
	// long a batch waits before each stage takes it). Off by default: it
	// cost GET /ok 19% more instructions per request (docs/weaseldb.md
	// "Metrics"); off, the histogram is exported at zero.
	PipelineStageWaits bool
	// MaxRequestIDs caps the request ids (and ids banned by a not_found
	// status) remembered within retention, to bound memory. 0 (the
	// default): no cap, the retention limits alone decide, as the seed
	// promises; a cap is an opt-in guard that refuses the commits it can no
	// longer tell from retries.
	MaxRequestIDs int
}

// SubscriptionConfig is the [subscription] section.
type SubscriptionConfig struct {
	MaxBufferSizeBytes       int64
	KeepaliveIntervalSeconds int
	// SlowConsumerGraceSeconds is how long a subscriber may hold more than
	// MaxBufferSizeBytes not yet taken before it is cut.
	SlowConsumerGraceSeconds int
}

// BenchmarkConfig is the [benchmark] section.
type BenchmarkConfig struct {
	OkResolveIterations int
	// OkResolveSpinNs is a busy-wait measured on the clock rather than in
	// loop iterations: a fixed cost per request whatever the core's speed,
	// so a deliberate slowdown (the gate's validation) does not move with a
	// noisy neighbour the way an iteration count does.
	OkResolveSpinNs int64
	// CommitResolveSpinNs is the same busy-wait for every POST /v1/commit,
	// in the resolve stage before its preconditions are checked: it slows
	// the commit path alone, so the gate's power can be measured on its
	// commit scenario (scripts/gate_power.sh). Off (0) by default; no
	// production config has a reason to set it.
	CommitResolveSpinNs int64
	// StatusResolveSpinNs is the same busy-wait for every GET /v1/status,
	// in the resolve stage after its lookup: it slows the status path
	// alone, for the gate's status scenario. Off (0) by default.
	StatusResolveSpinNs int64
	// CommitResolveIterations and StatusResolveIterations are the same
	// two-instruction spin loop as OkResolveIterations, per POST /v1/commit
	// and per GET /v1/status. They cost a fixed number of instructions, so
	// the gate's cost tier (instructions per request under callgrind) can
	// measure a known slowdown of one route; the *_spin_ns knobs spin on the
	// clock, which runs tens of times slower under valgrind and so costs a
	// different number of instructions from run to run. Off (0) by default.
	CommitResolveIterations int
	StatusResolveIterations int
	// OkBodyBytes is the size of GET /ok's JSON body: the default is the
	// plain {"status":"ok"} (15 bytes, the smallest), a larger one pads
	// inside the JSON so that bandwidth-bound shapes can be measured. The
	// body is built once at start, never per request.
	OkBodyBytes int
}

// Config is the whole effective configuration.
type Config struct {
	Server       ServerConfig
	Commit       CommitConfig
	Subscription SubscriptionConfig
	Benchmark    BenchmarkConfig
}

// Default returns the configuration used for every key a file leaves out.
func Default() Config {
	return Config{
		Server: ServerConfig{
			Interfaces:          []Interface{{Type: InterfaceTCP, Address: "127.0.0.1", Port: 8080}},
			IOThreads:           1,
			EventBatchSize:      32,
			ReadBufferSize:      16 << 10,
			MaxRequestSizeBytes: 1 << 20,
			// nginx's client_header_timeout is 60 s, keepalive_timeout 75 s,
			// send_timeout 60 s: ours are tighter for the head, where a
			// silent client holds a descriptor for nothing.
			HeaderTimeoutSeconds: 10,
			BodyTimeoutSeconds:   30,
			IdleTimeoutSeconds:   60,
			WriteTimeoutSeconds:  30,
			IOBackend:            IOBackendEpoll,
			ThreadNames:          ThreadNamesAuto,
			Listener:             ListenerShared,
		},
		Commit: CommitConfig{
			MinRequestIDLength:         20,
			RequestIDRetentionHours:    24,
			RequestIDRetentionVersions: 100_000_000,
			MaxRequestIDs:              0, // no cap
			PipelineWaitStrategy:       WaitAuto,
			PipelineReleaseThreads:     1,
		},
		Subscription: SubscriptionConfig{
			MaxBufferSizeBytes:       10 << 20,
			KeepaliveIntervalSeconds: 30,
			SlowConsumerGraceSeconds: 5,
		},
		Benchmark: BenchmarkConfig{OkResolveIterations: 0, OkBodyBytes: MinOkBodyBytes},
	}
}

// Load reads, parses and validates the TOML file at path.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	cfg, err := Parse(data)
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// FieldError is one problem with one key.
type FieldError struct {
	Key string // dotted key, e.g. "commit.pipeline_release_threads"
	Msg string // what is wrong and what is allowed
}

func (e FieldError) Error() string { return e.Key + ": " + e.Msg }

// Errors is every problem found in a config, in file order then key order.
type Errors []FieldError

func (e Errors) Error() string {
	lines := make([]string, len(e))
	for i, fe := range e {
		lines[i] = fe.Error()
	}
	return strings.Join(lines, "\n")
}

// errorList collects FieldErrors; err returns nil when there are none.
type errorList struct{ errs Errors }

func (l *errorList) add(key, format string, args ...any) {
	l.errs = append(l.errs, FieldError{Key: key, Msg: fmt.Sprintf(format, args...)})
}

func (l *errorList) err() error {
	if len(l.errs) == 0 {
		return nil
	}
	return l.errs
}

// covers reports whether an error already recorded is about key or about a
// key that contains it (server.interfaces[0] covers server.interfaces[0].type).
func (l *errorList) covers(key string) bool {
	for _, fe := range l.errs {
		if key == fe.Key || strings.HasPrefix(key, fe.Key+".") || strings.HasPrefix(key, fe.Key+"[") {
			return true
		}
	}
	return false
}
