package livemetrics

import "weaseldb/loadtester/result"

// state is the run so far as the metrics show it. The Exporter owns it
// under its mutex: Observe writes it on the engine's collector goroutine,
// scrapes read it on the HTTP server's goroutines.
type state struct {
	phase        result.Phase
	measured     tallies // the current run's, as the last snapshot said
	warmup       tallies
	doneMeasured tallies // runs that finished before it (rate steps, find-rate)
	doneWarmup   tallies
	inFlight     int64
	openConns    int
	targetRate   float64
	achievedRate float64
	latency      latencyHistogram
}

// tallies are the counts of one phase by outcome; failed by kind.
type tallies struct {
	answered, unfinished, dropped int64
	failed                        map[string]int64
}

func talliesOf(t result.Tally) tallies {
	out := tallies{answered: t.Answered, unfinished: t.Unfinished, dropped: t.Dropped, failed: map[string]int64{}}
	for k, n := range t.FailedByKind {
		out.failed[k] = n
	}
	return out
}

// plus is a + b (neither changed).
func (a tallies) plus(b tallies) tallies {
	out := tallies{answered: a.answered + b.answered, unfinished: a.unfinished + b.unfinished,
		dropped: a.dropped + b.dropped, failed: map[string]int64{}}
	for k, n := range a.failed {
		out.failed[k] += n
	}
	for k, n := range b.failed {
		out.failed[k] += n
	}
	return out
}

// observe takes one snapshot. Counters stay monotonic over a sequence of
// runs (each rate step is a run of its own that counts from zero): a run's
// final counts are banked when it is done.
func (s *state) observe(sn result.Snapshot) {
	s.phase = sn.Phase
	s.measured, s.warmup = talliesOf(sn.Measured), talliesOf(sn.Warmup)
	s.inFlight, s.openConns = sn.InFlight, sn.OpenConnections
	s.targetRate = sn.TargetRate
	if sn.Phase == result.PhaseWarmup || sn.Phase == result.PhaseMeasured {
		s.achievedRate = sn.IntervalRate
	}
	if sn.Hist != nil {
		s.latency.add(sn.Hist)
	}
	if sn.Phase == result.PhaseDone {
		s.doneMeasured = s.doneMeasured.plus(s.measured)
		s.doneWarmup = s.doneWarmup.plus(s.warmup)
		s.measured, s.warmup = tallies{}, tallies{}
		s.achievedRate = 0
	}
}
