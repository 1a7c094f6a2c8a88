package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --threshold: met, the run exits 0; crossed, 99 with a line naming it and
// the table in the summary; malformed, 2 before any load. Per step with
// --rate-steps; `merge --threshold` judges the merged result.
func TestThresholdExitStatus(t *testing.T) {
	s := startOKServer(t, 0)
	dir := t.TempDir()
	base := []string{"--port", s.port(), "--concurrency", "2", "--duration", "0.3", "--stats-interval", "0.1", "--quiet"}
	var out, errOut bytes.Buffer
	jsonPath := filepath.Join(dir, "r.json")
	code := run(append(base, "--threshold", "p99<10s", "--threshold", "errors<1%", "--threshold", "rps>1", "--json", jsonPath), &out, &errOut)
	if code != exitOK || !strings.Contains(out.String(), "threshold") || strings.Contains(out.String(), "FAIL") {
		t.Fatalf("met: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	var doc struct {
		Thresholds []struct {
			Expr string `json:"expr"`
			Pass bool   `json:"pass"`
		} `json:"thresholds"`
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil || len(doc.Thresholds) != 3 || !doc.Thresholds[2].Pass || doc.Thresholds[2].Expr != "rps>1" {
		t.Errorf("JSON thresholds %+v (%v)", doc.Thresholds, err)
	}

	out.Reset()
	errOut.Reset()
	code = run(append(base, "--threshold", "p99<10s", "--threshold", "rps>1e12"), &out, &errOut)
	if code != exitThreshold || !strings.Contains(errOut.String(), "thresholds crossed: rps>1e12") || strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("crossed: exit %d, stderr %q", code, errOut.String())
	}
	if !strings.Contains(out.String(), "rps>1e12") || !strings.Contains(out.String(), "FAIL") {
		t.Errorf("crossed: no table:\n%s", out.String())
	}

	// Errors past --max-errors stay exit 1, whatever the thresholds say.
	errOut.Reset()
	if code := run([]string{"--port", "1", "--threshold", "p99<1ms", "--connect-timeout", "0.2"}, &out, &errOut); code != exitFailure {
		t.Errorf("target down: exit %d, %q", code, errOut.String())
	}

	errOut.Reset()
	before := s.requests.Load()
	if code := run(append(base, "--threshold", "p99<5"), &out, &errOut); code != exitUsage ||
		!strings.Contains(errOut.String(), `"p99<5"`) || strings.Count(errOut.String(), "\n") != 1 || s.requests.Load() != before {
		t.Errorf("malformed: exit %d, %q", code, errOut.String())
	}

	// Per step.
	errOut.Reset()
	out.Reset()
	code = run([]string{"--port", s.port(), "--concurrency", "2", "--rate-steps", "50,100", "--duration", "0.3",
		"--quiet", "--threshold", "rps>75"}, &out, &errOut)
	if code != exitThreshold || !strings.Contains(out.String(), "thresholds crossed: rps>75") || !strings.Contains(out.String(), "thresholds ok") {
		t.Errorf("steps: exit %d\n%s%s", code, out.String(), errOut.String())
	}

	// merge judges the merged result.
	a, b := runJSON(t, s, dir, "a.json"), runJSON(t, s, dir, "b.json")
	out.Reset()
	errOut.Reset()
	if code := run([]string{"merge", "--threshold", "errors<=0", a, b}, &out, &errOut); code != exitOK || !strings.Contains(out.String(), "errors<=0") {
		t.Errorf("merge met: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	errOut.Reset()
	if code := run([]string{"merge", "--threshold", "rps>1e12", a, b}, &out, &errOut); code != exitThreshold || !strings.Contains(errOut.String(), "rps>1e12") {
		t.Errorf("merge crossed: exit %d, %q", code, errOut.String())
	}
	if code := run([]string{"merge", "--threshold", "nope", a, b}, &out, &errOut); code != exitUsage {
		t.Errorf("merge malformed: exit %d", code)
	}
}

// Issue 55: every response fails its check (the server answers 200, the
// check wants 201). The run still reports the latency the server took,
// as failed_latency_ns and a summary line, and a latency threshold, with
// no answered request to judge, fails (exit 99) saying why, instead of
// passing on a latency of 0; over HTTP/1.1 and h2c.
func TestThresholdOnFailedChecks(t *testing.T) {
	h1 := startOKServer(t, 0)
	h2c := startH2(t, false, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	for name, target := range map[string][]string{
		"HTTP/1.1": {"--port", h1.port()},
		"h2c":      {"--url", h2c + "/ok", "--http2"},
	} {
		t.Run(name, func(t *testing.T) {
			jsonPath := filepath.Join(t.TempDir(), "r.json")
			var out, errOut bytes.Buffer
			args := append(target, "--concurrency", "2", "--duration", "0.3", "--stats-interval", "0.1", "--quiet",
				"--check", "status==201", "--max-errors", "1000000000", "--threshold", "p99<1ms", "--json", jsonPath)
			code := run(args, &out, &errOut)
			if code != exitThreshold || !strings.Contains(errOut.String(), "p99<1ms (nothing to judge") || strings.Count(errOut.String(), "\n") != 1 {
				t.Fatalf("exit %d, stderr %q\n%s", code, errOut.String(), out.String())
			}
			if !strings.Contains(out.String(), "failed latency p50") {
				t.Errorf("no failed latency in the summary:\n%s", out.String())
			}
			var doc struct {
				Answered      int64              `json:"answered"`
				Failed        int64              `json:"failed"`
				FailedLatency map[string]float64 `json:"failed_latency_ns"`
			}
			data, err := os.ReadFile(jsonPath)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &doc); err != nil || doc.Answered != 0 || doc.Failed == 0 || doc.FailedLatency["p50"] <= 0 {
				t.Errorf("JSON: %+v (%v)", doc, err)
			}
		})
	}
}
