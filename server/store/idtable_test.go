package store

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// key16 is a key whose home in a table of 16 slots is home (h1's top four
// bits); n tells keys with the same home apart.
func key16(home, n int) idKey { return idKey{h1: uint64(home) << 60, h2: uint64(n)} }

// checkIndex verifies the invariants of x: each record held has exactly one
// slot, reachable from its home with no empty slot on the way (what linear
// probing needs), no slot points elsewhere, and the load is at most 3/4.
func checkIndex(t *testing.T, x *idIndex) {
	t.Helper()
	mask := len(x.slots) - 1
	seen := make(map[uint64]bool)
	for i, s := range x.slots {
		if s == 0 {
			continue
		}
		seq := x.seqOf(s)
		if seq < x.head || seq >= x.tail {
			t.Fatalf("slot %d points to seq %d, outside %d..%d", i, seq, x.head, x.tail-1)
		}
		if seen[seq] {
			t.Fatalf("seq %d in two slots", seq)
		}
		seen[seq] = true
		for j := x.home(x.rec(seq).key); j != i; j = (j + 1) & mask {
			if x.slots[j] == 0 {
				t.Fatalf("seq %d at slot %d: empty slot %d between it and its home", seq, i, j)
			}
		}
	}
	if len(seen) != x.len() {
		t.Fatalf("%d slots used for %d records", len(seen), x.len())
	}
	if 4*x.len() > 3*len(x.slots) {
		t.Fatalf("load %d/%d over 3/4", x.len(), len(x.slots))
	}
	for seq := x.head; seq < x.tail; seq++ {
		if got, ok := x.find(x.rec(seq).key); !ok || got != seq {
			t.Fatalf("find(key of seq %d) = %d, %v", seq, got, ok)
		}
	}
}

// slotsOf maps each record's n (key.h2) to the slot that points to it.
func slotsOf(x *idIndex) map[int]int {
	m := make(map[int]int)
	for i, s := range x.slots {
		if s != 0 {
			m[int(x.rec(x.seqOf(s)).key.h2)] = i
		}
	}
	return m
}

// indexOp is one step of TestIDIndexProbingAndDeletion.
type indexOp struct {
	kind       byte // 'p' push key16(home, n), 'f' pop the front, 'r' requeue the front
	home, n    int
	wantFront  int         // 'f': n of the record popped
	wantSlotOf map[int]int // n → slot, after the step (nil: not checked)
}

// The positions after each push and delete, worked out by hand, force the
// collisions (keys of one home) and the wraparound that probing and
// backward-shift deletion must handle.
func TestIDIndexProbingAndDeletion(t *testing.T) {
	type op = indexOp
	push := func(home, n int) op { return op{kind: 'p', home: home, n: n} }
	pop := func(n int, slots map[int]int) op { return op{kind: 'f', wantFront: n, wantSlotOf: slots} }
	cases := []struct {
		name string
		ops  []op
	}{
		{"same home: a cluster, shifted back on delete", []op{
			push(5, 1), push(5, 2), push(5, 3),
			{kind: 'p', home: 5, n: 4, wantSlotOf: map[int]int{1: 5, 2: 6, 3: 7, 4: 8}},
			pop(1, map[int]int{2: 5, 3: 6, 4: 7}),
			pop(2, map[int]int{3: 5, 4: 6}),
		}},
		{"a cluster wraps past the last slot", []op{
			push(15, 1), push(15, 2), push(0, 3),
			{kind: 'p', home: 1, n: 4, wantSlotOf: map[int]int{1: 15, 2: 0, 3: 1, 4: 2}},
			pop(1, map[int]int{2: 15, 3: 0, 4: 1}),
			pop(2, map[int]int{3: 0, 4: 1}),
		}},
		{"an entry at its home is not shifted", []op{
			push(3, 1), push(3, 2), push(4, 3), push(3, 4),
			pop(1, map[int]int{2: 3, 3: 4, 4: 5}),
			push(7, 5),
			pop(2, map[int]int{3: 4, 4: 3, 5: 7}),
		}},
		{"entries of later homes are skipped, not moved, when they cannot go back", []op{
			push(2, 1), push(3, 2), push(2, 3), push(2, 4),
			// slots: 1@2, 2@3, 3@4, 4@5
			pop(1, map[int]int{2: 3, 3: 2, 4: 4}),
		}},
		{"requeue moves the record to the back, its slot stays", []op{
			push(6, 1), push(6, 2), push(9, 3),
			{kind: 'r', wantSlotOf: map[int]int{1: 6, 2: 7, 3: 9}},
			pop(2, map[int]int{1: 6, 3: 9}),
			pop(3, map[int]int{1: 6}),
			pop(1, map[int]int{}),
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var x idIndex
			homes := map[int]int{} // n → home, of the records held
			for i, o := range c.ops {
				switch o.kind {
				case 'p':
					x.push(idRecord{key: key16(o.home, o.n), idEntry: idEntry{v: int64(o.n)}})
					homes[o.n] = o.home
				case 'f':
					if got := x.popFront(); got.key.h2 != uint64(o.wantFront) {
						t.Fatalf("op %d: popped %+v, want n %d", i, got, o.wantFront)
					}
					delete(homes, o.wantFront)
				case 'r':
					_, r := x.front()
					x.requeueFront(idEntry{v: r.v, at: 1})
				}
				if len(x.slots) != minSlots {
					t.Fatalf("op %d: %d slots, the cases assume %d", i, len(x.slots), minSlots)
				}
				checkIndex(t, &x)
				if o.wantSlotOf != nil {
					if got := slotsOf(&x); !mapsEqual(got, o.wantSlotOf) {
						t.Fatalf("op %d: slots %v, want %v", i, got, o.wantSlotOf)
					}
				}
				// Every key of every home: found exactly when held.
				for n := 1; n <= 5; n++ {
					for home := range minSlots {
						seq, ok := x.find(key16(home, n))
						h, held := homes[n]
						if want := held && home == h; ok != want || ok && x.rec(seq).v != int64(n) {
							t.Fatalf("op %d: find(home %d, n %d) = %d, %v; want %v", i, home, n, seq, ok, want)
						}
					}
				}
			}
		})
	}
}

