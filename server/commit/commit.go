// Package commit is the server's 4-stage commit pipeline, after the seed's:
// sequence (versions), resolve (preconditions; GET /ok spends its configured
// spin work here; never blocks), persist (builds the responses) and release
// (its threads split each batch by index and send every response to its
// connection). It runs on server/pipeline with topology {1, 1, 1, release}.
package commit

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"weaseldb/internal/affinity"
	"weaseldb/internal/monoclock"
	"weaseldb/internal/threadname"
	"weaseldb/server/api"
	"weaseldb/server/cpuwork"
	"weaseldb/server/metrics"
	"weaseldb/server/pipeline"
	"weaseldb/server/store"
)

// Kind says what an entry asks for. The data routes' entries carry their
// parsed request in Data.
type Kind uint8

// Entry kinds. The zero value is kindNone, so a zeroed Entry (a slot
// cleared by mistake, a forgotten field) passes every stage as a no-op
// instead of meaning anything, least of all shutdown.
const (
	kindNone            Kind = iota // no request: every stage skips it
	KindShutdown                    // one per release thread ends the pipeline
	KindOK                          // GET /ok: spin work in resolve, {"status":"ok"}
	KindVersion                     // GET /v1/version: the persisted version
	KindCommit                      // POST /v1/commit: Data.Commit
	KindStatus                      // GET /v1/status: Data.Status
	KindSubscribe                   // GET /v1/subscribe: Data.FromVersion
	KindRetentionPut                // PUT /v1/retention/{id}: Data.PolicyID, Data.Policy
	KindRetentionGet                // GET /v1/retention/{id}
	KindRetentionDelete             // DELETE /v1/retention/{id}
	KindRetentionList               // GET /v1/retention
)

// Data is the parsed request of a data route and what the stages decided
// about it. /ok and /v1/version carry none, so their ring slots stay small
// and their path allocates nothing.
type Data struct {
	Commit      api.CommitRequest // KindCommit, parsed on the event loop
	Status      api.StatusQuery   // KindStatus
	FromVersion int64             // KindSubscribe
	PolicyID    string            // KindRetention*
	Policy      api.RetentionPolicy

	// Set by the stages.
	Sequenced store.Sequenced     // sequence: KindCommit (its verdict and version)
	Lookup    store.Lookup        // sequence: KindStatus
	Forgotten int64               // sequence: Sequencer.Forgotten, for Persister.Forget
	Result    api.CommitResult    // resolve (persist for a commit not accepted)
	Sub       *store.Subscription // persist: KindSubscribe, nil when refused
}

// Entry is one request travelling through the pipeline (a ring slot). C is
// the app layer's connection type (see Reply).
type Entry[C comparable] struct {
	Kind  Kind
	Reply Reply[C] // where its answer goes, and how it is framed there
	Route metrics.Route
	Start int64 // when the request was parsed, monoclock.Now() (for the latency metric)

	// Set by the stages.
	Version int64
	Status  int
	Resp    []byte // the framed answer, built by persist (Responder)

	// Data is the request of the data routes (nil for /ok and /v1/version).
	Data *Data

	// handed is when the last stage to process the entry released it, in
	// a monoclock reading, as Start (wait.go).
	handed int64
}

