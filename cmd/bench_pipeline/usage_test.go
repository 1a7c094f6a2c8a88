package main

import (
	"bytes"
	"strings"
	"testing"

	"weaseldb/internal/benchmain"
)

// An unknown flag is one line naming it and pointing to -h, exit 2, not
// the whole usage.
func TestUnknownFlagOneLine(t *testing.T) {
	var out, errOut bytes.Buffer
	code := benchmain.Run("bench_pipeline", []string{"--bogus"}, &out, &errOut, parseArgs, run)
	if code != benchmain.ExitBadArgs || strings.Count(errOut.String(), "\n") != 1 || !strings.Contains(errOut.String(), "-bogus") || !strings.Contains(errOut.String(), "-h") {
		t.Fatalf("exit %d, stderr %q: want 2 and one line naming -bogus and -h", code, errOut.String())
	}
}