func mapsEqual(a, b map[int]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// The table doubles past 3/4 full, keeps every key findable through the
// growth, and does not shrink when emptied.
func TestIDIndexGrowth(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var x idIndex
	keys := make([]idKey, 5000)
	for i := range keys {
		keys[i] = idKey{rng.Uint64(), uint64(i)}
		x.push(idRecord{key: keys[i], idEntry: idEntry{v: int64(i)}})
		if size := len(x.slots); size&(size-1) != 0 || 4*x.len() > 3*size || size > minSlots && 8*x.len() <= 3*size {
			t.Fatalf("%d records in %d slots: not a power of two with load in (3/8, 3/4]", x.len(), size)
		}
		if i%997 == 0 {
			checkIndex(t, &x)
		}
	}
	checkIndex(t, &x)
	grown := len(x.slots)
	for i := range keys {
		if r := x.popFront(); r.key != keys[i] {
			t.Fatalf("pop %d: key %v, want %v (push order)", i, r.key, keys[i])
		}
	}
	if _, ok := x.find(keys[0]); ok || x.len() != 0 || len(x.slots) != grown {
		t.Fatalf("emptied: found %v, len %d, %d slots (grown to %d)", ok, x.len(), len(x.slots), grown)
	}
	checkIndex(t, &x)
}

// A window of records slides through many chunks (the ring reuses the
// chunk it empties) and, with a small span, through many rebases of the
// slot numbers.
func TestIDIndexRingWraparound(t *testing.T) {
	for _, c := range []struct {
		name          string
		span          uint64
		window, total int
	}{
		{"chunks", 0, 100, 3*chunkLen + 7},
		{"chunk boundary, window of one", 0, 1, chunkLen + 2},
		{"full chunks", 0, chunkLen, 4 * chunkLen},
		{"rebases", 40, 30, 2000},
		{"rebases at the span", 16, 16, 500},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			x := idIndex{span: c.span}
			var keys []idKey // of the records held, in push order
			for i := range c.total {
				k := idKey{rng.Uint64(), uint64(i)}
				if i%3 == 0 && len(keys) > 0 { // some collide on h1
					k.h1 = keys[len(keys)-1].h1
				}
				x.push(idRecord{key: k, idEntry: idEntry{v: int64(i)}})
				keys = append(keys, k)
				if len(keys) > c.window {
					if r := x.popFront(); r.key != keys[0] {
						t.Fatalf("push %d: popped %v, want %v", i, r.key, keys[0])
					}
					keys = keys[1:]
				}
				if i%2 == 0 && len(keys) > 1 {
					x.requeueFront(x.rec(x.head).idEntry)
					keys = append(keys[1:], keys[0])
				}
				if x.chunks.len() > c.window/chunkLen+2 {
					t.Fatalf("push %d: %d chunks for %d records", i, x.chunks.len(), x.len())
				}
				if i%31 == 0 || i >= c.total-3 {
					checkIndex(t, &x)
				}
			}
			for i, k := range keys {
				if seq, ok := x.find(k); !ok || seq != x.head+uint64(i) {
					t.Fatalf("key %d of the window: seq %d, %v", i, seq, ok)
				}
			}
			if c.span > 0 && x.base == 0 {
				t.Fatal("never rebased")
			}
		})
	}
}

