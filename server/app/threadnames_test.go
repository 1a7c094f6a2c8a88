package app

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"weaseldb/internal/affinity"
	"weaseldb/internal/nettest"
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

// With server.thread_names = true every loop's thread is io-N and every stage's is
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
			cfg.Server.ThreadNames = config.ThreadNamesOn
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

// The names each thread_names mode gives, where the threads run: "auto"
// (the default) names the loops and stages that are locked anyway (pinned,
// or io_uring loops) and leaves unpinned epoll ones as goroutines; false
// names none, locked or not. Each server answers a GET /ok first: its one
// loop and every stage (one release thread) then ran, and named their
// threads if they were going to.
func TestThreadNamesByMode(t *testing.T) {
	stages := []string{"sequence", "resolve", "persist", "release-0"}
	allowed, err := affinity.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	cpu := allowed[0]
	pinned := func(c *config.Config) {
		c.Server.IOCPUs = []int{cpu}
		c.Commit.PipelineCPUs = [][]int{{cpu}, {cpu}, {cpu}, {cpu}}
	}
	for _, tc := range []struct {
		name   string
		mode   config.ThreadNames
		setup  func(*config.Config)
		uring  bool
		named  []string
		absent []string
	}{
		{"auto, unpinned epoll: goroutines", config.ThreadNamesAuto, nil, false, nil, append([]string{"io-0"}, stages...)},
		{"auto, io_uring loop: named, stages goroutines", config.ThreadNamesAuto, nil, true, []string{"io-0"}, stages},
		{"auto, pinned: every thread named", config.ThreadNamesAuto, pinned, false, append([]string{"io-0"}, stages...), nil},
		{"false, pinned: none named", config.ThreadNamesOff, pinned, false, nil, append([]string{"io-0"}, stages...)},
		{"false, io_uring: none named", config.ThreadNamesOff, nil, true, nil, append([]string{"io-0"}, stages...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.uring {
				if err := eventloop.ProbeIOUring(); err != nil {
					t.Skipf("io_uring unavailable: %v", err)
				}
			}
			// Names from an earlier server are gone before this one starts
			// (each is restored before its goroutine ends).
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				names := threadNames(t)
				if !slices.ContainsFunc(append([]string{"io-0"}, stages...), func(n string) bool { return names[n] != 0 }) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("named threads of an earlier server remain: %v", names)
				}
			}
			cfg := config.Default()
			cfg.Server.Interfaces = []config.Interface{{Type: config.InterfaceTCP, Address: "127.0.0.1", Port: 0}}
			cfg.Server.IOThreads, cfg.Commit.PipelineReleaseThreads = 1, 1
			cfg.Server.ThreadNames = tc.mode
			if tc.setup != nil {
				tc.setup(&cfg)
			}
			// The backend the case names, whatever WEASELDB_TEST_IO_BACKEND says.
			backend := eventloop.BackendEpoll
			if tc.uring {
				backend = eventloop.BackendIOUring
			}
			srv, err := New(cfg, Options{Loop: eventloop.Options{Backend: backend}, OnLoopError: func(err error) { t.Errorf("loop: %v", err) }})
			if err != nil {
				t.Fatal(err)
			}
			srv.Start()
			defer srv.Shutdown(5 * time.Second)
			ts := &testServer{srv: srv, tcpAddr: fmt.Sprintf("127.0.0.1:%d", srv.TCPPort(0))}
			c, err := net.DialTimeout("tcp", ts.tcpAddr, nettest.DialTimeout)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(30 * time.Second))
			if _, err := io.WriteString(c, okRequest(1)); err != nil {
				t.Fatal(err)
			}
			if resp, _ := readResponse(t, bufio.NewReader(c)); resp.StatusCode != 200 {
				t.Fatalf("GET /ok: %s", resp.Status)
			}
			names := threadNames(t)
			for _, n := range tc.named {
				if names[n] != 1 {
					t.Errorf("%d threads named %q, want 1 (all: %v)", names[n], n, names)
				}
			}
			for _, n := range tc.absent {
				if names[n] != 0 {
					t.Errorf("thread %q named (all: %v)", n, names)
				}
			}
		})
	}
}
