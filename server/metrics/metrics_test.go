package metrics

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestEncodeHasEveryFamily(t *testing.T) {
	m := New()
	m.Request(RouteOK, 200, 3*time.Microsecond)
	m.Request(RouteNotFound, 404, time.Microsecond)
	m.Request(RouteInvalid, 418, time.Microsecond)
	m.ConnOpened()
	m.StageBatch(0, 16, time.Microsecond)
	m.StageWait(1, time.Microsecond)
	m.Push(16)
	out, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`weaseldb_http_requests_total{code="200",route="ok"} 1`,
		`weaseldb_http_requests_total{code="other",route="invalid"} 1`,
		`weaseldb_open_connections 1`,
		`weaseldb_pipeline_batch_size_count{stage="sequence"} 1`,
		`weaseldb_http_request_duration_seconds_bucket{route="ok",le=`,
		`weaseldb_pipeline_stage_busy_seconds_total{stage="sequence"}`,
		`weaseldb_pipeline_stage_wait_seconds_count{stage="resolve"} 1`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("missing %q", want)
		}
	}
}

// promtool accepts the output (skipped when promtool is not installed).
func TestPromtoolCheck(t *testing.T) {
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (apt-get install prometheus)")
	}
	m := New()
	m.Request(RouteOK, 200, time.Microsecond)
	out, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = bytes.NewReader(out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, msg)
	}
}

func BenchmarkRequest(b *testing.B) {
	m := New()
	for i := 0; i < b.N; i++ {
		m.Request(RouteOK, 200, time.Microsecond)
	}
}

// Each loop's counts are exported by loop index.
func TestLoopCountsByLoop(t *testing.T) {
	m := New()
	m.RegisterLoopStats(nil, func() LoopStats {
		return LoopStats{Loops: []LoopCount{{Accepted: 3, Requests: 30}, {Accepted: 4, Requests: 0}}}
	})
	out, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`weaseldb_loop_connections_accepted_total{loop="0"} 3`,
		`weaseldb_loop_connections_accepted_total{loop="1"} 4`,
		`weaseldb_loop_requests_total{loop="0"} 30`,
		`weaseldb_loop_requests_total{loop="1"} 0`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}
