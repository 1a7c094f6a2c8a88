package pipeline

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"weaseldb/internal/procstat"
)

// testItem carries, besides its identity, one mark per stage: the thread of
// stage s that owns the item (Index % threads) writes marks[s], and stage s+1
// checks it. That exercises the memory ordering from one stage to the next.
type testItem struct {
	producer int
	seq      uint64
	shutdown bool
	marks    [8]uint64
}

// waitGroupTimeout waits for wg, failing the test instead of hanging.
func waitGroupTimeout(t *testing.T, wg *sync.WaitGroup, d time.Duration, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Fatalf("%s did not finish within %v; goroutines:\n%s", what, d, buf)
	}
}

// runStageThread consumes until it has seen one shutdown item per last-stage
// thread, checking that it sees every producer's items once each, in order.
func runStageThread(t *testing.T, p *Pipeline[testItem], stage, thread, producers, maxBatch int, seen *atomic.Int64) {
	threads := p.stages[stage]
	wantShutdowns := p.stages[len(p.stages)-1]
	next := make([]uint64, producers)
	shutdowns := 0
	for shutdowns < wantShutdowns {
		b := p.Acquire(stage, thread, maxBatch, true)
		if b.Len() == 0 {
			t.Errorf("stage %d thread %d: blocking Acquire returned an empty batch", stage, thread)
			return
		}
		for i := range b.Len() {
			it := b.At(i)
			if it.shutdown {
				shutdowns++
				continue
			}
			if it.seq != next[it.producer] {
				t.Errorf("stage %d thread %d: producer %d item %d arrived, want %d", stage, thread, it.producer, it.seq, next[it.producer])
				return
			}
			next[it.producer]++
			if stage > 0 && it.marks[stage-1] != it.seq+1 {
				t.Errorf("stage %d thread %d: item %d/%d lacks stage %d's mark (%d)", stage, thread, it.producer, it.seq, stage-1, it.marks[stage-1])
				return
			}
			if b.Index(i)%uint64(threads) == uint64(thread) {
				it.marks[stage] = it.seq + 1
			}
			seen.Add(1)
		}
		b.Release()
	}
}

// produce pushes items in random batch sizes (1..maxBatch), then, from
// producer 0 once all producers are done, one shutdown item per last-stage
// thread.
func produce(p *Pipeline[testItem], producer int, items uint64, maxBatch int, rng *rand.Rand) {
	for seq := uint64(0); seq < items; {
		want := min(1+rng.IntN(maxBatch), int(items-seq))
		b := p.Push(want, true)
		for i := range b.Len() {
			*b.At(i) = testItem{producer: producer, seq: seq}
			seq++
		}
		b.Release()
	}
}

func TestNoItemLostDuplicatedOrReordered(t *testing.T) {
	topologies := [][]int{{1}, {1, 1}, {1, 2, 3, 2}, {2, 1, 3, 1}, {3, 3, 3, 3}}
	for _, strategy := range Strategies() {
		for _, topo := range topologies {
			for _, producers := range []int{1, 3} {
				name := fmt.Sprintf("%v/%v/producers=%d", strategy, topo, producers)
				t.Run(name, func(t *testing.T) {
					items := uint64(2000)
					if strategy != WaitIfStageEmpty && len(topo) > 2 {
						// Spinning goroutines outnumber the cores: keep it short.
						items = 600
					}
					checkPipeline(t, strategy, topo, producers, items)
				})
			}
		}
	}
}

func checkPipeline(t *testing.T, strategy WaitStrategy, topo []int, producers int, items uint64) {
	t.Helper()
	// A small ring wraps many times and fills often.
	p, err := New[testItem](strategy, topo, 3)
	if err != nil {
		t.Fatal(err)
	}
	var seen atomic.Int64
	var stages sync.WaitGroup
	for stage, n := range topo {
		for thread := range n {
			stages.Add(1)
			go func() {
				defer stages.Done()
				runStageThread(t, p, stage, thread, producers, 1+thread*3, &seen)
			}()
		}
	}
	var prods sync.WaitGroup
	for pr := range producers {
		prods.Add(1)
		go func() {
			defer prods.Done()
			produce(p, pr, items, 5, rand.New(rand.NewPCG(uint64(pr), 7)))
		}()
	}
	waitGroupTimeout(t, &prods, 60*time.Second, "producers")
	lastThreads := topo[len(topo)-1]
	b := p.Push(lastThreads, true)
	if b.Len() != lastThreads {
		t.Fatalf("pushed %d shutdown slots, want %d", b.Len(), lastThreads)
	}
	for i := range b.Len() {
		*b.At(i) = testItem{shutdown: true}
	}
	b.Release()
	waitGroupTimeout(t, &stages, 60*time.Second, "stage threads after shutdown")
	totalThreads := 0
	for _, n := range topo {
		totalThreads += n
	}
	if want := int64(totalThreads) * int64(producers) * int64(items); seen.Load() != want {
		t.Fatalf("threads saw %d items in all, want %d (every thread sees every item)", seen.Load(), want)
	}
}

