package main

import (
	"bytes"
	"strings"
	"testing"
)

// An unknown flag is one line naming it and pointing to -h, exit 2, not
// the whole usage; gate record and gate history alike.
func TestUnknownFlagOneLine(t *testing.T) {
	for _, args := range [][]string{{"--bogus"}, {"record", "--bogus"}, {"history", "--bogus"}} {
		var out, errOut bytes.Buffer
		code := run(args, &out, &errOut)
		if code != 2 || strings.Count(errOut.String(), "\n") != 1 || !strings.Contains(errOut.String(), "-bogus") || !strings.Contains(errOut.String(), "-h") {
			t.Errorf("%q: exit %d, stderr %q: want 2 and one line naming -bogus and -h", args, code, errOut.String())
		}
	}
}
