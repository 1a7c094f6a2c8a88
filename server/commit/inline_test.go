package commit

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"weaseldb/internal/monoclock"
	"weaseldb/server/metrics"
	"weaseldb/server/pipeline"
)

// Where it applies, RunToCompletion runs every stage on the submitting
// goroutine: when Submit returns, every entry went through all four stages
// (the release hook heard it), in order, with no stage goroutine woken;
// each release thread still takes only the entries it owns.
func TestSubmitRunsTheStagesToCompletion(t *testing.T) {
	for _, threads := range []int{1, 3} {
		t.Run(fmt.Sprint(threads), func(t *testing.T) {
			resolved := 0
			var order []int64
			cp, err := New(Options[*testConn]{Responder: testResponder{}, WaitStrategy: pipeline.WaitIfStageEmpty,
				ReleaseThreads: threads, RunToCompletion: true, OkResolveIterations: 1,
				spendIterations: func(int) { resolved++ },
				released:        func(e *tEntry) { order = append(order, e.Version) }})
			if err != nil {
				t.Fatal(err)
			}
			defer cp.Close()
			if !cp.RunsInline() {
				t.Fatal("RunsInline = false with WaitIfStageEmpty and nothing pinned or locked")
			}
			for round := range 3 {
				batch := make([]tEntry, 5)
				for i := range batch {
					batch[i] = tEntry{Kind: KindOK, Route: metrics.RouteOK, Start: monoclock.Now(), Version: int64(round*5 + i)}
				}
				if err := cp.Submit(batch); err != nil {
					t.Fatal(err)
				}
				// Read without a lock: written by this goroutine alone.
				if want := (round + 1) * 5; resolved != want || len(order) != want {
					t.Fatalf("after Submit %d: resolved %d, released %d, want %d each", round, resolved, len(order), want)
				}
			}
			for i, v := range order {
				if threads == 1 && v != int64(i) {
					t.Fatalf("released in order %v", order)
				}
			}
		})
	}
}

// RunToCompletion leaves stages with threads of their own, or a strategy
// that spins, as they were: their own goroutines wait by the strategy.
func TestRunToCompletionOnlyOnSharedParkingStages(t *testing.T) {
	cases := []struct {
		name   string
		opt    Options[*testConn]
		inline bool
	}{
		{"WaitIfStageEmpty unpinned", Options[*testConn]{WaitStrategy: pipeline.WaitIfStageEmpty, RunToCompletion: true}, true},
		{"not asked", Options[*testConn]{WaitStrategy: pipeline.WaitIfStageEmpty}, false},
		{"WaitIfUpstreamIdle", Options[*testConn]{WaitStrategy: pipeline.WaitIfUpstreamIdle, RunToCompletion: true}, false},
		{"Never", Options[*testConn]{WaitStrategy: pipeline.Never, RunToCompletion: true}, false},
		{"locked threads", Options[*testConn]{WaitStrategy: pipeline.WaitIfStageEmpty, RunToCompletion: true, LockThreads: true, Unnamed: true}, false},
		{"a pinned stage", Options[*testConn]{WaitStrategy: pipeline.WaitIfStageEmpty, RunToCompletion: true, StageCPUs: [][]int{nil, {0}}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.opt.Responder, c.opt.ReleaseThreads = testResponder{}, 1
			cp, err := New(c.opt)
			if err != nil {
				t.Fatal(err)
			}
			defer cp.Close()
			if got := cp.RunsInline(); got != c.inline {
				t.Fatalf("RunsInline = %v, want %v", got, c.inline)
			}
		})
	}
}

// A goroutine that submits takes a stage only a few times in a row for
// work others keep pushing meanwhile, then the stage's goroutine takes
// over: its Submit returns (a loop gets back to its connections) while
// the feed goes on, and every entry is still released once.
func TestSubmitHandsAStageOnWhileOthersKeepPushing(t *testing.T) {
	const maxFed = 10_000
	var submitted atomic.Bool // the first Submit returned: stop feeding
	var fed, accepted, released atomic.Int64
	var cp *Pipeline[*testConn]
	one := func() []tEntry {
		return []tEntry{{Kind: KindOK, Route: metrics.RouteOK, Start: monoclock.Now()}}
	}
	cp, err := New(Options[*testConn]{Responder: testResponder{}, WaitStrategy: pipeline.WaitIfStageEmpty,
		ReleaseThreads: 1, RunToCompletion: true, OkResolveIterations: 1,
		// Resolving an entry, another producer pushes the next (it finds
		// resolve held and moves on), so resolve always has more to do.
		spendIterations: func(int) {
			if submitted.Load() || fed.Add(1) > maxFed {
				return
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				// The stage's goroutine may still feed as Close begins.
				if err := cp.Submit(one()); err == nil {
					accepted.Add(1)
				} else if !errors.Is(err, ErrClosed) {
					t.Error(err)
				}
			}()
			<-done
		},
		released: func(*tEntry) { released.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.Submit(one()); err != nil {
		t.Fatal(err)
	}
	submitted.Store(true)
	if n := fed.Load(); n >= maxFed {
		t.Fatalf("Submit returned only once the feed ran dry (%d pushed by others): it never handed resolve on", n)
	}
	cp.Close()
	if want := accepted.Load() + 1; released.Load() != want {
		t.Fatalf("released %d, want %d", released.Load(), want)
	}
}

// A driver's batches share their boundaries: each batch starts where the
// one before it ended (one clock read between two stages, not two), and
// its duration is the time between the two.
func TestBatchClockChainsBatches(t *testing.T) {
	var c batchClock
	first := c.start()
	if first == 0 {
		t.Fatal("the first batch's start read no clock")
	}
	if again := c.start(); again != first {
		t.Fatalf("start read the clock again before a stop: %d then %d", first, again)
	}
	at := first
	for i := range 3 {
		busy := c.stop(at)
		if busy < 0 {
			t.Fatalf("batch %d: negative duration %v", i, busy)
		}
		next := c.start()
		if time.Duration(next-at) != busy {
			t.Fatalf("batch %d: the next batch starts %v after this one, want its duration %v", i, time.Duration(next-at), busy)
		}
		at = next
	}
}
