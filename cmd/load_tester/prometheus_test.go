package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A real Prometheus server scrapes two load_testers started together
// (--start-at), each serving its own --metrics-addr, and through its HTTP
// API has each one's answered count and their sum: the very counts of the
// results' JSON, read by the scrape --metrics-linger waits for.
func TestPrometheusScrapesARun(t *testing.T) {
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("PROMETHEUS_REQUIRED") != "" {
			t.Fatal("prometheus is not installed (apt-get install prometheus) and PROMETHEUS_REQUIRED is set")
		}
		t.Skip("prometheus is not installed (apt-get install prometheus): a real scrape is not checked")
	}
	bin := buildBinary(t)
	s := startOKServer(t, 0)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Both open their measured window at the same moment, far enough ahead
	// for both processes to start on a loaded machine.
	startAt := time.Now().Add(5 * time.Second).UTC().Format(time.RFC3339Nano)
	names := []string{"a", "b"}
	runs := make([]*metricsRun, len(names))
	var targets []string
	for i, name := range names {
		runs[i] = startMetricsRun(t, ctx, bin, dir, name, "--port", s.port(), "--concurrency", "2", "--duration", "2",
			"--stats-interval", "0.5", "--start-at", startAt)
		targets = append(targets, runs[i].metricsHost)
	}
	promAddr := startPrometheus(t, ctx, promBin, dir, targets)

	var total int64
	for _, r := range runs {
		answered := r.wait(t)
		total += answered
		checks := []struct {
			selector string
			want     float64
		}{
			{`load_tester_requests_total{phase="measured",outcome="answered",instance_name="%s"}`, float64(answered)},
			{`load_tester_latency_seconds{instance_name="%s"}`, float64(answered)}, // the native histogram's count
			{`load_tester_phase{phase="done",instance_name="%s"}`, 1},
		}
		for _, c := range checks {
			sel := fmt.Sprintf(c.selector, r.name)
			if got := waitFor(t, ctx, sel, c.want, func() (float64, error) { return lastSample(promAddr, sel) }); got != c.want {
				t.Errorf("Prometheus's last sample of %s is %g, want %g (the JSON answered %d)", sel, got, c.want, answered)
			}
		}
	}
	// The series went stale when the load_testers exited: last_over_time
	// reads their final samples.
	query := `sum(last_over_time(load_tester_requests_total{phase="measured",outcome="answered"}[5m]))`
	if got := waitFor(t, ctx, query, float64(total), func() (float64, error) { return instantQuery(promAddr, query) }); got != float64(total) {
		t.Errorf("Prometheus has %s = %g, the JSONs answered %d together", query, got, total)
	}
}

// metricsRun is a load_tester started with --metrics-addr on a free port
// and --metrics-linger, so it exits once a scrape has read its final counts.
type metricsRun struct {
	name, json, metricsHost string
	cmd                     *exec.Cmd
}

