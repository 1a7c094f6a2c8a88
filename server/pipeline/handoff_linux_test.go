package pipeline

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The hand-off benchmark behind the choice of Go-native parking. K goroutines
// pass a token around a ring; each waits, parked, for its own counter to
// reach the round, then publishes the next goroutine's. With K > GOMAXPROCS
// most goroutines are blocked at any moment:
//   - park=futex blocks in a raw futex(2) syscall. The goroutine's M keeps
//     its P in the syscall state until sysmon retakes it (20 µs to 10 ms), so
//     a woken goroutine often finds no P free and waits for sysmon.
//   - park=go parks on a sync.Cond (the pipeline's counter): the P is handed
//     back at once and the woken goroutine runs on the next free P.
// procs=K+1 shows the futex path when every blocked goroutine can keep a P.

// futex(2) operations (linux/futex.h); x/sys/unix does not export them.
const (
	futexWait        = 0
	futexWake        = 1
	futexPrivateFlag = 128
)

// futexCounter is the raw-futex counterpart of counter: the same waiter
// count, so a publish with nobody waiting costs no syscall.
type futexCounter struct {
	v       atomic.Uint32
	waiters atomic.Int32
	_       [cacheLine]byte
}

func (c *futexCounter) publish(x uint32) {
	c.v.Store(x)
	if c.waiters.Load() != 0 {
		unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&c.v)), futexWake|futexPrivateFlag, 1<<30, 0, 0, 0)
	}
}

func (c *futexCounter) park(seen uint32) {
	c.waiters.Add(1)
	for c.v.Load() == seen {
		// unix.Syscall6 tells the runtime it entered a syscall (it keeps
		// its P until sysmon retakes it), which is the hazard measured.
		unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&c.v)), futexWait|futexPrivateFlag, uintptr(seen), 0, 0, 0)
	}
	c.waiters.Add(-1)
}

// tokenRing runs rounds of the token around k goroutines and returns the
// number of hand-offs made.
func tokenRing(k, rounds int, futex bool) int {
	goCounters := make([]paddedCounter, k)
	fxCounters := make([]futexCounter, k)
	for i := range goCounters {
		goCounters[i].init()
	}
	var wg sync.WaitGroup
	for i := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := (i + 1) % k
			for r := 1; r <= rounds; r++ {
				if futex {
					c := &fxCounters[i]
					for v := c.v.Load(); v < uint32(r); v = c.v.Load() {
						c.park(v)
					}
					fxCounters[next].publish(uint32(r + btoi(next == 0)))
				} else {
					c := &goCounters[i]
					for v := c.v.Load(); v < uint64(r); v = c.v.Load() {
						c.park(v)
					}
					goCounters[next].publish(uint64(r + btoi(next == 0)))
				}
			}
		}()
	}
	// Start the token at goroutine 0, round 1.
	if futex {
		fxCounters[0].publish(1)
	} else {
		goCounters[0].publish(1)
	}
	wg.Wait()
	return k * rounds
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func BenchmarkHandoff(b *testing.B) {
	cases := []struct{ goroutines, procs int }{
		{2, 2},  // blocked goroutines never outnumber the Ps
		{8, 2},  // 7 blocked goroutines, 2 Ps: the hazard
		{8, 9},  // enough Ps for every blocked goroutine
		{16, 2}, // more of the same
	}
	for _, tc := range cases {
		for _, park := range []string{"futex", "go"} {
			name := fmt.Sprintf("park=%s/goroutines=%d/procs=%d", park, tc.goroutines, tc.procs)
			b.Run(name, func(b *testing.B) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(tc.procs))
				rounds := max(1, b.N/tc.goroutines)
				b.ResetTimer()
				handoffs := tokenRing(tc.goroutines, rounds, park == "futex")
				b.StopTimer()
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(handoffs), "ns/handoff")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// Both parking kinds deliver every hand-off (the benchmark's correctness).
func TestTokenRingCompletes(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for _, futex := range []bool{false, true} {
		if got := tokenRing(5, 50, futex); got != 250 {
			t.Fatalf("futex=%v: %d hand-offs, want 250", futex, got)
		}
	}
}
