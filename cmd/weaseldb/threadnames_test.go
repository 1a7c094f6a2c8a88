package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// taskNames lists the names of a process's threads, as ps -L and top -H
// show them (/proc/PID/task/*/comm).
func taskNames(t *testing.T, pid int) []string {
	t.Helper()
	paths, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/comm", pid))
	if err != nil || len(paths) == 0 {
		t.Skipf("no /proc/%d/task: %v", pid, err)
	}
	var names []string
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil { // a thread may end while we list them
			names = append(names, strings.TrimSuffix(string(b), "\n"))
		}
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
