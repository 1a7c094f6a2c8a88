package app

import (
	"os"
	"slices"
	"testing"
	"time"

	"weaseldb/internal/procstat"
	"weaseldb/server/config"
	"weaseldb/server/eventloop"
)

// threadNames counts this process's threads by name, as ps -L, top -H and
// perf show them (the tree's one /proc reader).
func threadNames(t *testing.T) map[string]int {
	t.Helper()
	threads, err := procstat.Threads(os.Getpid())
	if err != nil {
		t.Fatalf("reading this process's threads: %v", err)
	}
	names := map[string]int{}
	for _, th := range threads {
		names[th.Comm]++
	}
	return names
}

var stageThreadNames = []string{"sequence", "resolve", "persist", "release-0", "release-1"}

// With server.thread_names (the default) every loop's thread is io-N and every stage's is
// named after its stage, each exactly once; after Shutdown the threads are
// gone with their goroutines (a locked goroutine that exits ends its
// thread), so no name stays behind on a thread that runs something else.
func TestThreadNames(t *testing.T) {
	for _, backend := range []string{config.IOBackendEpoll, config.IOBackendIOUring} {
		t.Run(backend, func(t *testing.T) {
			if backend == config.IOBackendIOUring {
				if err := eventloop.ProbeIOUring(); err != nil {
					t.Skipf("io_uring unavailable: %v", err)
				}
			}
			cfg := config.Default()
			cfg.Server.Interfaces = []config.Interface{{Type: config.InterfaceTCP, Address: "127.0.0.1", Port: 0}}
			cfg.Server.IOThreads = 3
			cfg.Server.IOBackend = backend
			cfg.Commit.PipelineReleaseThreads = 2
			srv, err := New(cfg, Options{OnLoopError: func(err error) { t.Errorf("loop: %v", err) }})
			if err != nil {
				t.Fatal(err)
			}
			srv.Start()
			want := append([]string{"io-0", "io-1", "io-2"}, stageThreadNames...)
			var names map[string]int
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				names = threadNames(t)
				if !slices.ContainsFunc(want, func(n string) bool { return names[n] != 1 }) || time.Now().After(deadline) {
					break
				}
			}
			for _, n := range want {
				if names[n] != 1 {
					t.Errorf("%d threads named %q, want 1 (all: %v)", names[n], n, names)
				}
			}
			if names["io-3"] != 0 || names["release-2"] != 0 {
				t.Errorf("more threads named than there are loops and stages: %v", names)
			}
			if err := srv.Shutdown(5 * time.Second); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				names = threadNames(t)
				if !slices.ContainsFunc(want, func(n string) bool { return names[n] != 0 }) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after Shutdown, named threads remain: %v", names)
				}
			}
		})
	}
}

// With thread_names off an unpinned epoll server names (and locks) nothing.
func TestThreadNamesOff(t *testing.T) {
	cfg := config.Default()
	cfg.Server.Interfaces = []config.Interface{{Type: config.InterfaceTCP, Address: "127.0.0.1", Port: 0}}
	cfg.Server.IOThreads = 2
	cfg.Server.ThreadNames = false
	cfg.Commit.PipelineReleaseThreads = 2
	srv, err := New(cfg, Options{Loop: eventloop.Options{Backend: eventloop.BackendEpoll}})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	defer srv.Shutdown(5 * time.Second)
	time.Sleep(50 * time.Millisecond) // the goroutines have started
	names := threadNames(t)
	for _, n := range append([]string{"io-0", "io-1"}, stageThreadNames...) {
		if names[n] != 0 {
			t.Errorf("thread %q named with thread_names off (all: %v)", n, names)
		}
	}
}
