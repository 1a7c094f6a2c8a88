package cpuwork

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// minCallTime returns the fastest of several timed calls: the least disturbed
// by other processes on a shared machine.
func minCallTime(iterations, tries int) time.Duration {
	best := time.Duration(1<<63 - 1)
	for range tries {
		start := time.Now()
		SpendCPUCycles(iterations)
		best = min(best, time.Since(start))
	}
	return best
}

func TestCostIsLinear(t *testing.T) {
	// Ratios only: multiplying the count must multiply the cost. The two
	// counts are timed alternately after a warm-up, so a change of clock speed
	// or a noisy neighbour hits both alike; the fastest of each is kept.
	const base = 1_000_000
	SpendCPUCycles(50 * base) // let the core reach its steady clock
	for _, factor := range []int{2, 4} {
		t.Run(fmt.Sprintf("x%d", factor), func(t *testing.T) {
			small, large := time.Duration(1<<63-1), time.Duration(1<<63-1)
			for range 15 {
				small = min(small, minCallTime(base, 1))
				large = min(large, minCallTime(base*factor, 1))
			}
			ratio := float64(large) / float64(small)
			if ratio < float64(factor)*0.6 || ratio > float64(factor)*1.6 {
				t.Fatalf("%d iterations took %v, %d took %v: ratio %.2f, want about %d", base, small, base*factor, large, ratio, factor)
			}
		})
	}
}

func TestNonPositiveCountsReturn(t *testing.T) {
	for _, n := range []int{0, -1, -1 << 40} {
		SpendCPUCycles(n) // must return at once, not loop 2^64 times
	}
}

// A huge count must not hold its P: with GOMAXPROCS=1 another goroutine still
// runs while the spin is in progress.
func TestLongSpinLetsOthersRun(t *testing.T) {
	perIter := float64(minCallTime(1_000_000, 5)) / 1e6
	iterations := int(float64(400*time.Millisecond) / max(perIter, 0.01))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))

	var spinning, finished atomic.Bool
	done := make(chan struct{})
	go func() {
		spinning.Store(true)
		SpendCPUCycles(iterations)
		finished.Store(true)
		close(done)
	}()
	for !spinning.Load() {
		runtime.Gosched()
	}
	time.Sleep(time.Millisecond) // needs the P back while the spin runs
	if finished.Load() {
		t.Errorf("the sleeping goroutine ran only after a %d-iteration spin finished", iterations)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("spin did not finish")
	}
}

func TestMeasure(t *testing.T) {
	st, err := Measure(4000, 3, 2*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if st.Runs != 3 || st.Iterations != 4000 || st.CallsPerRun < 1 {
		t.Fatalf("bad stats %+v", st)
	}
	if !(st.MinNs > 0 && st.MinNs <= st.MedianNs && st.MedianNs <= st.MaxNs) {
		t.Fatalf("want 0 < min <= median <= max, got %+v", st)
	}
	if _, err := Measure(10, 0, time.Millisecond); err == nil {
		t.Fatal("runs=0 accepted")
	}
}

func TestMeasureInterleaved(t *testing.T) {
	st, err := MeasureInterleaved([]int{20_000, 80_000}, 5, 2*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 2 || st[0].Iterations != 20_000 || st[1].Iterations != 80_000 {
		t.Fatalf("bad stats %+v", st)
	}
	if ratio := st[1].MinNs / st[0].MinNs; ratio < 2 || ratio > 8 {
		t.Fatalf("80k/20k iterations cost ratio %.2f, want about 4", ratio)
	}
	if st[0].WallMinNs <= 0 {
		t.Fatalf("no CPU time measured: %+v", st[0])
	}
	if _, err := MeasureInterleaved([]int{-1}, 1, time.Millisecond); err == nil {
		t.Fatal("negative iterations accepted")
	}
}

func TestIterationsForScalesWithTarget(t *testing.T) {
	small, _, err := IterationsFor(20*time.Microsecond, 3, 2*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	large, _, err := IterationsFor(80*time.Microsecond, 3, 2*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if ratio := float64(large) / float64(small); ratio < 2 || ratio > 8 {
		t.Fatalf("iterations for 20µs = %d, for 80µs = %d: ratio %.2f, want about 4", small, large, ratio)
	}
	if _, _, err := IterationsFor(0, 3, time.Millisecond); err == nil {
		t.Fatal("target 0 accepted")
	}
}

func BenchmarkSpendCPUCycles(b *testing.B) {
	for _, n := range []int{0, 10, 100, 1000, 4000, 8000, 100_000} {
		b.Run(fmt.Sprintf("iters=%d", n), func(b *testing.B) {
			for b.Loop() {
				SpendCPUCycles(n)
			}
			if n > 0 {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/iter")
			}
		})
	}
}

func TestPauseReturns(t *testing.T) {
	for range 1000 {
		Pause()
	}
}

func BenchmarkPause(b *testing.B) {
	for b.Loop() {
		Pause()
	}
}

func TestSpinForNeverReturnsEarly(t *testing.T) {
	// A lower bound only: SpinFor reads the clock, so it can never return
	// before its deadline; how far past it is the machine's business.
	for _, d := range []time.Duration{0, -time.Second, time.Microsecond, 50 * time.Microsecond, 2 * time.Millisecond} {
		start := time.Now()
		SpinFor(d)
		if got := time.Since(start); got < d {
			t.Errorf("SpinFor(%v) returned after %v", d, got)
		}
	}
}

func BenchmarkSpinFor2us(b *testing.B) {
	for b.Loop() {
		SpinFor(2 * time.Microsecond)
	}
}
