// Package pipeline is a lock-free multi-stage pipeline over a power-of-two
// ring, after the C++ ThreadPipeline of the seed: producers reserve and
// publish batches of slots, and each stage's goroutines acquire the batches
// their upstream has released. Every thread of a stage sees every item (split
// work by Index), and a slot is reused only once every thread of the last
// stage has released it.
//
// The coordination is one published counter per producer side and per stage
// thread; positions grow without bound (uint64), and a slot is position&mask.
// Slots are plain memory: a writer fills them, then publishes its counter with
// an atomic store; a reader loads the counter atomically before reading them.
// That store/load pair is the only ordering needed, and the race detector
// sees it.
//
// This file is a hot path, written by hand for it.
package pipeline

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Options tunes the waits. The zero value of a field means its default.
type Options struct {
	// SpinBeforePark is how long a waiting goroutine polls before it parks
	// (WaitIfStageEmpty stages, and any producer waiting for room or for its
	// turn to publish). A hand-off that comes within it costs no wake-up.
	// Default 5 µs; negative means park at once.
	SpinBeforePark time.Duration
	// IdleSpin is how long a WaitIfUpstreamIdle thread keeps spinning after
	// the producer went idle, before it parks. Default 50 µs.
	IdleSpin time.Duration
	// YieldEvery is how long a goroutine spins before it calls
	// runtime.Gosched, so spinners do not starve goroutines waiting for a P
	// (a goroutine in the global run queue is invisible to the spinner's
	// quicker per-P check). Default 5 µs.
	YieldEvery time.Duration
}

const (
	defaultSpinBeforePark = 5 * time.Microsecond
	defaultIdleSpin       = 50 * time.Microsecond
	defaultYieldEvery     = 5 * time.Microsecond
	maxLgSlotCount        = 30
)

func (o Options) withDefaults() Options {
	if o.SpinBeforePark == 0 {
		o.SpinBeforePark = defaultSpinBeforePark
	} else if o.SpinBeforePark < 0 {
		o.SpinBeforePark = 0
	}
	if o.IdleSpin <= 0 {
		o.IdleSpin = defaultIdleSpin
	}
	if o.YieldEvery <= 0 {
		o.YieldEvery = defaultYieldEvery
	}
	return o
}

// Pipeline moves items of type T from producers through its stages. Create
// it with New; do not copy it.
type Pipeline[T any] struct {
	strategy WaitStrategy
	opts     Options
	stages   []int // threads per stage
	offsets  []int // index in threads of each stage's first thread
	size     uint64
	mask     uint64
	ring     []T

	slots  paddedCounter // reserved by producers (CAS)
	pushes paddedCounter // published by producers, in order
	// freedCache is a lower bound of every last-stage thread's pops, so a
	// producer reads those (lines the last stage writes on every release)
	// only when the bound says the ring may be full. It only ever lags.
	freedCache paddedCounter
	threads    []threadState
}

// threadState is one stage goroutine's published position and its own
// bookkeeping.
type threadState struct {
	pops counter // released by this thread; read by the next stage or the producer
	_    [cacheLine]byte

	// Owned by the stage goroutine.
	localPops uint64     // acquired so far
	upstream  []*counter // the producer's pushes, or the previous stage's pops
	lastRead  []uint64   // last value read from each upstream counter
	stage     int
	noYield   bool // MarkPinned: its unbounded spins never call runtime.Gosched
	_         [cacheLine]byte
}

// New builds a pipeline with the given wait strategy, number of goroutines
// per stage (for example {1, 1, 1, 4}), and a ring of 2^lgSlotCount slots.
func New[T any](s WaitStrategy, threadsPerStage []int, lgSlotCount int) (*Pipeline[T], error) {
	return NewWithOptions[T](s, threadsPerStage, lgSlotCount, Options{})
}

