package artifacts

// StageWait is one commit stage's weaseldb_pipeline_stage_wait_seconds
// over a run's measured window (the difference of two /metrics scrapes
// around it): how long each batch waited before the stage took it.
type StageWait struct {
	UpperS []float64 `json:"upper_s"` // the buckets' upper bounds, seconds
	// Counts are the batches per bucket, len(UpperS)+1 of them: the last
	// counts the waits above every bound.
	Counts []uint64 `json:"counts"`
	SumS   float64  `json:"sum_s"` // the waits summed, seconds
}

// Batches is how many batches the window recorded.
func (w StageWait) Batches() uint64 {
	var n uint64
	for _, c := range w.Counts {
		n += c
	}
	return n
}

// Add adds o's counts to w's (two rounds of one setup); false when their
// buckets differ (servers of different builds).
func (w *StageWait) Add(o StageWait) bool {
	if w.Counts == nil {
		w.UpperS, w.Counts, w.SumS = append([]float64(nil), o.UpperS...), append([]uint64(nil), o.Counts...), o.SumS
		return true
	}
	if len(o.UpperS) != len(w.UpperS) || len(o.Counts) != len(w.Counts) {
		return false
	}
	for i, u := range o.UpperS {
		if u != w.UpperS[i] {
			return false
		}
	}
	for i, c := range o.Counts {
		w.Counts[i] += c
	}
	w.SumS += o.SumS
	return true
}

// Quantile is the q-quantile wait in seconds, interpolated linearly within
// its bucket as Prometheus's histogram_quantile does (the first bucket from
// 0); a quantile in the last, unbounded bucket is its lower bound. false
// when no batch was recorded.
func (w StageWait) Quantile(q float64) (float64, bool) {
	total := w.Batches()
	if total == 0 || len(w.UpperS) == 0 || len(w.Counts) != len(w.UpperS)+1 {
		return 0, false
	}
	rank := q * float64(total)
	var below uint64
	for i, c := range w.Counts {
		if c > 0 && float64(below+c) >= rank {
			if i == len(w.UpperS) {
				return w.UpperS[i-1], true
			}
			lo := 0.0
			if i > 0 {
				lo = w.UpperS[i-1]
			}
			return lo + (w.UpperS[i]-lo)*(rank-float64(below))/float64(c), true
		}
		below += c
	}
	return w.UpperS[len(w.UpperS)-1], true
}
