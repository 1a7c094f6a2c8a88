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

// A run whose length is no multiple of --stats-interval ends with a short
// interval tagged "last", not "partial" as an interrupted run's is.
func TestShortLastIntervalSaysLast(t *testing.T) {
	rec := startRecorder(t, false)
	var out, errOut bytes.Buffer
	if code := run([]string{"--url", rec.url + "/ok", "--concurrency", "1", "--duration", "0.5", "--stats-interval", "0.2", "--warmup", "0"}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "(last, ") || strings.Contains(out.String(), "partial") {
		t.Errorf("want the 0.1 s last interval tagged (last, ...), none partial:\n%s", out.String())
	}
}