// NewWithOptions is New with tuned waits.
func NewWithOptions[T any](s WaitStrategy, threadsPerStage []int, lgSlotCount int, opts Options) (*Pipeline[T], error) {
	if !s.valid() {
		return nil, fmt.Errorf("pipeline: invalid wait strategy %d", int(s))
	}
	if len(threadsPerStage) == 0 {
		return nil, fmt.Errorf("pipeline: need at least one stage")
	}
	for i, n := range threadsPerStage {
		if n < 1 {
			return nil, fmt.Errorf("pipeline: stage %d has %d threads, want >= 1", i, n)
		}
	}
	if lgSlotCount < 0 || lgSlotCount > maxLgSlotCount {
		return nil, fmt.Errorf("pipeline: lgSlotCount %d out of range 0..%d", lgSlotCount, maxLgSlotCount)
	}
	size := uint64(1) << lgSlotCount
	p := &Pipeline[T]{
		strategy: s,
		opts:     opts.withDefaults(),
		stages:   append([]int(nil), threadsPerStage...),
		offsets:  make([]int, len(threadsPerStage)),
		size:     size,
		mask:     size - 1,
		ring:     make([]T, size),
	}
	p.slots.init()
	p.pushes.init()
	total := 0
	for i, n := range threadsPerStage {
		p.offsets[i] = total
		total += n
	}
	p.threads = make([]threadState, total)
	for stage, n := range threadsPerStage {
		for t := range n {
			ts := &p.threads[p.offsets[stage]+t]
			ts.pops.init()
			ts.stage = stage
			if stage == 0 {
				ts.upstream = []*counter{&p.pushes.counter}
			} else {
				prev := p.threads[p.offsets[stage-1] : p.offsets[stage-1]+threadsPerStage[stage-1]]
				for i := range prev {
					ts.upstream = append(ts.upstream, &prev[i].pops)
				}
			}
			ts.lastRead = make([]uint64, len(ts.upstream))
		}
	}
	return p, nil
}

// MarkPinned says that the goroutine driving thread `thread` of stage
// `stage` is locked to an OS thread pinned to a CPU of its own
// (affinity.PinCurrentThread: dedicated cores). Its unbounded spins (Never,
// and WaitIfUpstreamIdle while upstream is busy) then never yield to the Go
// scheduler. For a goroutine locked to its thread, runtime.Gosched does not
// just let another goroutine run: it hands the P to another thread and puts
// this one to sleep until a third hands the P back, two thread switches per
// yield, every few microseconds, on a core that is there to spin. The
// runtime still preempts the goroutine (asynchronously, every 10 ms) for
// the garbage collector and fairness, and a goroutine it readies is taken
// by an idle P (GOMAXPROCS keeps one beyond the pinned threads). Bounded
// spins are unchanged: they still end early, and park, when spinning cannot
// pay off. Call it from that goroutine, before its first Acquire.
func (p *Pipeline[T]) MarkPinned(stage, thread int) { p.thread(stage, thread).noYield = true }

// Strategy returns the pipeline's wait strategy.
func (p *Pipeline[T]) Strategy() WaitStrategy { return p.strategy }

// SlotCount returns the number of slots in the ring.
func (p *Pipeline[T]) SlotCount() int { return int(p.size) }

// ThreadsPerStage returns a copy of the topology.
func (p *Pipeline[T]) ThreadsPerStage() []int { return append([]int(nil), p.stages...) }

// ProducerBatch is a run of reserved slots for a producer to fill.
type ProducerBatch[T any] struct {
	p          *Pipeline[T]
	ring       []T // p.ring and p.mask, copied so At is cheap enough to inline
	mask       uint64
	begin, end uint64
}

// Len is the number of slots reserved; 0 when Push did not block and the ring was full.
func (b ProducerBatch[T]) Len() int { return int(b.end - b.begin) }

// At returns slot i of the batch, for the producer to fill.
func (b ProducerBatch[T]) At(i int) *T {
	if uint64(i) >= b.end-b.begin {
		panic(errBatchIndex)
	}
	return &b.ring[(b.begin+uint64(i))&b.mask]
}

// Slices returns the batch's slots as at most two contiguous runs (the ring
// may wrap inside a batch), for loops that want plain slices.
func (b ProducerBatch[T]) Slices() (first, second []T) {
	return ringSlices(b.ring, b.begin, b.end)
}

// Index returns the stream position of slot i.
func (b ProducerBatch[T]) Index(i int) uint64 { return b.begin + uint64(i) }

