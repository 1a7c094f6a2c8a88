package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// merge takes its flags after the inputs too, as html does: "merge a.json
// b.json --threshold ... --json out.json" judges and writes, never reads
// --threshold as a file.
func TestMergeFlagsAfterInputs(t *testing.T) {
	base := mergeFixture(t)
	dir := t.TempDir()
	other := clone(t, base)
	other["instance"] = "other"
	a, b := writeJSONFile(t, dir, "a.json", base), writeJSONFile(t, dir, "b.json", other)
	out := filepath.Join(dir, "merged.json")
	var stdout, stderr bytes.Buffer
	code := run([]string{"merge", a, "--json", out, b, "--threshold", "rps<0"}, &stdout, &stderr)
	if code != exitThreshold {
		t.Fatalf("exit %d, want %d (the threshold crossed)\n%s%s", code, exitThreshold, stdout.String(), stderr.String())
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatalf("--json after the inputs was not written: %v", err)
	}
}
