package pipeline

import "testing"

// A StageThread acquires without waiting, and Pending says whether its
// upstream released items it has not released itself: what a goroutine
// that stops driving a thread checks.
func TestStageThreadTryAcquireAndPending(t *testing.T) {
	p, err := New[int](WaitIfStageEmpty, []int{1, 2}, 3)
	if err != nil {
		t.Fatal(err)
	}
	seq, rel0, rel1 := p.StageThread(0, 0), p.StageThread(1, 0), p.StageThread(1, 1)
	var held StageBatch[int]
	steps := []struct {
		name    string
		do      func()
		pending [3]bool // seq, rel0, rel1
	}{
		{"empty", func() {
			if b := seq.TryAcquire(0); b.Len() != 0 {
				t.Fatalf("TryAcquire on an empty pipeline: %d items", b.Len())
			}
		}, [3]bool{false, false, false}},
		{"pushed", func() { p.Push(3, true).Release() }, [3]bool{true, false, false}},
		{"acquired two, not released", func() {
			if held = seq.TryAcquire(2); held.Len() != 2 {
				t.Fatalf("TryAcquire(2) took %d", held.Len())
			}
		}, [3]bool{true, false, false}},
		{"released two", func() { held.Release() }, [3]bool{true, true, true}},
		{"released the third", func() { seq.TryAcquire(0).Release() }, [3]bool{false, true, true}},
		{"one last-stage thread released", func() {
			if b := rel1.TryAcquire(0); b.Len() != 3 {
				t.Fatalf("last stage took %d, want 3", b.Len())
			} else {
				b.Release()
			}
		}, [3]bool{false, true, false}},
	}
	for _, s := range steps {
		s.do()
		got := [3]bool{seq.Pending(), rel0.Pending(), rel1.Pending()}
		if got != s.pending {
			t.Fatalf("%s: Pending = %v, want %v", s.name, got, s.pending)
		}
	}
}

// TryAcquire takes what every upstream thread released, capped by
// maxBatch, whether the thread has one upstream (its fast path) or several.
func TestStageThreadTryAcquireTakesWhatUpstreamReleased(t *testing.T) {
	cases := []struct {
		name     string
		topology []int
		maxBatch int
		want     []int // successive TryAcquire sizes of the last stage's thread 0
	}{
		{"one upstream, no limit", []int{1, 1}, 0, []int{5, 0}},
		{"one upstream, limit 2", []int{1, 1}, 2, []int{2, 2, 1, 0}},
		{"two upstreams, no limit", []int{2, 1}, 0, []int{5, 0}},
		{"two upstreams, limit 3", []int{2, 1}, 3, []int{3, 2, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := New[int](WaitIfStageEmpty, c.topology, 3)
			if err != nil {
				t.Fatal(err)
			}
			last := p.StageThread(1, 0)
			if b := last.TryAcquire(c.maxBatch); b.Len() != 0 {
				t.Fatalf("before any push: took %d", b.Len())
			}
			p.Push(5, true).Release()
			for th := range c.topology[0] {
				first := p.StageThread(0, th)
				first.TryAcquire(0).Release()
			}
			for i, want := range c.want {
				b := last.TryAcquire(c.maxBatch)
				if b.Len() != want {
					t.Fatalf("take %d: %d items, want %d", i, b.Len(), want)
				}
				for j := range b.Len() {
					if got, wantIndex := b.Index(j), uint64(5-remaining(c.want[i:]))+uint64(j); got != wantIndex {
						t.Fatalf("take %d item %d: index %d, want %d", i, j, got, wantIndex)
					}
				}
				b.Release()
			}
		})
	}
}

// remaining is the sum of the sizes still to take.
func remaining(sizes []int) int {
	n := 0
	for _, s := range sizes {
		n += s
	}
	return n
}
