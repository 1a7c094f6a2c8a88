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
}

// StageThread returns the handle of thread `thread` of stage `stage`.
func (p *Pipeline[T]) StageThread(stage, thread int) StageThread[T] {
	return StageThread[T]{p: p, t: p.thread(stage, thread)}
}

// TryAcquire is Acquire without a wait: the next batch of at most maxBatch
// items (0: no limit), or an empty batch when upstream released nothing new.
func (s StageThread[T]) TryAcquire(maxBatch int) StageBatch[T] {
	return s.p.take(s.t, maxBatch, false)
}

// Pending reports whether every upstream thread has released items that
// this thread has not yet released. Safe from any goroutine; meant for one
// that just stopped driving the thread (after releasing every batch it
// acquired), to see whether items came in while it was finishing, which
// no one else may have taken on.
func (s StageThread[T]) Pending() bool {
	pops := s.t.pops.v.Load()
	for _, up := range s.t.upstream {
		if up.v.Load() == pops {
			return false
		}
	}
	return true
}