// Options configure the pipeline.
type Options[C comparable] struct {
	WaitStrategy        pipeline.WaitStrategy
	ReleaseThreads      int
	OkResolveIterations int
	OkResolveSpin       time.Duration // busy-wait per /ok on the clock (after the iterations)
	// OkBodyBytes is the size of GET /ok's JSON body (see OKBody); 0 means
	// the plain {"status":"ok"}.
	OkBodyBytes int
	LgSlotCount int // ring size 2^LgSlotCount; 0 means 16
	// Responder frames the answers and makes each release thread's Sender
	// (the app layer's: commit knows no connection and no HTTP). Required.
	Responder Responder[C]
	// OnError hears what goes wrong in a stage that does not stop it (a
	// CPU it could not be pinned to); nil: nobody.
	OnError func(error)
	// CommitResolveSpin is a busy-wait on the clock per POST /v1/commit in
	// the resolve stage (benchmark.commit_resolve_spin_ns): a known slowdown
	// of the commit path alone, for measuring the regression gate on it.
	CommitResolveSpin time.Duration
	// CommitResolveIterations and StatusResolveIterations spend the spin
	// loop's iterations per commit and per status lookup
	// (benchmark.*_resolve_iterations): a slowdown of a fixed instruction
	// count, for the gate's cost tier.
	CommitResolveIterations int
	StatusResolveIterations int
	// StatusResolveSpin is the same per GET /v1/status
	// (benchmark.status_resolve_spin_ns), for the gate's status scenario.
	StatusResolveSpin time.Duration
	// SpinBeforePark is the pipeline's spin before a stage parks (see
	// pipeline.Options); 0: the pipeline's default, negative: park at once.
	SpinBeforePark time.Duration
	// StageCPUs pins thread t of stage s to StageCPUs[s][t % len]; an empty
	// list leaves that stage unpinned. A pinned stage cannot run on the
	// thread of the loop that pushed (so every hop to it is an OS context
	// switch): pinning is for dedicated cores with a spinning strategy.
	StageCPUs [][]int
	// LockThreads locks every stage goroutine to an OS thread of its own,
	// named after its stage (sequence, resolve, persist, release-N). A
	// pinned stage is locked, and named, whatever this says.
	LockThreads bool
	// Unnamed leaves every stage's thread unnamed, locked or not
	// (server.thread_names = false).
	Unnamed bool
	Metrics *metrics.Metrics
	// Store is the state the stages own (see server/store); nil: a fresh
	// store with the default options.
	Store *store.Store
	// OnSubscribe hands a started subscription to whoever streams it (the
	// connection's event loop), after its response head was sent (conn is
	// its Reply.Conn). Called by a release thread; nil drops subscriptions
	// (tests).
	OnSubscribe func(conn C, sub *store.Subscription)
	// OnPublish is called by the persist stage after a batch appended
	// committed transactions to the subscription log (to wake the loops
	// that stream to subscribers). It must not block.
	OnPublish func()
	// ResolveBatch is the most items the resolve stage takes per batch; 0
	// means no limit (whatever upstream released, as the other stages).
	// The seed's is 1, so persist and release start on the first items
	// while resolve spends /ok's work on the next; on a shared 2-core
	// machine that halved /ok throughput with WaitIfStageEmpty (a wake-up
	// per item), so the default stays 0 until BenchmarkResolveBatch says
	// otherwise on a quiet one (docs/api.md).
	ResolveBatch int
	// RunToCompletion lets the goroutine that submits a batch run the
	// stages' work for it itself, in order (inline.go), where the stage
	// goroutines would share its cores: it takes effect only with
	// WaitIfStageEmpty and no stage pinned (StageCPUs) or locked
	// (LockThreads); elsewhere the stages keep their goroutines and waits.
	RunToCompletion bool
	// StageWaits records each batch's wait before each stage
	// (weaseldb_pipeline_stage_wait_seconds, wait.go); off: the histogram
	// stays at zero and the stages stamp nothing.
	StageWaits bool
	// Now is the clock of the sequence and persist stages (retention
	// ages); nil means time.Now. Tests inject one.
	Now func() time.Time

	// released, when set (benchmarks of this package), hears of every
	// entry the release stage handled.
	released func(e *Entry[C])
	// spinFor is the busy-wait of the benchmark knobs; nil means
	// cpuwork.SpinFor. Tests count its calls instead of timing them.
	spinFor func(time.Duration)
	// spendIterations is the spin loop of the *_iterations knobs; nil
	// means cpuwork.SpendCPUCycles. Tests count its calls.
	spendIterations func(int)
}

// ErrClosed is Submit's answer once Close has begun: nothing is queued.
var ErrClosed = errors.New("commit pipeline closed")

