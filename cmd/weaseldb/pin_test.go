package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"weaseldb/internal/affinity"
)

// TestUnavailableCPUExits1: a config pinning a loop to a CPU this process may
// not use makes weaseldb exit 1 with a message naming the allowed set.
func TestUnavailableCPUExits1(t *testing.T) {
	allowed, err := affinity.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	outside := slices.Max(allowed) + 1
	cfg := fmt.Sprintf("[server]\ninterfaces = [{ type = \"unix\", path = %q }]\nio_cpus = [%d]\n", t.TempDir()+"/w.sock", outside)
	code, out := runBinary(t, "--config", writeConfig(t, cfg))
	want := fmt.Sprintf("server.io_cpus[0]: CPU %d is not available to this process (allowed: %s)", outside, affinity.FormatCPUList(allowed))
	if code != 1 || !strings.Contains(out, want) {
		t.Fatalf("exit %d, output %q: want exit 1 with %q", code, out, want)
	}
}
