package pipeline

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"weaseldb/server/cpuwork"
)

// cacheLine is the spacing kept between counters written by different
// goroutines (two 64-byte lines: x86's adjacent-line prefetcher pairs them).
const cacheLine = 128

// pollsPerClockRead is how many polls a spin makes between clock reads: a
// poll with its Pause costs 10-40 ns and a clock read about 30 ns, so the
// clock costs little and a time budget is overshot by at most ~1.5 µs.
const pollsPerClockRead = 32

// pollsPerCanSpin is how many polls a spin makes between asks of
// runtimeCanSpin (a few loads), so it notices within ~0.1 µs that the
// goroutine it waits for sits in its own P's run queue.
const pollsPerCanSpin = 4

// counter is a monotonically increasing position in the item stream that
// one goroutine publishes and others wait on.
//
// Waiting is Go-native parking, not a raw futex: a goroutine blocked in a
// futex syscall keeps its P until sysmon retakes it (20 µs to 10 ms), so with
// more blocked goroutines than GOMAXPROCS a hand-off costs far more (see
// BenchmarkHandoff and docs/bench_pipeline.md). A goroutine parked on a
// sync.Cond gives its P back at once.
//
// No wake-up is lost. A waiter, holding mu, increments waiters and then
// checks v, before every Wait; a publisher stores v and then reads waiters.
// Go's atomics are sequentially consistent, so either the waiter's check sees
// the new v, or the publisher sees a non-zero count and wakes. The waker
// takes the count with Swap(0) and broadcasts under mu; since the waiter
// holds mu from its increment until Wait releases it, a count taken by any
// waker is always followed by a broadcast that reaches the waiter. Taking the
// count means publishers that follow skip the wake while the woken
// goroutines have not yet run. A waiter that finds v changed leaves its
// increment behind (costing at most one needless broadcast): decrementing it
// could cancel a later waiter's count.
type counter struct {
	v       atomic.Uint64
	waiters atomic.Int32 // increments by waiters not yet woken (may overcount)
	mu      sync.Mutex
	cond    sync.Cond
	oneP    bool // GOMAXPROCS was 1 at init: a waker always yields
}

func (c *counter) init() {
	c.cond.L = &c.mu
	// Read once: runtime.GOMAXPROCS(0) takes the scheduler's global lock.
	c.oneP = runtime.GOMAXPROCS(0) == 1
}

// publish stores x and wakes parked waiters. With nobody parked it costs one
// store and one load of a line the caller already owns.
//
// The store is a Swap: with park's Add-then-Load this is a store-load
// handshake (each side writes, then reads the other's word), correct only
// if the store cannot be passed by the load that follows it. Go's atomics
// promise that, but QEMU's arm64-on-x86 translation of a store-release and
// a load-acquire does not (it fences before the store and after the load,
// and x86 lets a load pass an earlier store), and make test runs these
// tests under qemu-user: a parked producer once missed its wake-up there.
// A read-modify-write fences both ways. On amd64 Go's Store already is an
// XCHG, so this costs nothing there.
func (c *counter) publish(x uint64) {
	c.v.Swap(x)
	if c.waiters.Load() != 0 {
		c.wake()
	}
}

// wake is publish's slow path, kept apart so publish inlines.
func (c *counter) wake() {
	if c.waiters.Swap(0) == 0 {
		return // another publisher took the count and is broadcasting
	}
	// The woken goroutines go to this P's run queue (runnext). An idle or
	// spinning P steals them within microseconds; but when every other P
	// is busy and this goroutine next blocks in a syscall (an event loop's
	// epoll_wait), they wait there until sysmon retakes the P: 20 µs,
	// growing to 10 ms when sysmon has been idle (TestWokenGoroutineIsNot-
	// Stranded). So when nobody else can take them, yield this P to them.
	// runtimeCanSpin, asked before they are queued, is true exactly when
	// some other P is busy and none is idle or spinning (for GOMAXPROCS 2;
	// with more Ps it errs towards yielding). Wakes only happen after a
	// goroutine parked, i.e. at low load, so the yield costs no throughput
	// where throughput matters.
	yield := c.oneP || runtimeCanSpin(0)
	c.mu.Lock()
	c.cond.Broadcast()
	c.mu.Unlock()
	if yield {
		runtime.Gosched()
	}
}

// park blocks until v differs from seen and returns the value seen then.
func (c *counter) park(seen uint64) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		c.waiters.Add(1)
		if v := c.v.Load(); v != seen {
			return v
		}
		c.cond.Wait()
	}
}

// paddedCounter keeps each counter's hot fields on lines of their own.
type paddedCounter struct {
	counter
	_ [cacheLine]byte
}

// spinner bounds a polling loop by time and yields to the Go scheduler now
// and then, so a spinning goroutine never starves one that waits for a P.
// The clock is read only every pollsPerClockRead polls, and not at all when
// the wait ends within the first few polls.
type spinner struct {
	budget     time.Duration // < 0: no limit
	yieldEvery time.Duration
	polls      int
	start      time.Time
	lastYield  time.Time
	// noYield: an unbounded spin of a pinned thread (MarkPinned) never
	// calls runtime.Gosched, which on a locked goroutine costs two thread
	// switches.
	noYield bool
}

func newSpinner(budget, yieldEvery time.Duration) spinner {
	return spinner{budget: budget, yieldEvery: yieldEvery}
}

// next pauses once and reports whether the spin may go on. It says no when
// the budget is spent, or at once when spinning cannot pay off right now
// (runtimeCanSpin: a goroutine waits in this P's run queue, or no other P is
// running anything); an unbounded spinner yields to the scheduler instead.
func (s *spinner) next() bool {
	cpuwork.Pause()
	s.polls++
	if s.polls%pollsPerCanSpin != 0 {
		return true
	}
	if !runtimeCanSpin(0) {
		if s.budget < 0 {
			s.yield()
			return true
		}
		return false
	}
	if s.polls%pollsPerClockRead != 0 {
		return true
	}
	now := time.Now()
	if s.start.IsZero() {
		s.start, s.lastYield = now, now
		return s.budget != 0
	}
	if s.budget >= 0 && now.Sub(s.start) >= s.budget {
		return false
	}
	if now.Sub(s.lastYield) >= s.yieldEvery {
		s.yield()
		s.lastYield = time.Now()
	}
	return true
}

// yield lets other goroutines have this P, unless the spinner's goroutine
// is pinned (noYield).
func (s *spinner) yield() {
	if !s.noYield {
		runtime.Gosched()
	}
}

// spinWhile polls c until it differs from seen or the spinner runs out.
// It returns the last value read and whether it differs from seen.
func spinWhile(c *counter, seen uint64, s *spinner) (uint64, bool) {
	if s.budget == 0 {
		v := c.v.Load()
		return v, v != seen
	}
	for {
		if v := c.v.Load(); v != seen {
			return v, true
		}
		if !s.next() {
			return seen, false
		}
	}
}
