package commit

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"weaseldb/internal/affinity"
	"weaseldb/server/metrics"
	"weaseldb/server/pipeline"
)

// pinnedThreads returns this process's threads whose allowed set is one
// CPU, with their voluntary context switches (times they slept).
func pinnedThreads(t *testing.T) map[int]int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Skipf("no /proc/self/task: %v", err)
	}
	out := map[int]int{}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/status", tid))
		if err != nil {
			continue // it ended
		}
		var list string
		switches := -1
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				list = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
				switches, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		if cpus, err := affinity.ParseCPUList(list); err == nil && len(cpus) == 1 && switches >= 0 {
			out[tid] = switches
		}
	}
	return out
}

// Stage threads pinned to CPUs (commit.pipeline_cpus) that spin (Never)
// keep their threads while the pipeline is idle: the pipeline knows they
// are pinned (pipeline.MarkPinned), so their spins do not yield. A yield
// of a goroutine locked to its thread puts the thread to sleep until
// another thread hands its P back; before the fix each pinned stage thread
// of an idle server slept thousands of times a second.
func TestPinnedStagesSpinWithoutSleeping(t *testing.T) {
	allowed, err := affinity.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	procs := runtime.GOMAXPROCS(0)
	// Every pinned thread a P of its own, and the rest one more, as
	// the server sets it (affinity.GOMAXPROCSFor).
	runtime.GOMAXPROCS(affinity.GOMAXPROCSFor(4, procs))
	t.Cleanup(func() { runtime.GOMAXPROCS(procs) })
	before := pinnedThreads(t)
	a, b := allowed[0], allowed[len(allowed)-1]
	cp, err := New(Options[*testConn]{Responder: testResponder{}, WaitStrategy: pipeline.Never, ReleaseThreads: 1, Metrics: metrics.New(),
		StageCPUs: [][]int{{a}, {b}, {a}, {b}}})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	var stages []int
	deadline := time.Now().Add(10 * time.Second)
	for len(stages) < 4 && time.Now().Before(deadline) {
		stages = stages[:0]
		for tid := range pinnedThreads(t) {
			if _, old := before[tid]; !old {
				stages = append(stages, tid)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(stages) != 4 {
		t.Fatalf("found %d pinned stage threads, want 4", len(stages))
	}
	time.Sleep(50 * time.Millisecond) // every stage into its spin
	const window = 300 * time.Millisecond
	v0 := pinnedThreads(t)
	time.Sleep(window)
	v1 := pinnedThreads(t)
	// Preemption alone allows about window/10ms per thread; the bound
	// leaves room for two CPUs shared by four spinners and the race detector.
	limit := int(window/(10*time.Millisecond)) * 4
	for _, tid := range stages {
		if slept := v1[tid] - v0[tid]; slept > limit {
			t.Errorf("pinned stage thread %d slept %d times in %v while idle, want at most %d (preemption only)", tid, slept, window, limit)
		}
	}
}
