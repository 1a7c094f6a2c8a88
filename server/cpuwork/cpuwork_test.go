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
	// How the two costs compare is the machine's business (bench_cpu_work
	// 4000 8000 and BenchmarkSpendCPUCycles report it); the test checks the
	// bookkeeping only.
	for _, s := range st {
		if !(s.MinNs > 0 && s.MinNs <= s.MedianNs && s.MedianNs <= s.MaxNs) || s.Runs != 5 {
			t.Fatalf("bad stats %+v", s)
		}
	}
	if st[0].WallMinNs <= 0 {
		t.Fatalf("no CPU time measured: %+v", st[0])
	}
	if _, err := MeasureInterleaved([]int{-1}, 1, time.Millisecond); err == nil {
		t.Fatal("negative iterations accepted")
	}
}

// linearCost is a cost model for the calibration search: a fixed cost per
// call plus a cost per iteration, optionally scaled by a factor that changes
// from one measurement to the next (a noisy neighbour).
type linearCost struct {
	fixedNs, perIterNs float64
	noise              []float64 // factor per call, cycled; empty: none
	calls              int
}

func (m *linearCost) measure(n int) (Stats, error) {
	f := 1.0
	if len(m.noise) > 0 {
		f = m.noise[m.calls%len(m.noise)]
	}
	m.calls++
	ns := (m.fixedNs + m.perIterNs*float64(n)) * f
	return Stats{Iterations: n, Runs: 1, CallsPerRun: 1, MedianNs: ns, MinNs: ns, MaxNs: ns}, nil
}

func TestIterationsForFindsTheTargetOfACostModel(t *testing.T) {
	for _, tc := range []struct {
		name    string
		model   linearCost
		target  time.Duration
		wantMin int
		wantMax int
	}{
		// (740 - 20) / 0.5 = 1440 iterations.
		{"seed target", linearCost{fixedNs: 20, perIterNs: 0.5}, 740 * time.Nanosecond, 1426, 1454},
		{"long target", linearCost{fixedNs: 20, perIterNs: 0.5}, 80 * time.Microsecond, 159_800, 160_000},
		{"slow core", linearCost{fixedNs: 20, perIterNs: 1.0}, 80 * time.Microsecond, 79_900, 80_000},
		// A fixed cost above the target: a small count, never 0 or less.
		{"fixed cost above target", linearCost{fixedNs: 2000, perIterNs: 0.5}, 740 * time.Nanosecond, 1, 200},
		// The probe ran 2x slow, later passes normal: the correction passes
		// bring the count back to the model's answer within a few percent.
		{"slow probe", linearCost{fixedNs: 20, perIterNs: 0.5, noise: []float64{2, 1, 1, 1}}, 20 * time.Microsecond, 39_000, 40_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.model
			n, st, err := iterationsFor(tc.target, m.measure)
			if err != nil {
				t.Fatal(err)
			}
			if n < tc.wantMin || n > tc.wantMax {
				t.Fatalf("iterations %d, want %d..%d", n, tc.wantMin, tc.wantMax)
			}
			if st.Iterations != n {
				t.Fatalf("returned stats are for %d iterations, not %d", st.Iterations, n)
			}
		})
	}
}

func TestIterationsForRefusesBadInput(t *testing.T) {
	m := linearCost{fixedNs: 20, perIterNs: 0.5}
	if _, _, err := iterationsFor(0, m.measure); err == nil {
		t.Fatal("target 0 accepted")
	}
	zero := func(int) (Stats, error) { return Stats{}, nil }
	if _, _, err := iterationsFor(time.Microsecond, zero); err == nil {
		t.Fatal("a probe that measured 0 ns accepted")
	}
	failing := func(int) (Stats, error) { return Stats{}, fmt.Errorf("no clock") }
	if _, _, err := iterationsFor(time.Microsecond, failing); err == nil {
		t.Fatal("a failing measurement was not reported")
	}
}

// The real search runs end to end (its answer depends on the machine, so
// only its shape is checked).
func TestIterationsForRuns(t *testing.T) {
	n, st, err := IterationsFor(20*time.Microsecond, 3, 2*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if n < 1 || st.Iterations != n || st.MedianNs <= 0 {
		t.Fatalf("iterations %d, stats %+v", n, st)
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

// The loop really runs its count: 16 times the iterations cost clearly
// more CPU than once the count. This is a check that the assembly of each
// GOARCH loops (the arm64 one runs under qemu-user in make test), not a
// speed claim: the expected ratio is 16 and the bound is 4, while a loop
// that returns at once or ignores its count gives about 1.
func TestSpinCostGrowsWithIterations(t *testing.T) {
	st, err := MeasureInterleaved([]int{1 << 16, 1 << 20}, 5, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if ratio := st[1].MinNs / st[0].MinNs; ratio < 4 {
		t.Fatalf("2^20 iterations cost %.0f ns, 2^16 cost %.0f ns: ratio %.1f, want about 16", st[1].MinNs, st[0].MinNs, ratio)
	}
}
