package pipeline

// StageThread is one (stage, thread) of a pipeline, looked up once, for a
// caller that drives it without waiting: the goroutine that pushed a batch
// running the stages itself (run to completion), where Acquire's lookup and
// its wait would cost more than the check.
//
// Whoever drives a StageThread must hold it alone, as for Acquire: the
// hand-over from one driver to the next synchronises (a lock, an atomic
// flag), after the last one released every batch it acquired.
type StageThread[T any] struct {
	p *Pipeline[T]
	t *threadState
	// The ring and its mask, copied (they never change) so TryAcquire
	// builds its batch without going through p.
	ring []T
	mask uint64
	// up is the one upstream counter of a thread that has one (every
	// thread after a single-thread stage, and the first stage), nil
	// otherwise: TryAcquire's fast path reads it without Acquire's loop.
	up *counter
}

// StageThread returns the handle of thread `thread` of stage `stage`.
func (p *Pipeline[T]) StageThread(stage, thread int) StageThread[T] {
	t := p.thread(stage, thread)
	s := StageThread[T]{p: p, t: t, ring: p.ring, mask: p.mask}
	if len(t.upstream) == 1 {
		s.up = t.upstream[0]
	}
	return s
}

// TryAcquire is Acquire without a wait: the next batch of at most maxBatch
// items (0: no limit), or an empty batch when upstream released nothing new.
//
// A thread with one upstream (the common case) skips take's loop over
// its upstream counters: this runs once per stage for every batch that
// goes through a pipeline driven to completion.
// A pointer receiver: the handle is seven words, copied on every call by
// a value receiver.
func (s *StageThread[T]) TryAcquire(maxBatch int) StageBatch[T] {
	if s.up == nil {
		return s.p.take(s.t, maxBatch, false)
	}
	t := s.t
	begin := t.localPops
	last := t.lastRead[0]
	if last == begin {
		if last = s.up.v.Load(); last == begin {
			return StageBatch[T]{}
		}
		t.lastRead[0] = last
	}
	n := last - begin
	if maxBatch > 0 && n > uint64(maxBatch) {
		n = uint64(maxBatch)
	}
	t.localPops = begin + n
	return StageBatch[T]{ring: s.ring, mask: s.mask, t: t, begin: begin, end: begin + n}
}

// Pending reports whether every upstream thread has released items that
// this thread has not yet released. Safe from any goroutine; meant for one
// that just stopped driving the thread (after releasing every batch it
// acquired), to see whether items came in while it was finishing, which
// no one else may have taken on.
func (s *StageThread[T]) Pending() bool {
	pops := s.t.pops.v.Load()
	for _, up := range s.t.upstream {
		if up.v.Load() == pops {
			return false
		}
	}
	return true
}
