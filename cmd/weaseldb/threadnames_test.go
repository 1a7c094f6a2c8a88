package main

import (
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"weaseldb/internal/nettest"
	"weaseldb/internal/procstat"
)

// taskNames lists the names of a process's threads, as ps -L and top -H
// show them.
func taskNames(t *testing.T, pid int) []string {
	t.Helper()
	threads, err := procstat.Threads(pid)
	if err != nil {
		t.Fatalf("reading the threads of %d: %v", pid, err)
	}
	var names []string
	for _, th := range threads {
		names = append(names, th.Comm)
	}
	return names
}

// With thread_names = true every loop and stage has a thread of its own
// under its name, for top -H and perf.
func TestThreadNamesTrueNamesThreads(t *testing.T) {
	r := startBinary(t, "[server]\ninterfaces = [{ type = \"tcp\", address = \"127.0.0.1\", port = 0 }]\nio_threads = 2\nthread_names = true\n")
	want := []string{"io-0", "io-1", "sequence", "resolve", "persist", "release-0"}
	var names []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		names = taskNames(t, r.Pid())
		if !slices.ContainsFunc(want, func(n string) bool { return !slices.Contains(names, n) }) {
			return
		}
	}
	t.Fatalf("threads %v, want among them %v", names, want)
}

// With the defaults (nothing but a listener configured: thread_names
// "auto", epoll, nothing pinned) the loop and the stages run as
// goroutines, with no OS thread switch per hand-off: once a GET /ok is
// answered, every one of them ran, and no thread is named after them.
// The backend is set to epoll (its default) even in make test's io_uring
// pass: "auto" names io_uring's loops, whose threads are locked anyway.
func TestDefaultConfigRunsGoroutines(t *testing.T) {
	r := startBinary(t, "[server]\ninterfaces = [{ type = \"tcp\", address = \"127.0.0.1\", port = 0 }]\nio_threads = 1\nio_backend = \"epoll\"\n[commit]\npipeline_release_threads = 1\n")
	addr := strings.TrimPrefix(r.addrs[0], "tcp ")
	c, err := net.DialTimeout("tcp", addr, nettest.DialTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
	buf := make([]byte, 12)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "HTTP/1.1 200" {
		t.Fatalf("%q %v", buf, err)
	}
	names := taskNames(t, r.Pid())
	for _, n := range []string{"io-0", "sequence", "resolve", "persist", "release-0"} {
		if slices.Contains(names, n) {
			t.Errorf("a thread named %q with the defaults (all: %v)", n, names)
		}
	}
}