// Pipeline runs the stage goroutines.
type Pipeline[C comparable] struct {
	opt Options[C]
	st  *store.Store
	p   *pipeline.Pipeline[Entry[C]]
	wg  sync.WaitGroup
	// submitMu orders Submit against Close: Submit holds it shared while it
	// pushes, Close takes it exclusively to set stopped, so no entry is
	// ever pushed behind the shutdown entries (where no stage would see it).
	submitMu sync.RWMutex
	stopped  bool           // guarded by submitMu
	slots    []stageSlot[C] // run to completion (inline.go); nil: stage goroutines
	body     []byte         // persist stage only: scratch for response bodies
	okBody   []byte         // GET /ok's body, built once in New
	// okResponses holds GET /ok's framed answer without a request id, per
	// Reply.Framing value: framed by the persist stage the first time it
	// meets that framing and shared read-only by every connection since.
	// Indexed by a uint8, so no bounds check.
	okResponses [256][]byte
}

// New starts the stage goroutines.
func New[C comparable](opt Options[C]) (*Pipeline[C], error) {
	if opt.ReleaseThreads < 1 {
		return nil, fmt.Errorf("commit: release threads must be >= 1, got %d", opt.ReleaseThreads)
	}
	if opt.LgSlotCount == 0 {
		opt.LgSlotCount = 16
	}
	if opt.Metrics == nil {
		opt.Metrics = metrics.New()
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.spinFor == nil {
		opt.spinFor = cpuwork.SpinFor
	}
	if opt.spendIterations == nil {
		opt.spendIterations = cpuwork.SpendCPUCycles
	}
	if opt.ResolveBatch < 0 {
		return nil, fmt.Errorf("commit: resolve batch must be >= 0 (0: no limit), got %d", opt.ResolveBatch)
	}
	if opt.Responder == nil {
		return nil, errors.New("commit: Options.Responder is nil")
	}
	if opt.OkBodyBytes == 0 {
		opt.OkBodyBytes = len(plainOKBody)
	}
	okBody, err := OKBody(opt.OkBodyBytes)
	if err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	p, err := pipeline.NewWithOptions[Entry[C]](opt.WaitStrategy, []int{1, 1, 1, opt.ReleaseThreads}, opt.LgSlotCount,
		pipeline.Options{SpinBeforePark: opt.SpinBeforePark})
	if err != nil {
		return nil, fmt.Errorf("commit pipeline: %w", err)
	}
	st := opt.Store
	if st == nil {
		st = store.New(store.Options{})
	}
	cp := &Pipeline[C]{opt: opt, st: st, p: p, okBody: okBody}
	if err := registerStoreMetrics(opt.Metrics, st); err != nil {
		return nil, err
	}
	releasers := make([]*releaser[C], opt.ReleaseThreads)
	for i := range releasers {
		releasers[i] = &releaser[C]{s: opt.Responder.NewSender(), tally: opt.Metrics.NewRequestTally()}
	}
	cp.wg.Add(3 + len(releasers))
	if runsInline(&opt) {
		cp.startInline(releasers)
		return cp, nil
	}
	processes := []stageFunc[C]{cp.sequence, cp.resolve, cp.persist}
	for _, r := range releasers {
		processes = append(processes, func(b pipeline.StageBatch[Entry[C]], thread int, start int64) int {
			return cp.release(b, thread, start, r)
		})
	}
	for i, process := range processes {
		go cp.runStage(min(i, 3), max(0, i-3), process)
	}
	return cp, nil
}

// Submit hands the requests of one event-loop turn to the pipeline in one
// push (more only when they outnumber the ring's slots). Safe from several
// loops at once. After Close has begun it queues nothing and returns
// ErrClosed: the caller still owes those requests an answer.
func (cp *Pipeline[C]) Submit(entries []Entry[C]) error {
	cp.submitMu.RLock()
	defer cp.submitMu.RUnlock()
	if cp.stopped {
		return ErrClosed
	}
	cp.push(entries)
	return nil
}

func (cp *Pipeline[C]) push(entries []Entry[C]) {
	for len(entries) > 0 {
		b := cp.p.Push(len(entries), true)
		n := b.Len()
		if n == 1 {
			*b.At(0) = entries[0] // a batch of one: a copy call costs more
		} else {
			first, second := b.Slices() // two copies, not an indexed store per entry
			copy(second, entries[copy(first, entries[:n]):n])
		}
		b.Release()
		cp.opt.Metrics.Push(n)
		entries = entries[n:]
		if cp.slots != nil {
			cp.drive()
		}
	}
}

// Close pushes one shutdown entry per release thread (after every request
// already submitted) and waits for every stage goroutine to finish.
func (cp *Pipeline[C]) Close() {
	cp.submitMu.Lock()
	if cp.stopped {
		cp.submitMu.Unlock()
		return
	}
	cp.stopped = true
	// Pushed under the lock: no Submit is between its check and its push.
	stops := make([]Entry[C], cp.opt.ReleaseThreads)
	now := monoclock.Now() // their Start: the sequence stage's wait counts from it
	for i := range stops {
		stops[i].Kind, stops[i].Start = KindShutdown, now
	}
	cp.push(stops)
	cp.submitMu.Unlock()
	cp.wg.Wait()
}

// CommittedVersion is the latest version persisted.
func (cp *Pipeline[C]) CommittedVersion() int64 { return cp.st.Persister.Version() }

// Store is the state the stages own.
func (cp *Pipeline[C]) Store() *store.Store { return cp.st }

// StageThreadName is the OS thread name of a stage's thread: its stage,
// and for release (the stage with several) the thread's number.
func StageThreadName(stage, thread int) string {
	if stage == 3 {
		return fmt.Sprintf("%s-%d", metrics.StageNames[stage], thread)
	}
	return metrics.StageNames[stage]
}

func (cp *Pipeline[C]) stageError(stage, thread int, err error) {
	if cp.opt.OnError != nil {
		cp.opt.OnError(fmt.Errorf("commit stage %s thread %d: %w", metrics.StageNames[stage], thread, err))
	}
}

// stageFunc processes one batch of a stage thread and returns the shutdown
// entries it saw. start is when the batch was acquired (monoclock: the
// clock read of the stage time metric), which release reuses as the
// moment its answers are queued, the end of their latencies against
// Entry.Start (run to completion passes it to release alone: the other
// stages get 0, which they do not read).
type stageFunc[C comparable] func(b pipeline.StageBatch[Entry[C]], thread int, start int64) int

// runStage drives one (stage, thread): acquire, process, release, until it
// saw the shutdown entries meant for it (every one for the first three
// stages, its own for a release thread).
func (cp *Pipeline[C]) runStage(stage, thread int, process stageFunc[C]) {
	defer cp.wg.Done()
	locked := false
	if stage < len(cp.opt.StageCPUs) && len(cp.opt.StageCPUs[stage]) > 0 {
		cpus := cp.opt.StageCPUs[stage]
		if err := affinity.PinCurrentThread([]int{cpus[thread%len(cpus)]}); err != nil {
			cp.stageError(stage, thread, err)
		} else {
			// A pinned goroutine is locked to its thread: its spins must
			// not yield (each yield would cost two thread switches).
			cp.p.MarkPinned(stage, thread)
			locked = true
		}
	}
	if cp.opt.LockThreads && !locked {
		// Locked for good, but not pinned: its spins still yield, as
		// they must on a CPU it shares.
		runtime.LockOSThread()
		locked = true
	}
	if locked && !cp.opt.Unnamed {
		// The old name is back before the goroutine (and its thread) ends.
		restore, err := threadname.Name(StageThreadName(stage, thread))
		if err != nil {
			cp.stageError(stage, thread, err)
		}
		defer restore()
	}
	want := cp.opt.ReleaseThreads
	if stage == 3 {
		want = 1
	}
	maxBatch := 0
	if stage == 1 {
		maxBatch = cp.opt.ResolveBatch
	}
	for seen := 0; seen < want; {
		seen += cp.runBatch(stage, thread, process, cp.p.Acquire(stage, thread, maxBatch, true))
	}
}

func (cp *Pipeline[C]) owns(index uint64, thread int) bool {
	return int(index%uint64(cp.opt.ReleaseThreads)) == thread
}
