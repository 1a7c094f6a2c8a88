package store

// deque is a FIFO over a slice: push at the back, pop at the front, index
// from the front. Not goroutine-safe; each user owns its own.
type deque[T any] struct {
	items []T
	head  int
}

func (d *deque[T]) len() int { return len(d.items) - d.head }

func (d *deque[T]) push(v T) {
	if d.head > 0 && d.head >= len(d.items)/2 && len(d.items) == cap(d.items) {
		// Reclaim the popped front before growing, so a steady-state queue
		// does not grow without bound.
		n := copy(d.items, d.items[d.head:])
		clear(d.items[n:])
		d.items = d.items[:n]
		d.head = 0
	}
	d.items = append(d.items, v)
}

// at returns the i-th element from the front.
func (d *deque[T]) at(i int) *T { return &d.items[d.head+i] }

func (d *deque[T]) front() *T { return &d.items[d.head] }

func (d *deque[T]) popFront() T {
	v := d.items[d.head]
	var zero T
	d.items[d.head] = zero // drop references for the GC
	d.head++
	if d.head == len(d.items) {
		d.items = d.items[:0]
		d.head = 0
	}
	return v
}

// search returns the smallest i in [0, len) with pred(at(i)) true, or len;
// pred must be false then true along the deque (like sort.Search).
func (d *deque[T]) search(pred func(*T) bool) int {
	lo, hi := 0, d.len()
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if !pred(d.at(mid)) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}
