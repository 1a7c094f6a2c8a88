package callgrind

import (
	"reflect"
	"testing"
)

// The filter leaves out what follows the clock and keeps the request
// path: a table of names as Go 1.26 and callgrind write them.
func TestCostFilter(t *testing.T) {
	tests := []struct {
		fn  string
		out bool
	}{
		{"runtime.findRunnable", true},
		{"runtime.stealWork", true},
		{"runtime.startlockedm", true}, // a locked goroutine's P handed to its thread (thread_names)
		{"runtime.stoplockedm", true},
		{"runtime.lock2", true},
		{"runtime.procyieldAsm.abi0", true},
		{"runtime.nanotime1.abi0", true},
		{"runtime.sysmon", true},
		{"runtime.gcBgMarkWorker", true},
		{"runtime.futex.abi0", true},
		{"runtime.(*m).clearAllpSnapshot", true},
		{"weaseldb/server/pipeline.(*counter).park", true},
		{"weaseldb/server/pipeline.(*counter).wake", true},
		{"sync.runtime_notifyListWait", true},
		{"sync.(*Cond).Wait", true},
		{"github.com/prometheus/client_golang/prometheus.(*histogram).findBucket", true},
		{"clone3", true},
		{"runtime.(*pageAlloc).find", true},
		{"runtime.mergeSummaries", true},
		{"runtime.(*mheap).allocSpan", false},
		// The work of a request stays counted.
		{"runtime.mallocgc", false},
		{"runtime.memmove", false},
		{"runtime.mapaccess2_faststr", false},
		{"runtime.lockOSThread", false},
		{"sync.(*Mutex).Lock", false},
		{"weaseldb/server/http1.(*Parser).Parse", false},
		{"weaseldb/server/commit.(*Pipeline).resolve", false},
		{"weaseldb/server/cpuwork.SpendCPUCycles", false},
		{"weaseldb/server/store.(*idIndex).find", false},
		{"internal/runtime/syscall/linux.Syscall6", false},
		{"0x0000000000412345", false},
	}
	for _, tt := range tests {
		if out, why := filteredOut(tt.fn); out != tt.out {
			t.Errorf("%s: left out %v (%s), want %v", tt.fn, out, why, tt.out)
		}
	}
}

// KeptFunctions is what FilteredInstructions counts, by function.
func TestKeptFunctions(t *testing.T) {
	p := &Profile{Self: map[string]int64{"runtime.findRunnable": 900, "runtime.memmove": 40, " weaseldb/server/http1.(*Parser).Parse": 60}}
	kept, left := KeptFunctions(p)
	want := map[string]int64{"runtime.memmove": 40, "weaseldb/server/http1.(*Parser).Parse": 60}
	if !reflect.DeepEqual(kept, want) || left != 900 {
		t.Fatalf("kept %v, left %d; want %v, 900", kept, left, want)
	}
	if k, left := FilteredInstructions(p); k != 100 || left != 900 {
		t.Fatalf("FilteredInstructions %d kept, %d left; want 100, 900", k, left)
	}
}
