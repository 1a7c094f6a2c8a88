package monoclock

import (
	"testing"
	"time"
)

// Now runs with the monotonic clock time.Since reads: an interval it
// measures lies within the one time measured around it, and holds the
// sleep inside it.
func TestNowFollowsTheMonotonicClock(t *testing.T) {
	for range 5 {
		t0 := time.Now()
		start := Now()
		time.Sleep(time.Millisecond)
		d := time.Duration(Now() - start)
		around := time.Since(t0)
		if d < time.Millisecond || d > around {
			t.Fatalf("Now advanced %v over a 1ms sleep that time measured as %v from outside", d, around)
		}
	}
}
