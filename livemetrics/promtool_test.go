package livemetrics

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"testing"
	"weaseldb/loadtester/result"
)

// The exposition passes Prometheus's own linter (promtool check metrics:
// names, units, help, counter suffixes), on a run with every kind of
// series present. Without promtool it skips, saying so, unless
// PROMETHEUS_REQUIRED is set (CI installs it with prometheus).
func TestExpositionPassesPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("PROMETHEUS_REQUIRED") != "" {
			t.Fatal("promtool is not installed (apt-get install prometheus) and PROMETHEUS_REQUIRED is set")
		}
		t.Skip("promtool is not installed (apt-get install prometheus): the exposition is not linted")
	}
	e, err := Listen("127.0.0.1:0", Labels{Target: "http://127.0.0.1:1/", Instance: "a"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	e.Observe(result.Snapshot{Phase: result.PhaseDone,
		Measured: result.Tally{Answered: 10, FailedByKind: map[string]int64{"timeout": 2}, Unfinished: 1, Dropped: 1},
		Warmup:   result.Tally{Answered: 3}, TargetRate: 100, Hist: histOf(1e6, 2e6)})
	resp, err := http.Get("http://" + e.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s\nexposition:\n%s", err, out, body)
	}
}
