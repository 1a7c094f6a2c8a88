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

// A real Prometheus server scrapes a running load_tester (--metrics-addr)
// and, through its HTTP API, has the run's answered count: the very count
// of the result's JSON, read by the scrape --metrics-linger waits for.
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
	jsonPath := filepath.Join(dir, "run.json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lt := exec.CommandContext(ctx, bin, "--port", s.port(), "--concurrency", "2", "--duration", "2",
		"--stats-interval", "0.5", "--metrics-addr", "127.0.0.1:0", "--metrics-linger", "90", "--json", jsonPath)
	stdout, err := lt.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := lt.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	metricsURL := ""
	for metricsURL == "" && lines.Scan() {
		if rest, ok := strings.CutPrefix(lines.Text(), "metrics at "); ok {
			metricsURL = rest
		}
	}
	if metricsURL == "" {
		t.Fatal("load_tester did not say where its metrics are")
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	promAddr := startPrometheus(t, ctx, promBin, dir, metricsURL)

	if err := lt.Wait(); err != nil { // it exits once a scrape read the final counts
		t.Fatalf("load_tester: %v", err)
	}
	var res struct{ Answered int64 }
	raw, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.Answered == 0 {
		t.Fatalf("result %s: %v, answered %d", jsonPath, err, res.Answered)
	}
	query := `load_tester_requests_total{phase="measured",outcome="answered"}`
	got := waitForQuery(t, ctx, promAddr, query, float64(res.Answered))
	if got != float64(res.Answered) {
		t.Fatalf("Prometheus has %s = %g, the JSON answered %d", query, got, res.Answered)
	}
	if n := waitForQuery(t, ctx, promAddr, `histogram_count(load_tester_latency_seconds)`, float64(res.Answered)); n != float64(res.Answered) {
		t.Errorf("Prometheus's latency histogram counts %g, the JSON answered %d", n, res.Answered)
	}
}

// startPrometheus runs a Prometheus server scraping target every second,
// on a free port (tried again on another should it be taken meanwhile),
// and returns its address; it is killed when the test ends.
func startPrometheus(t *testing.T, ctx context.Context, bin, dir, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: load_tester\n    metrics_path: %s\n    static_configs:\n      - targets: ['%s']\n", u.Path, u.Host)
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

// waitForQuery polls an instant query until it returns want (the sample
// of the final scrape is in), or ctx ends; it returns the last value seen.
func waitForQuery(t *testing.T, ctx context.Context, addr, query string, want float64) float64 {
	t.Helper()
	last := -1.0
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		v, err := instantQuery(addr, query)
		if err == nil {
			last = v
			if v == want {
				return v
			}
		}
		select {
		case <-ctx.Done():
			t.Logf("query %s: last value %g, last error %v", query, last, err)
			return last
		case <-tick.C:
		}
	}
}

func instantQuery(addr, query string) (float64, error) {
	resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string
		Data   struct {
			Result []struct {
				Value [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, err
	}
	if body.Status != "success" || len(body.Data.Result) != 1 {
		return 0, errors.New("no single sample yet")
	}
	s, _ := body.Data.Result[0].Value[1].(string)
	return strconv.ParseFloat(s, 64)
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
