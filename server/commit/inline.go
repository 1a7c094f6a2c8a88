// Run to completion: where the stages are goroutines sharing the loops'
// cores (WaitIfStageEmpty, no stage pinned or locked to a thread: the
// server's defaults unpinned), the goroutine that pushes a batch runs every
// stage's work for it itself, in stage order, instead of waking four stage
// goroutines that would each park again after one batch. A batch then costs
// its stages' work, not a park and a wake per stage.
//
// Ownership: a stage thread's pipeline position and its state (the persist
// stage's scratch, a release thread's releaser, the shutdown entries it
// saw) belong to whoever holds its slot's held flag, a try-lock: the
// flag's CompareAndSwap and Store order each holder's work after the last
// one's. A goroutine that finds a slot held moves on; the holder looks
// again after it lets go (Pipeline.Pending), so no released item is left
// without a driver. done and kick are safe from any goroutine.
//
// Each stage thread keeps its goroutine, parked on kick: the fallback. A
// pushing goroutine takes a stage at most maxHoldsPerPush times in a row
// (work others pushed keeps coming while it runs); then it kicks the
// stage's goroutine, which runs that stage and the ones after it for as
// long as there is work, and the loop goes back to its connections. A
// goroutine ends once its slot saw its shutdown entries, so Close still
// joins one goroutine per stage thread.

package commit

import (
	"runtime"
	"sync/atomic"
	"time"

	"weaseldb/internal/monoclock"
	"weaseldb/server/pipeline"
)

// maxHoldsPerPush bounds how many times in a row a pushing goroutine takes
// one stage: once for its own batch, a few more for batches other loops
// pushed meanwhile, then the stage's goroutine takes over.
const maxHoldsPerPush = 4

// stageSlot is one stage thread driven by whoever pushes.
type stageSlot[C comparable] struct {
	held atomic.Bool
	done atomic.Bool
	kick chan struct{} // capacity 1: a kick is never lost

	st    pipeline.StageThread[Entry[C]]
	index int // in Pipeline.slots
	// Owned by the holder of held.
	stage, thread int
	maxBatch      int
	want, seen    int          // shutdown entries meant for this thread, and seen
	rel           *releaser[C] // a release thread's; nil for the first three stages
}

// runsInline says whether the pushing goroutines drive the stages: asked
// for, the strategy parks, and no stage goroutine has a thread of its own
// (pinned or locked stages keep their own goroutines and waits).
func runsInline[C comparable](opt *Options[C]) bool {
	if !opt.RunToCompletion || opt.WaitStrategy != pipeline.WaitIfStageEmpty || opt.LockThreads {
		return false
	}
	for _, cpus := range opt.StageCPUs {
		if len(cpus) > 0 {
			return false
		}
	}
	return true
}

// RunsInline says whether Submit runs the stages on the caller's goroutine
// (Options.RunToCompletion took effect): then a producer has nothing to
// yield its P to after a push.
func (cp *Pipeline[C]) RunsInline() bool { return cp.slots != nil }

// startInline makes the slots, in stage order (the first three stages,
// then one per release thread), and their goroutines.
func (cp *Pipeline[C]) startInline(releasers []*releaser[C]) {
	cp.slots = make([]stageSlot[C], 3+len(releasers))
	for i := range cp.slots {
		s := &cp.slots[i]
		s.index, s.stage, s.thread = i, min(i, 3), max(0, i-3)
		s.want = cp.opt.ReleaseThreads
		if s.stage == 3 {
			s.want, s.rel = 1, releasers[s.thread]
		}
		if s.stage == 1 {
			s.maxBatch = cp.opt.ResolveBatch
		}
		s.st = cp.p.StageThread(s.stage, s.thread)
		s.kick = make(chan struct{}, 1)
		go cp.awaitKicks(s)
	}
}

// awaitKicks is a stage thread's goroutine: the fallback driver of its
// slot and the slots after it, parked until kicked, gone once its slot is
// done.
func (cp *Pipeline[C]) awaitKicks(s *stageSlot[C]) {
	defer cp.wg.Done()
	for !s.done.Load() {
		<-s.kick
		var clock batchClock
		for i := s.index; i < len(cp.slots); i++ {
			cp.runSlot(&cp.slots[i], false, &clock)
		}
	}
}

// drive runs every stage thread that is free, in stage order, until
// nothing released to it is left unprocessed or its goroutine took over.
func (cp *Pipeline[C]) drive() {
	kicked := false
	var clock batchClock
	for i := range cp.slots {
		kicked = cp.runSlot(&cp.slots[i], true, &clock) || kicked
	}
	if kicked {
		// The kicked goroutine waits on this P; a loop about to block
		// in epoll_wait would strand it there until sysmon retakes the P.
		runtime.Gosched()
	}
}

