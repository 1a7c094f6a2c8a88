package loadtester

import (
	"time"
	"weaseldb/loadtester/result"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// tallyOf is the Tally of a phase's counters.
func tallyOf(c *counters) result.Tally {
	t := result.Tally{Answered: c.requests, FailedByKind: map[string]int64{}}
	for k, n := range c.failedBy {
		if n > 0 {
			t.FailedByKind[errorKind(k).String()] = n
		}
	}
	return t
}

// snapshot hands the run so far to Config.OnSnapshot, if set. hist is the
// measured latencies gained since the last one (nil: none).
func (c *collector) snapshot(phase result.Phase, rate float64, hist *hdrhistogram.Histogram) {
	report := c.r.cfg.OnSnapshot
	if report == nil {
		return
	}
	s := result.Snapshot{Phase: phase, At: time.Now(), Measured: tallyOf(&c.counts), Warmup: tallyOf(&c.warm),
		InFlight: c.inFlight, OpenConnections: c.openConns, TargetRate: c.r.cfg.askedRate(),
		IntervalRate: rate, Hist: hist}
	if phase == result.PhaseDone {
		s.Measured.Unfinished, s.Measured.Dropped = c.unfinished, c.dropped
		s.Warmup.Unfinished, s.Warmup.Dropped = c.warmUnfinished, c.warmDropped
		s.InFlight = 0
	}
	report(s)
}
