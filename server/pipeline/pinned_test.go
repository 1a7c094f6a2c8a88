package pipeline

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// voluntarySwitches reads a thread's voluntary context switches (times it
// slept) from /proc/self/task/<tid>/status.
func voluntarySwitches(t *testing.T, tid int) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/status", tid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("status has no voluntary_ctxt_switches")
	return 0
}

// idleSpinnerSwitches runs a one-stage Never pipeline whose stage goroutine
// is locked to its thread, as a pinned stage is (affinity.PinCurrentThread
// locks and never unlocks), leaves it idle, and returns how many times its
// thread slept over window.
func idleSpinnerSwitches(t *testing.T, markPinned bool, window time.Duration) int {
	p, err := New[testItem](Never, []int{1}, 4)
	if err != nil {
		t.Fatal(err)
	}
	tidc := make(chan int, 1)
	var stage sync.WaitGroup
	var seen atomic.Int64
	stage.Add(1)
	go func() {
		defer stage.Done()
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if markPinned {
			p.MarkPinned(0, 0)
		}
		tidc <- unix.Gettid()
		runStageThread(t, p, 0, 0, 1, 0, &seen)
	}()
	tid := <-tidc
	time.Sleep(50 * time.Millisecond) // into its spin
	before := voluntarySwitches(t, tid)
	time.Sleep(window)
	after := voluntarySwitches(t, tid)
	b := p.Push(1, true)
	*b.At(0) = testItem{shutdown: true}
	b.Release()
	waitGroupTimeout(t, &stage, 30*time.Second, "the stage thread after shutdown")
	return after - before
}

// A pinned stage that spins (Never) keeps its thread: MarkPinned stops the
// spin's yields, each of which, for a goroutine locked to its thread, hands
// the P away and puts the thread to sleep until another thread hands it
// back. Unmarked, the idle spinner's thread sleeps thousands of times a
// second; marked, only when the runtime preempts it (every 10 ms at most).
func TestPinnedSpinnerKeepsItsThread(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs GOMAXPROCS >= 2: a spinner and the rest")
	}
	const window = 300 * time.Millisecond
	unmarked := idleSpinnerSwitches(t, false, window)
	marked := idleSpinnerSwitches(t, true, window)
	t.Logf("voluntary context switches of an idle Never stage thread over %v: %d unmarked, %d marked pinned", window, unmarked, marked)
	// Preemption alone allows about window/10ms; the bound leaves room for
	// a loaded machine and the race detector.
	if limit := int(window/(10*time.Millisecond)) * 4; marked > limit {
		t.Errorf("a pinned idle spinner's thread slept %d times in %v, want at most %d (preemption only)", marked, window, limit)
	}
	if unmarked < 4*marked {
		t.Logf("unmarked slept only %d times: this machine did not show the yields' cost (no failure)", unmarked)
	}
}
