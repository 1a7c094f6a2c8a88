package bench

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"weaseldb/artifacts"
	"weaseldb/plan"
)

// metricsBody is a /metrics page with loop counters and Go's GC summary.
func metricsBody(requests0, requests1, gcCount, gcSum, gcMax string) string {
	return "# TYPE weaseldb_loop_connections_accepted_total counter\n" +
		"weaseldb_loop_connections_accepted_total{loop=\"0\"} 1\nweaseldb_loop_connections_accepted_total{loop=\"1\"} 1\n" +
		"# TYPE weaseldb_loop_requests_total counter\n" +
		"weaseldb_loop_requests_total{loop=\"0\"} " + requests0 + "\nweaseldb_loop_requests_total{loop=\"1\"} " + requests1 + "\n" +
		"# TYPE go_gc_duration_seconds summary\n" +
		"go_gc_duration_seconds{quantile=\"0\"} 1e-05\ngo_gc_duration_seconds{quantile=\"1\"} " + gcMax + "\n" +
		"go_gc_duration_seconds_sum " + gcSum + "\ngo_gc_duration_seconds_count " + gcCount + "\n"
}

// serveMetrics serves *body as /metrics on a unix socket.
func serveMetrics(t *testing.T, body *string) string {
	socket := filepath.Join(t.TempDir(), "m.sock")
	l, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(*body)) })}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return socket
}

// A window is the difference of two scrapes: requests summed over the
// loops, GC collections and pause seconds, the longest recent pause as
// read at its end; a server without Go's GC summary is an error naming it.
func TestSustainedWindowFromTwoScrapes(t *testing.T) {
	body := metricsBody("100", "50", "3", "0.001", "0.0004")
	socket := serveMetrics(t, &body)
	before, err := scrapeMetrics(t.Context(), socket)
	if err != nil {
		t.Fatal(err)
	}
	body = metricsBody("1100", "1050", "7", "0.003", "0.0009")
	after, err := scrapeMetrics(t.Context(), socket)
	if err != nil {
		t.Fatal(err)
	}
	w, err := sustainedWindow(before, after, 10, 20)
	if err != nil {
		t.Fatal(err)
	}
	want := artifacts.SustainedWindow{StartS: 10, EndS: 20, Requests: 2000, GCCount: 4, GCPauseS: 0.002, GCPauseMaxS: 0.0009}
	if w.Requests != want.Requests || w.GCCount != want.GCCount || w.GCPauseMaxS != want.GCPauseMaxS || w.GCPauseS < 0.0019 || w.GCPauseS > 0.0021 || w.RatePerS() != 200 {
		t.Errorf("window %+v, want %+v (200 req/s)", w, want)
	}
	body = "weaseldb_loop_requests_total{loop=\"0\"} 1\n"
	noGC, err := scrapeMetrics(t.Context(), socket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sustainedWindow(before, noGC, 0, 1); err == nil || !strings.Contains(err.Error(), gcMetric) {
		t.Errorf("no GC summary: %v", err)
	}
}

// The plan printed on a machine too small for dedicated cores says the
// dedicated throughput is not run here and what it needs: how many CPUs
// and each thread's CPU; --require-dedicated fails there before any run.
func TestPlanSaysWhatDedicatedNeeds(t *testing.T) {
	o := seedOptions(t.TempDir(), "")
	seed, _, err := o.seedSetup()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cpus []int
		skip bool
	}{{[]int{0, 1}, true}, {[]int{0, 1, 2, 3, 4, 5, 6}, false}} {
		ss := &artifacts.Setups{AllowedCPUs: "x", Rounds: 1, Setups: []artifacts.Setup{seed, plan.FitSetup(tc.cpus, seed)}}
		out := formatSetupsPlan(ss)
		if got := strings.Contains(out, "dedicated-core throughput: not run here: the dedicated fitted setup needs 7 CPUs"); got != tc.skip {
			t.Errorf("%d CPUs: says not run %v, want %v:\n%s", len(tc.cpus), got, tc.skip, out)
		}
		if tc.skip && !strings.Contains(out, "io 1; stages 2 3 4 5; load_tester 6") {
			t.Errorf("no plan for 7 CPUs:\n%s", out)
		}
	}
	o.AllowedCPUs, o.RequireDedicated = "0-1", true
	var stderr bytes.Buffer
	err = Setups(t.Context(), o, &bytes.Buffer{}, &stderr)
	if err == nil || !strings.Contains(err.Error(), "--require-dedicated") || !strings.Contains(err.Error(), "needs 7 CPUs") {
		t.Errorf("--require-dedicated on 2 CPUs: %v", err)
	}
}

// The sustained run on the real binaries: after one short round each
// setup is loaded once more, its windows read from the server beside it.
func TestSustainedRealBinaries(t *testing.T) {
	build := builtBinaries(t, "weaseldb", "load_tester", "bench_cpu_work")
	dir := t.TempDir()
	o := seedOptions(dir, build)
	o.Rounds, o.SustainS, o.SustainWindowS = 1, 3, 1
	var out, errOut bytes.Buffer
	if err := Setups(t.Context(), o, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	data, err := os.ReadFile(filepath.Join(dir, artifacts.SustainedFile))
	if err != nil {
		t.Fatal(err)
	}
	var sus artifacts.Sustained
	if err := json.Unmarshal(data, &sus); err != nil {
		t.Fatal(err)
	}
	if len(sus.Runs) != 2 || sus.SustainS != 3 || sus.WindowS != 1 {
		t.Fatalf("sustained %+v", sus)
	}
	for _, r := range sus.Runs {
		if r.Status != artifacts.StatusMeasured || r.Reason != "" || r.SampleError != "" || len(r.Windows) != 3 {
			t.Errorf("%s: %s %q %q, %d windows", r.Setup, r.Status, r.Reason, r.SampleError, len(r.Windows))
			continue
		}
		for _, w := range r.Windows {
			if w.Requests <= 0 || w.RSSBytes <= 0 || w.EndS <= w.StartS {
				t.Errorf("%s: window %+v", r.Setup, w)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, r.Load)); err != nil {
			t.Error(err)
		}
	}
}
