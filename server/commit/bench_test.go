package commit

import (
	"fmt"
	"testing"
	"time"

	"weaseldb/server/metrics"
	"weaseldb/server/pipeline"
)

// BenchmarkResolveBatch compares the resolve stage taking one item per
// batch (the seed's) with taking a whole push at once (the default), for
// GET /ok entries with the seed's benchmark spin (4000 iterations, about
// 740 ns on the seed's machine) in pushes of 32 (one event-loop turn).
//
//   - closed: one push in flight; "push-ns" is the time from Submit until
//     the release stage has handled all 32, which one-at-a-time resolving
//     should lower (persist and release start on the first items while
//     resolve spins on the next);
//   - open: pushes back to back (the ring fills); ns/op is per request,
//     the throughput.
//
// Both batch sizes run in one process; -count interleaves them:
//
//	go test -run '^$' -bench ResolveBatch -count 6 ./server/commit
//
// Figures taken on a shared machine are not publishable (docs/api.md).
func BenchmarkResolveBatch(b *testing.B) {
	for _, strategy := range []pipeline.WaitStrategy{pipeline.WaitIfStageEmpty, pipeline.WaitIfUpstreamIdle} {
		for _, load := range []string{"closed", "open"} {
			for _, batch := range []int{1, 0} {
				name := fmt.Sprintf("%v/%s/resolve_batch=1", strategy, load)
				if batch == 0 {
					name = fmt.Sprintf("%v/%s/resolve_batch=all", strategy, load)
				}
				b.Run(name, func(b *testing.B) { benchResolveBatch(b, strategy, batch, load == "closed") })
			}
		}
	}
}

func benchResolveBatch(b *testing.B, strategy pipeline.WaitStrategy, resolveBatch int, closed bool) {
	const push = 32
	done := make(chan struct{}, 1)
	var released int // release thread only (one thread)
	cp, err := New(Options[*testConn]{Responder: testResponder{}, WaitStrategy: strategy, ReleaseThreads: 1, OkResolveIterations: 4000, Metrics: metrics.New(),
		ResolveBatch: resolveBatch, LgSlotCount: 10,
		released: func(*tEntry) {
			if released++; released%push == 0 && closed {
				done <- struct{}{}
			}
		}})
	if err != nil {
		b.Fatal(err)
	}
	batch := make([]tEntry, push)
	var pushTime time.Duration
	pushes := 0
	b.ResetTimer()
	for sent := 0; sent < b.N; sent += push {
		for i := range batch {
			batch[i] = tEntry{Kind: KindOK, Reply: Reply[*testConn]{Framing: keepAlive}, Route: metrics.RouteOK}
		}
		start := time.Now()
		if err := cp.Submit(batch); err != nil {
			b.Fatal(err)
		}
		if closed {
			<-done
			pushTime += time.Since(start)
			pushes++
		}
	}
	cp.Close()
	b.StopTimer()
	if closed {
		b.ReportMetric(float64(pushTime.Nanoseconds())/float64(pushes), "push-ns")
	}
}