// Push reserves n slots (at most the ring's size). When the ring is full it
// waits for room if block is true, or returns an empty batch if not. Fill
// the slots, then call Release. Safe from several goroutines: batches are
// published in the order they were reserved.
func (p *Pipeline[T]) Push(n int, block bool) ProducerBatch[T] {
	if n <= 0 {
		return ProducerBatch[T]{}
	}
	count := min(uint64(n), p.size)
	for {
		begin := p.slots.v.Load()
		end := begin + count
		// Signed: begin may be stale (other producers reserved, published
		// and saw it consumed since), putting freed past end; then there is
		// room, and the CAS below fails and retries.
		if int64(end-p.freedCache.v.Load()) > int64(p.size) {
			t, seen := p.lastStageBehind(end)
			if t != nil {
				if !block {
					return ProducerBatch[T]{}
				}
				p.waitChange(&t.pops, seen, p.opts.SpinBeforePark)
				continue
			}
		}
		if p.slots.v.CompareAndSwap(begin, end) {
			return ProducerBatch[T]{p: p, ring: p.ring, mask: p.mask, begin: begin, end: end}
		}
	}
}

// lastStageBehind refreshes freedCache from the last stage's threads and
// returns one that still holds a slot below end-size (so reserving up to end
// would overwrite an item it has not released), with the position it was
// seen at; nil if there is room.
func (p *Pipeline[T]) lastStageBehind(end uint64) (*threadState, uint64) {
	last := len(p.stages) - 1
	var behind *threadState
	var seen uint64
	freed := uint64(math.MaxUint64)
	for i := p.offsets[last]; i < len(p.threads); i++ {
		t := &p.threads[i]
		pops := t.pops.v.Load()
		freed = min(freed, pops)
		if behind == nil && int64(end-pops) > int64(p.size) {
			behind, seen = t, pops
		}
	}
	// Racing producers may store an older bound over a newer one; a lower
	// bound only costs another refresh, never an overwrite.
	p.freedCache.v.Store(freed)
	return behind, seen
}

// Release publishes the batch to stage 0, after every batch reserved before
// it has been published.
func (b ProducerBatch[T]) Release() {
	if b.p == nil {
		return
	}
	p := b.p
	for v := p.pushes.v.Load(); v != b.begin; v = p.pushes.v.Load() {
		p.waitChange(&p.pushes.counter, v, p.opts.SpinBeforePark)
	}
	p.pushes.publish(b.end)
}

// waitChange returns once c differs from seen: by spinning only (Never), or
// spinning up to budget and then parking.
func (p *Pipeline[T]) waitChange(c *counter, seen uint64, budget time.Duration) {
	if p.strategy == Never {
		budget = -1
	}
	s := newSpinner(budget, p.opts.YieldEvery)
	if _, ok := spinWhile(c, seen, &s); !ok {
		c.park(seen)
	}
}

// StageBatch is a run of items acquired by one stage thread.
type StageBatch[T any] struct {
	ring       []T // the pipeline's ring and mask
	mask       uint64
	t          *threadState
	begin, end uint64
}

// Len is the number of items in the batch.
func (b StageBatch[T]) Len() int { return int(b.end - b.begin) }

// At returns item i of the batch.
func (b StageBatch[T]) At(i int) *T {
	if uint64(i) >= b.end-b.begin {
		panic(errBatchIndex)
	}
	return &b.ring[(b.begin+uint64(i))&b.mask]
}

// Slices returns the batch's items as at most two contiguous runs (the ring
// may wrap inside a batch), for loops that want plain slices.
func (b StageBatch[T]) Slices() (first, second []T) {
	return ringSlices(b.ring, b.begin, b.end)
}

// Index returns the stream position of item i (0 for the first item ever
// pushed), so the threads of a stage can split work, e.g. by Index%threads.
func (b StageBatch[T]) Index(i int) uint64 { return b.begin + uint64(i) }

// Release hands the batch to the next stage (or, from the last stage, frees
// its slots for producers). Release batches in the order they were acquired.
func (b StageBatch[T]) Release() {
	if b.t == nil {
		return
	}
	// Every strategy publishes with a wake check: it costs one load of a
	// line this goroutine just wrote, and is a no-op unless someone parked
	// here (WaitIfStageEmpty stages, or a producer waiting for room).
	b.t.pops.publish(b.end)
}

// Acquire returns the next batch for thread `thread` of stage `stage`: at
// most maxBatch items (0 means no limit) that every upstream thread has
// released. When there is none it waits by the pipeline's strategy if
// mayBlock is true (and then never returns an empty batch), or returns an
// empty batch if not. Each (stage, thread) pair must be driven by a single
// goroutine at a time: another may take it over only after a
// synchronising hand-over (a lock, an atomic flag), once the last one
// released every batch it acquired.
func (p *Pipeline[T]) Acquire(stage, thread, maxBatch int, mayBlock bool) StageBatch[T] {
	return p.take(p.thread(stage, thread), maxBatch, mayBlock)
}