// runSlot runs s's next batch if no one else is running s, and goes on
// while upstream released more (checked after letting go, so an item
// released meanwhile by a goroutine that found s held is not left behind).
// One acquire per hold: the common case, a batch of one push, costs one
// look at upstream before and one after. bounded: after maxHoldsPerPush
// holds with more to do, it kicks s's goroutine to go on, and says so.
func (cp *Pipeline[C]) runSlot(s *stageSlot[C], bounded bool, clock *batchClock) (kicked bool) {
	for holds := 1; s.held.CompareAndSwap(false, true); holds++ {
		if s.seen < s.want {
			if b := s.st.TryAcquire(s.maxBatch); b.Len() != 0 {
				s.seen += cp.runTimedBatch(s, b, clock)
			}
		}
		finished := s.seen >= s.want
		s.held.Store(false)
		if finished {
			if s.done.CompareAndSwap(false, true) {
				kick(s) // its goroutine sees done and ends
			}
			return false
		}
		if !s.st.Pending() {
			return false
		}
		if bounded && holds >= maxHoldsPerPush {
			kick(s)
			return true
		}
	}
	return false
}

// runBatch processes one acquired batch, records the stage's batch and
// wait metrics and hands the batch on, stamped (wait.go); it returns the
// shutdown entries seen.
func (cp *Pipeline[C]) runBatch(stage, thread int, process stageFunc[C], b pipeline.StageBatch[Entry[C]]) int {
	start := monoclock.Now()
	seen := process(b, thread, start)
	busy := time.Duration(monoclock.Now() - start)
	if stage != 3 || thread == 0 {
		cp.opt.Metrics.StageBatch(stage, b.Len(), busy)
	}
	if cp.opt.StageWaits {
		cp.recordWait(stage, thread, b, start, busy)
	}
	b.Release()
	return seen
}

// batchClock chains the batches one driver runs back to back: the clock
// read that ends one batch starts the next, so a batch of one through the
// four stages reads the monotonic clock five times (internal/monoclock,
// integer nanoseconds), not eight, and its release batch's start is the
// end of that batch's answers' latencies (Entry.Start is a monoclock
// reading too, so no time.Time is made on the way). The zero value
// reads the clock at its first batch; a driver that waited (a kicked
// goroutine) starts a new one.
type batchClock struct {
	at int64 // the last batch's end (monoclock); 0: none yet
}

// start is when the next batch starts: where the last one ended.
func (c *batchClock) start() int64 {
	if c.at == 0 {
		c.at = monoclock.Now()
	}
	return c.at
}

// restart reads the clock anew: the next batch starts now.
func (c *batchClock) restart() int64 {
	c.at = monoclock.Now()
	return c.at
}

// stop ends the batch begun at from and returns its duration; its end is
// the next batch's start.
func (c *batchClock) stop(from int64) time.Duration {
	c.at = monoclock.Now()
	return time.Duration(c.at - from)
}

// runTimedBatch is runBatch on a driver's chained clock. Only the release
// stage reads the start it is given (the end of its answers' latencies);
// the others get 0. That start is the batch clock's, read when the last
// batch ended: no clock read of its own, unless stage waits are recorded
// (a wait is measured from when the batch was taken).
// It takes the slot (its holder's) rather than its fields one by one:
// fewer arguments to pass on every batch; and it calls each stage's
// method itself rather than through a func value (a method value's
// wrapper is one more call, its arguments moved once more, per stage).
func (cp *Pipeline[C]) runTimedBatch(s *stageSlot[C], b pipeline.StageBatch[Entry[C]], clock *batchClock) int {
	from := clock.start()
	if cp.opt.StageWaits {
		// The chained start may predate what this batch holds (pushed or
		// handed on by another driver since): a wait needs the clock read
		// after the batch was taken.
		from = clock.restart()
	}
	var seen int
	switch s.stage {
	case 0:
		seen = cp.sequence(b, s.thread, 0)
	case 1:
		seen = cp.resolve(b, s.thread, 0)
	case 2:
		seen = cp.persist(b, s.thread, 0)
	default:
		seen = cp.release(b, s.thread, from, s.rel)
	}
	busy := clock.stop(from)
	if s.stage != 3 || s.thread == 0 {
		cp.opt.Metrics.StageBatch(s.stage, b.Len(), busy)
	}
	if cp.opt.StageWaits {
		cp.recordWait(s.stage, s.thread, b, from, busy)
	}
	b.Release()
	return seen
}

// kick wakes s's goroutine; a kick already pending does as well.
func kick[C comparable](s *stageSlot[C]) {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}
