package app

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"weaseldb/internal/affinity"
	"weaseldb/server/config"
)

// pinnedThreadCounts reads every thread of this process back from
// /proc/self/task/*/status and counts, per CPU, the threads whose
// Cpus_allowed_list is exactly that one CPU.
func pinnedThreadCounts(t *testing.T) map[int]int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Skipf("no /proc/self/task: %v", err)
	}
	counts := map[int]int{}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		cpus, err := affinity.ThreadAllowedCPUs(tid)
		if err != nil {
			continue // the thread ended while we listed them
		}
		if len(cpus) == 1 {
			counts[cpus[0]]++
		}
	}
	return counts
}

// TestPinnedThreadsReadBack starts the server in-process with every loop and
// every stage thread pinned, and reads the threads' affinity back: the
// number of threads pinned to each CPU grows by exactly what the config asked.
func TestPinnedThreadsReadBack(t *testing.T) {
	allowed, err := affinity.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	a, b := allowed[0], allowed[len(allowed)-1] // the same CPU on a 1-CPU machine
	want := map[int]int{}
	want[a] += 1 // loop 0
	want[b] += 1 // loop 1
	want[a] += 1 // sequence
	want[b] += 1 // resolve
	want[a] += 1 // persist
	want[b] += 2 // release threads 0 and 1
	before := pinnedThreadCounts(t)
	procs := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(procs) })
	startServer(t, func(c *config.Config) {
		c.Server.IOCPUs = []int{a, b}
		c.Commit.PipelineCPUs = [][]int{{a}, {b}, {a}, {b, b}}
		c.Commit.PipelineReleaseThreads = 2
		if got := TuneGOMAXPROCS(*c); got < 7+1 {
			t.Errorf("GOMAXPROCS %d with 7 pinned threads, want at least 8", got)
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		after := pinnedThreadCounts(t)
		ok := true
		for cpu, n := range want {
			if after[cpu]-before[cpu] != n {
				ok = false
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("threads pinned per CPU: before %v, after %v; want the difference %v", before, after, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestUnavailableCPURefused: a CPU outside the allowed set is refused at
// start, naming the key and the allowed set, and nothing is left listening.
func TestUnavailableCPURefused(t *testing.T) {
	allowed, err := affinity.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	outside := slices.Max(allowed) + 1
	allowedText := "allowed: " + affinity.FormatCPUList(allowed)
	tests := []struct {
		name    string
		mutate  func(*config.Config)
		wantKey string
	}{
		{"io_cpus", func(c *config.Config) { c.Server.IOCPUs = []int{allowed[0], outside} }, "server.io_cpus[1]"},
		{"pipeline_cpus", func(c *config.Config) {
			c.Commit.PipelineCPUs = [][]int{{allowed[0]}, {allowed[0]}, {outside}, {allowed[0], allowed[0]}}
		}, "commit.pipeline_cpus[2][0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sock := filepath.Join(t.TempDir(), "weaseldb.sock")
			cfg := config.Default()
			cfg.Server.Interfaces = []config.Interface{{Type: config.InterfaceUnix, Path: sock}}
			cfg.Server.IOThreads = 2
			cfg.Commit.PipelineReleaseThreads = 2
			tt.mutate(&cfg)
			if err := cfg.Validate(); err != nil {
				t.Fatalf("config itself invalid: %v", err)
			}
			srv, err := New(cfg, withTestBackend(Options{}))
			if err == nil {
				srv.Shutdown(time.Second)
				t.Fatal("New accepted an unavailable CPU")
			}
			msg := err.Error()
			for _, want := range []string{tt.wantKey, fmt.Sprintf("CPU %d is not available", outside), allowedText} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q lacks %q", msg, want)
				}
			}
			if _, err := os.Stat(sock); err == nil {
				t.Error("a refused server left its unix socket behind")
			}
		})
	}
}
