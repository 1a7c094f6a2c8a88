package main

import (
	"io"
	"os"
	"strings"
	"testing"
)

// An unknown flag is one line on stderr naming it and pointing to -h,
// exit 2, not the whole usage.
func TestUnknownFlagOneLine(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	code := run([]string{"--bogus"})
	os.Stderr = stderr
	w.Close()
	out, _ := io.ReadAll(r)
	if code != 2 || strings.Count(string(out), "\n") != 1 || !strings.Contains(string(out), "-bogus") || !strings.Contains(string(out), "-h") {
		t.Fatalf("exit %d, stderr %q: want 2 and one line naming -bogus and -h", code, out)
	}
}