// A steady window (as many ids forgotten as remembered) allocates nothing:
// the ring reuses the chunk it empties and the table does not grow.
func TestIDIndexSteadyStateAllocatesNothing(t *testing.T) {
	var x idIndex
	i := uint64(0)
	step := func() {
		i++
		x.push(idRecord{key: idKey{i * 0x9e3779b97f4a7c15, i}})
		if x.len() > 1000 {
			x.popFront()
		}
	}
	for range 3 * chunkLen {
		step()
	}
	if a := testing.AllocsPerRun(2*chunkLen, step); a != 0 {
		t.Fatalf("%v allocations per push and pop", a)
	}
}

// Eviction order through refreshed bans, step by step: a ban refreshed by a
// later not_found keeps its record's place; on reaching the front it leaves
// when its first not_found is past retention (moved to the back if the
// latest is not); the cap drops the front whatever it is.
func TestRequestIDsEvictionOrder(t *testing.T) {
	type step struct {
		op      byte // 'c' commit id n (next version), 'b' ban id n, 'e' evict only
		n       int
		after   time.Duration // since t0
		want    []int         // ids of the records, front first
		dropped int64
	}
	cases := []struct {
		name   string
		maxIDs int
		steps  []step
	}{
		{"a refreshed ban moves back when it reaches the front", 0, []step{
			{'c', 1, 0, []int{1}, 0},
			{'b', 2, 0, []int{1, 2}, 0},
			{'c', 3, 0, []int{1, 2, 3}, 0},
			{'b', 2, 50 * time.Second, []int{1, 2, 3}, 0}, // refreshed in place
			{'c', 4, 50 * time.Second, []int{1, 2, 3, 4}, 0},
			{'c', 5, 50 * time.Second, []int{1, 2, 3, 4, 5}, 0},
			{'c', 6, 50 * time.Second, []int{1, 2, 3, 4, 5, 6}, 0},
			// 1 and 3 are past both limits; 2's first not_found is too,
			// its latest is not: it goes behind 6.
			{'e', 0, 70 * time.Second, []int{4, 5, 6, 2}, 0},
			{'e', 0, 2 * time.Minute, []int{5, 6, 2}, 0},
		}},
		{"a ban refreshed at the same time leaves with its first", 0, []step{
			{'b', 1, 0, []int{1}, 0},
			{'b', 1, 0, []int{1}, 0},
			{'c', 2, 0, []int{1, 2}, 0},
			{'c', 3, 0, []int{1, 2, 3}, 0},
			{'c', 4, 0, []int{1, 2, 3, 4}, 0},
			{'e', 0, time.Minute, []int{3, 4}, 0}, // versions 0 and 1 are past
		}},
		{"the cap drops the oldest record, a refreshed ban too", 3, []step{
			{'b', 1, 0, []int{1}, 0},
			{'c', 2, 0, []int{1, 2}, 0},
			{'c', 3, 0, []int{1, 2, 3}, 0},
			{'b', 1, 10 * time.Second, []int{1, 2, 3}, 0},
			{'c', 4, 10 * time.Second, []int{2, 3, 4}, 1},
			{'b', 5, 10 * time.Second, []int{3, 4, 5}, 2},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newRequestIDs(c.maxIDs)
			m.hash = collidingHash
			lim := Limits{Versions: 2, Age: time.Minute}
			var last int64
			for i, s := range c.steps {
				now := t0.Add(s.after)
				m.evict(lim, last, now)
				k := m.key(fmt.Sprint("id-", s.n))
				switch s.op {
				case 'c':
					last++
					m.addCommit(k, last, now)
				case 'b':
					m.ban(k, last, now)
				}
				m.evict(lim, last, now)
				var got []int
				for seq := m.idx.head; seq < m.idx.tail; seq++ {
					got = append(got, int(m.idx.rec(seq).key.h2))
				}
				if !slices.Equal(got, s.want) || m.droppedByCap != s.dropped {
					t.Fatalf("step %d: records %v, dropped %d; want %v, %d", i, got, m.droppedByCap, s.want, s.dropped)
				}
				if m.commits+m.bans != m.idx.len() {
					t.Fatalf("step %d: %d commits and %d bans in %d records", i, m.commits, m.bans, m.idx.len())
				}
			}
		})
	}
}
