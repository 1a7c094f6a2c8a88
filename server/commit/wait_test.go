package commit

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"weaseldb/internal/monoclock"
	"weaseldb/server/metrics"
	"weaseldb/server/pipeline"
)

// A batch that sits behind a stalled stage shows the stall as that stage's
// wait: the resolve stage is held inside its first batch while the
// sequence stage hands it a second; once resolve goes on, the second
// batch's wait is at least the stall. Every stage records one wait per
// batch it records (a later stage may take both requests in one batch),
// with stage goroutines and run to completion alike.
func TestStalledStageShowsAWait(t *testing.T) {
	const stall = 20 * time.Millisecond
	for _, inline := range []bool{false, true} {
		t.Run(fmt.Sprintf("run to completion %v", inline), func(t *testing.T) {
			m := metrics.New()
			entered, unblock := make(chan struct{}), make(chan struct{})
			var spins atomic.Int32
			released := make(chan struct{}, 2)
			cp, err := New(Options[*testConn]{Responder: testResponder{}, WaitStrategy: pipeline.WaitIfStageEmpty,
				ReleaseThreads: 1, RunToCompletion: inline, OkResolveSpin: time.Nanosecond, Metrics: m, StageWaits: true,
				spinFor: func(time.Duration) {
					if spins.Add(1) == 1 {
						close(entered)
						<-unblock
					}
				},
				released: func(*tEntry) { released <- struct{}{} }})
			if err != nil {
				t.Fatal(err)
			}
			defer cp.Close()
			if cp.RunsInline() != inline {
				t.Fatalf("RunsInline = %v, want %v", cp.RunsInline(), inline)
			}
			submitted := make(chan error, 2)
			submit := func() {
				submitted <- cp.Submit([]tEntry{{Kind: KindOK, Route: metrics.RouteOK, Start: monoclock.Now()}})
			}
			go submit()
			<-entered // resolve holds the first batch
			go submit()
			// The sequence stage took the second batch and released it.
			waitForScrape(t, m, `weaseldb_pipeline_batch_size_count{stage="sequence"} 2`)
			time.Sleep(stall) // the stall itself: resolve cannot take the batch before unblock
			close(unblock)
			for range 2 {
				<-released
				if err := <-submitted; err != nil {
					t.Fatal(err)
				}
			}
			out := scrape(t, m)
			if sum := sampleValue(t, out, `weaseldb_pipeline_stage_wait_seconds_sum{stage="resolve"}`); sum < stall.Seconds() {
				t.Errorf("resolve's waits sum to %gs, want at least the %v stall\n%s", sum, stall, grep(out, "wait_seconds"))
			}
			for _, stage := range metrics.StageNames {
				waits := sampleValue(t, out, `weaseldb_pipeline_stage_wait_seconds_count{stage="`+stage+`"}`)
				batches := sampleValue(t, out, `weaseldb_pipeline_batch_size_count{stage="`+stage+`"}`)
				if waits != batches || waits < 1 {
					t.Errorf("stage %s: %g waits for %g batches, want one per batch", stage, waits, batches)
				}
			}
		})
	}
}

func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	out, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// waitForScrape polls the metrics until a line reads want (the stage
// goroutines record it when they get to it).
func waitForScrape(t *testing.T, m *metrics.Metrics, want string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if strings.Contains(scrape(t, m), want+"\n") {
			return
		}
	}
	t.Fatalf("no %q in\n%s", want, scrape(t, m))
}

// sampleValue is the value of the sample line that starts with name.
func sampleValue(t *testing.T, out, name string) float64 {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			return f
		}
	}
	t.Fatalf("no sample %s in\n%s", name, out)
	return 0
}

// Under run to completion a driver chains its clock from batch to batch,
// so the clock it last read can be older than a request pushed since by
// another goroutine. The wait recorded is then read afresh when the batch
// is taken: never negative. Here the sequence stage is held while a
// request is pushed, then driven with a clock read before that push.
func TestRunToCompletionWaitsAreNeverNegative(t *testing.T) {
	m := metrics.New()
	cp, err := New(Options[*testConn]{Responder: testResponder{}, WaitStrategy: pipeline.WaitIfStageEmpty,
		ReleaseThreads: 1, RunToCompletion: true, OkResolveIterations: 1, spendIterations: func(int) {},
		Metrics: m, StageWaits: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	stale := batchClock{at: monoclock.Now()}
	for monoclock.Now() == stale.at {
	}
	seq := &cp.slots[0]
	seq.held.Store(true) // another driver holds the sequence stage: the push leaves the request queued
	if err := cp.Submit([]tEntry{{Kind: KindOK, Route: metrics.RouteOK, Start: monoclock.Now()}}); err != nil {
		t.Fatal(err)
	}
	seq.held.Store(false)
	for i := range cp.slots {
		cp.runSlot(&cp.slots[i], false, &stale)
	}
	out := scrape(t, m)
	for _, stage := range metrics.StageNames {
		if n := sampleValue(t, out, `weaseldb_pipeline_stage_wait_seconds_count{stage="`+stage+`"}`); n != 1 {
			t.Fatalf("stage %s recorded %g waits, want 1\n%s", stage, n, grep(out, "wait_seconds"))
		}
		if sum := sampleValue(t, out, `weaseldb_pipeline_stage_wait_seconds_sum{stage="`+stage+`"}`); sum < 0 {
			t.Errorf("stage %s waited %gs: a wait is never negative\n%s", stage, sum, grep(out, "wait_seconds"))
		}
	}
}
