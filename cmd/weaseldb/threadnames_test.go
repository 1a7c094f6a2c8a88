package main

import (
	"slices"
	"testing"
	"time"

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

// With the defaults (nothing but a listener configured), every loop and
// stage has a thread of its own under its name, for top -H and perf.
func TestDefaultConfigNamesThreads(t *testing.T) {
	r := startBinary(t, "[server]\ninterfaces = [{ type = \"tcp\", address = \"127.0.0.1\", port = 0 }]\nio_threads = 2\n")
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
