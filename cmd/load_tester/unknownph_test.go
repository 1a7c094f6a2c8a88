package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"weaseldb/loadtester/result"
)

// A misspelled placeholder is sent as it is, as documented, but the run
// says so at its start, once, naming it, and the result keeps the warning.
func TestMisspelledPlaceholderWarns(t *testing.T) {
	rec := startRecorder(t, false)
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	var out, errOut bytes.Buffer
	code := run([]string{"--url", rec.url + "/a/{{sequence}}", "--header", "X-Id: {{uid}}", "--concurrency", "1", "--duration", "0.2",
		"--warmup", "0", "--json", jsonPath}, &out, &errOut)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if got := rec.got()[0]; got.target != "/a/{{sequence}}" || got.header.Get("X-Id") != "{{uid}}" {
		t.Errorf("the server got %q with X-Id %q, want them as typed", got.target, got.header.Get("X-Id"))
	}
	first, _, _ := strings.Cut(out.String(), "\n")
	if !strings.Contains(first, "unknown placeholder") || !strings.Contains(first, "{{sequence}}") || !strings.Contains(first, "{{uid}}") {
		t.Errorf("no first line warning of {{sequence}} and {{uid}}:\n%s", out.String())
	}
	res, err := result.ReadResult(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(res.Warnings, "\n"); strings.Count(w, "{{sequence}}") != 1 {
		t.Errorf("warnings %q: want {{sequence}} named once", res.Warnings)
	}
}

// Over rate steps the warning is said once, as the first step starts (not
// again at every step), and the steps document keeps it once.
func TestMisspelledPlaceholderWarnsOnceOverSteps(t *testing.T) {
	s := startOKServer(t, 0)
	jsonPath := filepath.Join(t.TempDir(), "steps.json")
	var out, errOut bytes.Buffer
	code := run([]string{"--port", s.port(), "--path", "/ok?id={{sequence}}", "--concurrency", "2", "--rate-steps", "100x2x3",
		"--warmup", "0", "--duration", "0.2", "--json", jsonPath}, &out, &errOut)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if n := strings.Count(out.String(), "warning: "); n != 1 || !strings.Contains(out.String(), "{{sequence}}") {
		t.Errorf("%d start-of-step warnings, want one naming {{sequence}}:\n%s", n, out.String())
	}
	sr, err := result.ReadSteps(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(sr.Warnings, "\n"); strings.Count(w, "{{sequence}}") != 1 {
		t.Errorf("the steps document's warnings %q: want {{sequence}} named once", sr.Warnings)
	}
}
