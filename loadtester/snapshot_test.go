package loadtester

import (
	"testing"
	"time"
	"weaseldb/loadtester/result"
)

// A run's snapshots go warm-up, measured, drain, done, in that order; the
// last one's counts are the result's, the latencies handed over add up
// to the measured requests answered, and the requests in flight and the
// connections open stay within what the run allows.
func TestSnapshotsFollowTheRun(t *testing.T) {
	s := startTestServer(t, "tcp", nil)
	cfg := testConfig(s)
	cfg.Concurrency, cfg.Warmup, cfg.Duration = 2, 300*time.Millisecond, 600*time.Millisecond
	cfg.StatsInterval = 100 * time.Millisecond
	var phases []result.Phase
	var last result.Snapshot
	var histCount int64
	var fullyConnected bool
	maxInFlight := int64(cfg.Concurrency * max(cfg.Pipeline, 1))
	cfg.OnSnapshot = func(sn result.Snapshot) {
		if sn.InFlight < 0 || sn.InFlight > maxInFlight || sn.OpenConnections > cfg.Concurrency {
			t.Errorf("%s snapshot: %d in flight, %d connections; want 0..%d, at most %d",
				sn.Phase, sn.InFlight, sn.OpenConnections, maxInFlight, cfg.Concurrency)
		}
		fullyConnected = fullyConnected || sn.Phase == result.PhaseMeasured && sn.OpenConnections == cfg.Concurrency
		if len(phases) == 0 || phases[len(phases)-1] != sn.Phase {
			phases = append(phases, sn.Phase)
		}
		if sn.Hist != nil {
			histCount += sn.Hist.TotalCount()
		}
		last = sn
	}
	res := runOK(t, cfg)
	want := []result.Phase{result.PhaseWarmup, result.PhaseMeasured, result.PhaseDrain, result.PhaseDone}
	if len(phases) != len(want) {
		t.Fatalf("phases %v, want %v", phases, want)
	}
	for i := range want {
		if phases[i] != want[i] {
			t.Fatalf("phases %v, want %v", phases, want)
		}
	}
	if last.Measured.Answered != res.Answered || res.Answered == 0 {
		t.Errorf("last snapshot answered %d, result %d (want equal, > 0)", last.Measured.Answered, res.Answered)
	}
	if last.Warmup.Answered != res.Warmup.Answered {
		t.Errorf("last snapshot's warm-up answered %d, result's %d", last.Warmup.Answered, res.Warmup.Answered)
	}
	if last.Measured.Unfinished != res.Unfinished || last.Measured.Dropped != res.Dropped || last.InFlight != 0 {
		t.Errorf("last snapshot unfinished %d dropped %d in flight %d, result %d %d",
			last.Measured.Unfinished, last.Measured.Dropped, last.InFlight, res.Unfinished, res.Dropped)
	}
	if !fullyConnected {
		t.Errorf("no measured snapshot saw the %d connections open", cfg.Concurrency)
	}
	if histCount != res.Answered {
		t.Errorf("snapshots' histograms hold %d latencies, the run answered %d", histCount, res.Answered)
	}
}

// Each interval splits its errors by kind, and the kinds add up to its
// error count.
func TestIntervalErrorsByKind(t *testing.T) {
	s := startTestServer(t, "tcp", func(s *testServer) {
		s.decide = func(n int64) reply {
			if n%5 == 0 {
				return reply{act: actTruncate}
			}
			return reply{}
		}
	})
	cfg := testConfig(s)
	cfg.Duration, cfg.StatsInterval, cfg.MaxErrors = 600*time.Millisecond, 200*time.Millisecond, 1<<30
	res := runOK(t, cfg)
	if res.Errors == 0 {
		t.Fatal("no errors: the server did not cut responses")
	}
	for i, iv := range res.Intervals {
		var sum int64
		for _, n := range iv.ErrorsByKind {
			sum += n
		}
		if sum != iv.Errors {
			t.Errorf("interval %d: errors %d, by kind %v (sum %d)", i, iv.Errors, iv.ErrorsByKind, sum)
		}
	}
}