// take is Acquire on a thread already looked up (StageThread.TryAcquire
// shares it).
func (p *Pipeline[T]) take(t *threadState, maxBatch int, mayBlock bool) StageBatch[T] {
	n := p.available(t, mayBlock)
	if n == 0 {
		return StageBatch[T]{}
	}
	if maxBatch > 0 && n > uint64(maxBatch) {
		n = uint64(maxBatch)
	}
	begin := t.localPops
	t.localPops += n
	return StageBatch[T]{ring: p.ring, mask: p.mask, t: t, begin: begin, end: begin + n}
}

func (p *Pipeline[T]) thread(stage, thread int) *threadState {
	if stage < 0 || stage >= len(p.stages) || thread < 0 || thread >= p.stages[stage] {
		panic(fmt.Sprintf("pipeline: no thread %d in stage %d (topology %v)", thread, stage, p.stages))
	}
	return &p.threads[p.offsets[stage]+thread]
}

// available returns how many items past t.localPops every upstream thread
// has released, waiting for at least one if mayBlock.
func (p *Pipeline[T]) available(t *threadState, mayBlock bool) uint64 {
	safe := uint64(math.MaxUint64)
	for i, up := range t.upstream {
		if t.lastRead[i] == t.localPops {
			t.lastRead[i] = up.v.Load()
			for t.lastRead[i] == t.localPops {
				if !mayBlock {
					return 0
				}
				t.lastRead[i] = p.waitUpstream(up, t.localPops, t.noYield)
			}
		}
		safe = min(safe, t.lastRead[i]-t.localPops)
	}
	return safe
}

// waitUpstream waits, by the pipeline's strategy, for up to move past seen
// (this thread's position) and returns the value it read last. For
// WaitIfUpstreamIdle it may return seen itself after the producer moved; the
// caller checks again. noYield: the thread is pinned (MarkPinned).
func (p *Pipeline[T]) waitUpstream(up *counter, seen uint64, noYield bool) uint64 {
	switch p.strategy {
	case WaitIfStageEmpty:
		s := newSpinner(p.opts.SpinBeforePark, p.opts.YieldEvery)
		if v, ok := spinWhile(up, seen, &s); ok {
			return v
		}
		return up.park(seen)
	case WaitIfUpstreamIdle:
		return p.waitUpstreamIdle(up, seen, noYield)
	default: // Never
		s := newSpinner(-1, p.opts.YieldEvery)
		s.noYield = noYield
		v, _ := spinWhile(up, seen, &s)
		return v
	}
}

// waitUpstreamIdle spins for as long as the producer has published items
// this thread has not seen (so an upstream stage is working on them), and
// once the producer has been idle for IdleSpin, parks until it pushes again.
// Intermediate stages therefore never wake anyone: only the producer's
// pushes (and, for a waiting producer, the last stage) do.
func (p *Pipeline[T]) waitUpstreamIdle(up *counter, seen uint64, noYield bool) uint64 {
	busy := newSpinner(-1, p.opts.YieldEvery)
	busy.noYield = noYield
	var idle spinner
	idleSpinning := false
	for {
		if v := up.v.Load(); v != seen {
			return v
		}
		if p.pushes.v.Load() != seen {
			idleSpinning = false // work in flight upstream: keep spinning
			busy.next()
			continue
		}
		if !idleSpinning {
			idle, idleSpinning = newSpinner(p.opts.IdleSpin, p.opts.YieldEvery), true
		}
		if !idle.next() {
			p.pushes.park(seen)
			idleSpinning = false
		}
	}
}

// errBatchIndex is the panic for an index past a batch: a programming
// error, like a slice index out of range. A prebuilt value keeps At cheap
// enough to inline.
var errBatchIndex = errors.New("pipeline: batch index out of range")

// ringSlices returns positions [begin, end) of a power-of-two ring as one or
// two slices.
func ringSlices[T any](ring []T, begin, end uint64) (first, second []T) {
	if begin == end {
		return nil, nil
	}
	mask := uint64(len(ring) - 1)
	lo, hi := begin&mask, (end-1)&mask+1
	if lo < hi {
		return ring[lo:hi], nil
	}
	return ring[lo:], ring[:hi]
}
