package main

import (
	"bytes"
	"strings"
	"testing"
)

// --help names each flag's value by what it is, never by one of its
// values: "-data-policy once ... (default "loop")" read as a contradiction.
func TestHelpNamesValuesNotExamples(t *testing.T) {
	var out bytes.Buffer
	usage(&out)
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "-data-policy ") && !strings.HasPrefix(strings.TrimSpace(line), "-data-policy POLICY") {
			t.Errorf("%q: want -data-policy POLICY", line)
		}
		if strings.HasPrefix(strings.TrimSpace(line), "-arrival ") && !strings.HasPrefix(strings.TrimSpace(line), "-arrival KIND") {
			t.Errorf("%q: want -arrival KIND", line)
		}
	}
}