// startMetricsRun starts bin as instance name and waits for it to say where
// it serves its metrics.
func startMetricsRun(t *testing.T, ctx context.Context, bin, dir, name string, args ...string) *metricsRun {
	t.Helper()
	r := &metricsRun{name: name, json: filepath.Join(dir, name+".json")}
	args = append(args, "--instance", name, "--metrics-addr", "127.0.0.1:0", "--metrics-linger", "90", "--json", r.json)
	r.cmd = exec.CommandContext(ctx, bin, args...)
	stdout, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	for r.metricsHost == "" && lines.Scan() {
		if rest, ok := strings.CutPrefix(lines.Text(), "metrics at "); ok {
			u, err := url.Parse(rest)
			if err != nil || u.Path != "/metrics" {
				t.Fatalf("load_tester %s serves its metrics at %q, want http://HOST:PORT/metrics", name, rest)
			}
			r.metricsHost = u.Host
		}
	}
	if r.metricsHost == "" {
		t.Fatalf("load_tester %s did not say where its metrics are", name)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return r
}

// wait waits for the run to exit (once a scrape read its final counts) and
// returns its JSON's answered count.
func (r *metricsRun) wait(t *testing.T) int64 {
	t.Helper()
	if err := r.cmd.Wait(); err != nil {
		t.Fatalf("load_tester %s: %v", r.name, err)
	}
	var res struct{ Answered int64 }
	raw, err := os.ReadFile(r.json)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.Answered == 0 {
		t.Fatalf("result %s: %v, answered %d", r.json, err, res.Answered)
	}
	return res.Answered
}

// startPrometheus runs a Prometheus server scraping targets (HOST:PORT,
// /metrics) every second, on a free port (tried again on another should it
// be taken meanwhile), and returns its address; it is killed when the test
// ends.
func startPrometheus(t *testing.T, ctx context.Context, bin, dir string, targets []string) string {
	t.Helper()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: load_tester\n    static_configs:\n      - targets: ['%s']\n",
		strings.Join(targets, "', '"))
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	for attempt := 0; attempt < 3; attempt++ {
		addr := freeAddr(t)
		cmd := exec.CommandContext(ctx, bin, "--config.file", cfgPath, "--storage.tsdb.path", filepath.Join(dir, "tsdb"+strconv.Itoa(attempt)),
			"--web.listen-address", addr, "--enable-feature=native-histograms", "--log.level=warn")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		logPath := filepath.Join(dir, "prometheus.log")
		logFile, err := os.Create(logPath)
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = logFile, logFile
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait(); logFile.Close() }()
		t.Cleanup(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		})
		if waitReady(ctx, addr, exited) {
			return addr
		}
		log, _ := os.ReadFile(logPath)
		t.Logf("prometheus on %s did not start (attempt %d): %s", addr, attempt+1, log)
	}
	t.Fatal("prometheus did not start")
	return ""
}

// waitReady polls Prometheus's readiness endpoint until it answers 200;
// false if the server exited first.
func waitReady(ctx context.Context, addr string, exited <-chan error) bool {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := http.Get("http://" + addr + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		select {
		case <-exited:
			return false
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// waitFor polls get until it returns want (the sample of the final scrape
// is in), or ctx ends; it returns the last value seen.
func waitFor(t *testing.T, ctx context.Context, what string, want float64, get func() (float64, error)) float64 {
	t.Helper()
	last := -1.0
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		v, err := get()
		if err == nil {
			last = v
			if v == want {
				return v
			}
		}
		select {
		case <-ctx.Done():
			t.Logf("%s: last value %g, last error %v", what, last, err)
			return last
		case <-tick.C:
		}
	}
}

// lastSample is the newest sample of the one series selector picks, over
// the last 5 minutes (so a series gone stale when its target exited still
// counts): a float's value, or a native histogram's count (Prometheus 2.42's
// last_over_time does not take histograms).
func lastSample(addr, selector string) (float64, error) {
	var data struct {
		Result []struct {
			Values     [][2]any
			Histograms [][2]json.RawMessage
		}
	}
	if err := apiQuery(addr, selector+"[5m]", &data); err != nil {
		return 0, err
	}
	if len(data.Result) != 1 {
		return 0, fmt.Errorf("%d series, want 1", len(data.Result))
	}
	r := data.Result[0]
	if n := len(r.Values); n > 0 {
		s, _ := r.Values[n-1][1].(string)
		return strconv.ParseFloat(s, 64)
	}
	if n := len(r.Histograms); n > 0 {
		var h struct{ Count string }
		if err := json.Unmarshal(r.Histograms[n-1][1], &h); err != nil {
			return 0, err
		}
		return strconv.ParseFloat(h.Count, 64)
	}
	return 0, errors.New("no sample yet")
}

// instantQuery is the value of a query that gives one float sample.
func instantQuery(addr, query string) (float64, error) {
	var data struct {
		Result []struct {
			Value [2]any
		}
	}
	if err := apiQuery(addr, query, &data); err != nil {
		return 0, err
	}
	if len(data.Result) != 1 {
		return 0, fmt.Errorf("%d samples, want 1", len(data.Result))
	}
	s, _ := data.Result[0].Value[1].(string)
	return strconv.ParseFloat(s, 64)
}

// apiQuery runs query through Prometheus's HTTP API (/api/v1/query) and
// decodes its data into data.
func apiQuery(addr, query string, data any) error {
	resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body := struct {
		Status, Error string
		Data          any
	}{Data: data}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return err
	}
	if body.Status != "success" {
		return fmt.Errorf("query %s: %s", query, body.Error)
	}
	return nil
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
