package store

import "testing"

func TestDeque(t *testing.T) {
	var d deque[int]
	next, front := 0, 0
	for round := range 1000 {
		for range round%7 + 1 {
			d.push(next)
			next++
		}
		for range round%5 + 1 {
			if d.len() == 0 {
				break
			}
			if got := d.popFront(); got != front {
				t.Fatalf("pop %d want %d", got, front)
			}
			front++
		}
		if d.len() != next-front {
			t.Fatalf("len %d want %d", d.len(), next-front)
		}
		for i := range d.len() {
			if *d.at(i) != front+i {
				t.Fatalf("at(%d) = %d", i, *d.at(i))
			}
		}
		if d.len() > 0 {
			k := front + d.len()/2
			if i := d.search(func(v *int) bool { return *v >= k }); *d.at(i) != k {
				t.Fatalf("search %d found %d", k, *d.at(i))
			}
		}
	}
	// Steady state reuses the array instead of growing.
	if cap(d.items) > 4*(d.len()+16) {
		t.Fatalf("cap %d for len %d", cap(d.items), d.len())
	}
}