func TestFullRingBlocksProducer(t *testing.T) {
	for _, strategy := range Strategies() {
		t.Run(strategy.String(), func(t *testing.T) {
			p, err := New[int](strategy, []int{1, 2}, 2) // 4 slots
			if err != nil {
				t.Fatal(err)
			}
			b := p.Push(4, true)
			if b.Len() != 4 {
				t.Fatalf("Push(4) into an empty 4-slot ring gave %d slots", b.Len())
			}
			b.Release()
			if b := p.Push(1, false); b.Len() != 0 {
				t.Fatalf("non-blocking Push into a full ring gave %d slots, want 0", b.Len())
			}
			pushed := make(chan int, 1)
			go func() {
				b := p.Push(2, true)
				pushed <- b.Len()
				b.Release()
			}()
			select {
			case n := <-pushed:
				t.Fatalf("blocking Push returned %d slots while the ring was full", n)
			case <-time.After(50 * time.Millisecond):
			}
			// Stage 0 releases everything; the ring stays full until both
			// last-stage threads release.
			s0 := p.Acquire(0, 0, 0, true)
			s0.Release()
			s1 := p.Acquire(1, 0, 2, true)
			s1.Release()
			select {
			case n := <-pushed:
				t.Fatalf("Push returned %d slots before every last-stage thread released", n)
			case <-time.After(50 * time.Millisecond):
			}
			s2 := p.Acquire(1, 1, 1, true)
			s2.Release()
			select {
			case <-pushed:
				t.Fatal("Push got 2 slots when only 1 was free")
			case <-time.After(50 * time.Millisecond):
			}
			s2 = p.Acquire(1, 1, 1, true)
			s2.Release()
			select {
			case n := <-pushed:
				if n != 2 {
					t.Fatalf("Push returned %d slots, want 2", n)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Push still blocked after the last stage freed room")
			}
		})
	}
}

func TestAcquireWithoutBlocking(t *testing.T) {
	for _, strategy := range Strategies() {
		t.Run(strategy.String(), func(t *testing.T) {
			p, err := New[int](strategy, []int{1, 1}, 4)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan StageBatch[int], 1)
			go func() { done <- p.Acquire(0, 0, 0, false) }()
			select {
			case b := <-done:
				if b.Len() != 0 {
					t.Fatalf("Acquire on an empty stage gave %d items", b.Len())
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Acquire with mayBlock=false blocked")
			}
			b := p.Push(3, true)
			for i := range b.Len() {
				*b.At(i) = 10 + i
			}
			b.Release()
			if got := p.Acquire(1, 0, 0, false); got.Len() != 0 {
				t.Fatalf("stage 1 got %d items before stage 0 released", got.Len())
			}
			s0 := p.Acquire(0, 0, 2, false)
			if s0.Len() != 2 || *s0.At(0) != 10 || *s0.At(1) != 11 || s0.Index(1) != 1 {
				t.Fatalf("stage 0 got len %d, want items 10, 11", s0.Len())
			}
			s0.Release()
			s1 := p.Acquire(1, 0, 0, false)
			if s1.Len() != 2 {
				t.Fatalf("stage 1 got %d items, want the 2 stage 0 released", s1.Len())
			}
			s1.Release()
		})
	}
}

func TestPushClampsToRingSize(t *testing.T) {
	p, err := New[int](WaitIfStageEmpty, []int{1}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if b := p.Push(100, false); b.Len() != 8 {
		t.Fatalf("Push(100) on an 8-slot ring gave %d slots, want 8", b.Len())
	}
	if b := p.Push(0, true); b.Len() != 0 {
		t.Fatalf("Push(0) gave %d slots", b.Len())
	}
	ProducerBatch[int]{}.Release() // an empty batch's Release is a no-op
	StageBatch[int]{}.Release()
}

func TestNewRejectsBadTopology(t *testing.T) {
	tests := []struct {
		name     string
		strategy WaitStrategy
		topo     []int
		lg       int
		want     string
	}{
		{"no stages", WaitIfStageEmpty, nil, 4, "at least one stage"},
		{"empty stage", WaitIfStageEmpty, []int{1, 0}, 4, "stage 1 has 0 threads"},
		{"negative lg", WaitIfStageEmpty, []int{1}, -1, "lgSlotCount"},
		{"huge lg", WaitIfStageEmpty, []int{1}, 31, "lgSlotCount"},
		{"bad strategy", WaitStrategy(9), []int{1}, 4, "invalid wait strategy"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New[int](tc.strategy, tc.topo, tc.lg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestBadIndexPanicsWithAMessage(t *testing.T) {
	p, err := New[int](WaitIfStageEmpty, []int{1, 2}, 2)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		f    func()
		want string
	}{
		{"stage", func() { p.Acquire(2, 0, 0, false) }, "no thread 0 in stage 2"},
		{"thread", func() { p.Acquire(1, 2, 0, false) }, "no thread 2 in stage 1"},
		{"producer slot", func() { p.Push(1, true).At(1) }, "out of range"},
		{"negative", func() { p.Push(1, true).At(-1) }, "out of range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(fmt.Sprint(r), tc.want) {
					t.Fatalf("recovered %v, want a panic containing %q", r, tc.want)
				}
			}()
			tc.f()
		})
	}
}

func TestParseWaitStrategy(t *testing.T) {
	for _, s := range Strategies() {
		got, err := ParseWaitStrategy(s.String())
		if err != nil || got != s {
			t.Fatalf("ParseWaitStrategy(%q) = %v, %v", s.String(), got, err)
		}
	}
	_, err := ParseWaitStrategy("Sometimes")
	if err == nil || !strings.Contains(err.Error(), "WaitIfUpstreamIdle") {
		t.Fatalf("error %v does not name the allowed values", err)
	}
	if s := WaitStrategy(7).String(); s != "WaitStrategy(7)" {
		t.Fatalf("String of an unknown strategy = %q", s)
	}
}

// An idle pipeline's goroutines park: the process uses far less than a core
// while they wait. Behavioural, with a generous bound, since the machine is
// shared and the race detector adds its own work.
func TestIdlePipelineParks(t *testing.T) {
	for _, strategy := range []WaitStrategy{WaitIfStageEmpty, WaitIfUpstreamIdle} {
		t.Run(strategy.String(), func(t *testing.T) {
			p, err := New[testItem](strategy, []int{1, 1, 1, 2}, 6)
			if err != nil {
				t.Fatal(err)
			}
			var seen atomic.Int64
			var stages sync.WaitGroup
			for stage, n := range p.stages {
				for thread := range n {
					stages.Add(1)
					go func() {
						defer stages.Done()
						runStageThread(t, p, stage, thread, 1, 0, &seen)
					}()
				}
			}
			produce(p, 0, 200, 8, rand.New(rand.NewPCG(1, 2)))
			// Let the last items drain and every bounded spin expire.
			time.Sleep(100 * time.Millisecond)
			cpu0, err := procstat.SelfCPU()
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			time.Sleep(300 * time.Millisecond)
			cpu1, _ := procstat.SelfCPU()
			fraction := float64(cpu1-cpu0) / float64(time.Since(start))
			t.Logf("%v idle: %.2f%% of one core", strategy, 100*fraction)
			if fraction > 0.25 {
				t.Errorf("idle pipeline used %.0f%% of a core; its goroutines should be parked", 100*fraction)
			}
			b := p.Push(2, true)
			*b.At(0), *b.At(1) = testItem{shutdown: true}, testItem{shutdown: true}
			b.Release()
			waitGroupTimeout(t, &stages, 30*time.Second, "stage threads after shutdown")
			if seen.Load() != 5*200 {
				t.Fatalf("saw %d items, want %d", seen.Load(), 5*200)
			}
		})
	}
}

// A parked waiter is woken by every kind of publication it waits on.
func TestCounterParkWakes(t *testing.T) {
	var c paddedCounter
	c.init()
	const rounds = 200
	done := make(chan struct{})
	go func() {
		defer close(done)
		for want := uint64(1); want <= rounds; want++ {
			for v := c.v.Load(); v < want; v = c.v.Load() {
				c.park(v)
			}
		}
	}()
	for i := uint64(1); i <= rounds; i++ {
		if i%16 == 0 {
			runtime.Gosched()
		}
		c.publish(i)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a parked waiter missed a wake-up")
	}
}

func TestSlicesCoverTheBatch(t *testing.T) {
	p, err := New[int](WaitIfStageEmpty, []int{1}, 2) // 4 slots
	if err != nil {
		t.Fatal(err)
	}
	next := 0
	for round := range 5 { // batches of 3 wrap the 4-slot ring
		b := p.Push(3, true)
		first, second := b.Slices()
		if len(first)+len(second) != 3 {
			t.Fatalf("round %d: slices of %d+%d slots, want 3", round, len(first), len(second))
		}
		for _, s := range [][]int{first, second} {
			for i := range s {
				s[i] = next
				next++
			}
		}
		b.Release()
		s := p.Acquire(0, 0, 0, true)
		for i := range s.Len() {
			if want := round*3 + i; *s.At(i) != want || s.Index(i) != uint64(want) {
				t.Fatalf("round %d item %d = %d at index %d, want %d", round, i, *s.At(i), s.Index(i), want)
			}
		}
		f, g := s.Slices()
		if len(f)+len(g) != s.Len() {
			t.Fatalf("stage slices of %d+%d items, want %d", len(f), len(g), s.Len())
		}
		s.Release()
	}
	if f, g := (StageBatch[int]{}).Slices(); f != nil || g != nil {
		t.Fatal("an empty batch has slices")
	}
}
