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
