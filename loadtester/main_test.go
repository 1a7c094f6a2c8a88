package loadtester

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		check   func(Config) bool
		wantErr string
	}{
		{"seed flags", strings.Fields("--unix-socket w.sock --concurrency 2000 --requests-per-conn 500 --connect-threads 2 --network-threads 10 --duration 120 --stats-interval 1"),
			func(c Config) bool {
				return c.UnixSocket == "w.sock" && c.Concurrency == 2000 && c.RequestsPerConn == 500 && c.ConnectThreads == 2 &&
					c.NetworkThreads == 10 && c.Duration == 120*time.Second && c.StatsInterval == time.Second
			}, ""},
		{"url", []string{"--url", "http://127.0.0.1:9000/v1/status?request_id=x"},
			func(c Config) bool {
				return c.Host == "127.0.0.1" && c.Port == 9000 && c.Path == "/v1/status?request_id=x"
			}, ""},
		{"durations", strings.Fields("--duration 500ms --warmup 0.5 --timeout 2s"),
			func(c Config) bool {
				return c.Duration == 500*time.Millisecond && c.Warmup == 500*time.Millisecond && c.Timeout == 2*time.Second
			}, ""},
		{"headers repeat", []string{"--header", "A: 1", "--header", "B: 2", "--pipeline", "16", "--rate", "1000"},
			func(c Config) bool { return len(c.Headers) == 2 && c.Pipeline == 16 && c.Rate == 1000 }, ""},
		{"bad concurrency", []string{"--concurrency", "0"}, nil, "--concurrency"},
		{"bad header", []string{"--header", "nocolon"}, nil, "--header"},
		{"https", []string{"--url", "https://x/"}, nil, "only http://"},
		{"unknown flag", []string{"--bogus"}, nil, "bogus"},
		{"bad duration", []string{"--duration", "soon"}, nil, "duration"},
		{"body twice", []string{"--body", "x", "--body-file", "f"}, nil, "--body"},
		{"start-at relative", []string{"--start-at", "+10s", "--instance", "pod-3"},
			func(c Config) bool {
				d := time.Until(c.StartAt)
				return d > 9*time.Second && d <= 10*time.Second && c.Instance == "pod-3"
			}, ""},
		{"start-at absolute", []string{"--start-at", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)},
			func(c Config) bool { d := time.Until(c.StartAt); return d > 59*time.Minute && d <= time.Hour }, ""},
		{"start-at past", []string{"--start-at", "2020-01-01T00:00:00Z"}, nil, "already past"},
		{"start-at too far", []string{"--start-at", "+48h"}, nil, "more than 24h0m0s ahead"},
		{"start-at garbage", []string{"--start-at", "soon"}, nil, "want RFC 3339"},
		{"start-at local time without zone", []string{"--start-at", "2030-01-01T10:00:00"}, nil, "want RFC 3339"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := ParseArgs(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !tt.check(cfg) {
				t.Fatalf("err %v, cfg %+v", err, cfg)
			}
		})
	}
}

// --start-at opens the window at that instant: the warm-up is what is left
// until then, and the result's window starts there.
func TestStartAtOpensTheWindow(t *testing.T) {
	s := startTestServer(t, "tcp", nil)
	cfg := testConfig(s)
	cfg.StartAt = time.Now().Add(700 * time.Millisecond).Truncate(time.Millisecond)
	cfg.Warmup = 300 * time.Millisecond
	cfg.Duration = 500 * time.Millisecond
	began := time.Now()
	res := runOK(t, cfg)
	if res.WindowStart != cfg.StartAt.UTC().Format(time.RFC3339Nano) {
		t.Errorf("window_start %s, want --start-at %s", res.WindowStart, cfg.StartAt.UTC().Format(time.RFC3339Nano))
	}
	if res.Warmup == nil || res.Warmup.Answered == 0 || res.Answered == 0 {
		t.Errorf("warm-up %+v, answered %d", res.Warmup, res.Answered)
	}
	if took := time.Since(began); took < 800*time.Millisecond {
		t.Errorf("the run took %v: it did not wait for --start-at", took)
	}
	// Too late by the time the load can start: a usage error.
	cfg.StartAt = time.Now().Add(-time.Millisecond)
	if _, err := Run(context.Background(), cfg, &bytes.Buffer{}); !errors.Is(err, ErrStartAtPast) {
		t.Errorf("err %v, want ErrStartAtPast", err)
	}
}

func TestMainHelpAndBadFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Main([]string{"--help"}, &out, &errOut); code != ExitOK || !strings.Contains(out.String(), "--requests-per-conn") {
		t.Errorf("--help: code %d, output %q", code, out.String())
	}
	out.Reset()
	if code := Main([]string{"--concurrency", "-1"}, &out, &errOut); code != ExitUsage || strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("bad flag: code %d, stderr %q (want one line)", code, errOut.String())
	}
}

// buildBinary builds cmd/load_tester into a temporary folder.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "load_tester")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "weaseldb/cmd/load_tester")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func TestBinaryTargetDown(t *testing.T) {
	bin := buildBinary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	for _, args := range [][]string{
		{"--port", strconv.Itoa(port), "--duration", "5"},
		{"--unix-socket", filepath.Join(t.TempDir(), "none.sock"), "--duration", "5"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cmd := exec.CommandContext(ctx, bin, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		start := time.Now()
		err := cmd.Run()
		cancel()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != ExitFailure {
			t.Errorf("%v: err %v, want exit status 1", args, err)
		}
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("%v: took %v, want within the 3 s connect timeout", args, took)
		}
		if lines := strings.Count(stderr.String(), "\n"); lines != 1 || !strings.Contains(stderr.String(), "cannot connect") {
			t.Errorf("%v: stderr %q, want one line saying it cannot connect", args, stderr.String())
		}
	}
}

func TestBinarySIGINTWritesWhatWasMeasured(t *testing.T) {
	bin := buildBinary(t)
	s := startTestServer(t, "tcp", func(s *testServer) { s.delay = time.Millisecond })
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--port", strconv.Itoa(s.port()), "--concurrency", "4",
		"--duration", "60", "--json", jsonPath, "--quiet")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	start := time.Now()
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != ExitInterrupted {
		t.Errorf("err %v, want exit status %d", err, ExitInterrupted)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("stopped %v after SIGINT", took)
	}
	res, err := ReadResult(jsonPath)
	if err != nil {
		t.Fatalf("no result after SIGINT: %v\nstdout: %s", err, stdout.String())
	}
	if !res.Interrupted || res.Requests == 0 || res.DurationS <= 0 || res.DurationS > 5 {
		t.Errorf("result: interrupted %v, requests %d, duration %.2fs", res.Interrupted, res.Requests, res.DurationS)
	}
	if !strings.Contains(stdout.String(), "requests/sec") {
		t.Errorf("no summary printed: %q", stdout.String())
	}
}

// TestAgainstWeaselDB drives the real server when it has been built.
func TestAgainstWeaselDB(t *testing.T) {
	bin := os.Getenv("WEASELDB_BIN") // a binary elsewhere than build/
	if bin == "" {
		bin = "../build/weaseldb"
	}
	bin, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skip("build/weaseldb not built (make build): skipping the run against the real server")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "w.sock")
	config := filepath.Join(dir, "w.toml")
	toml := "[server]\ninterfaces = [{ type = \"unix\", path = \"" + sock + "\" }]\n"
	if err := os.WriteFile(config, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := exec.CommandContext(ctx, bin, "--config", config)
	srv.Dir = dir
	var srvOut bytes.Buffer
	srv.Stdout, srv.Stderr = &srvOut, &srvOut
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Signal(syscall.SIGTERM)
		srv.Wait()
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("weaseldb did not listen on %s:\n%s", sock, srvOut.String())
		}
	}
	cfg := DefaultConfig()
	cfg.UnixSocket = sock
	cfg.Concurrency = 8
	cfg.RequestsPerConn = 50
	cfg.NetworkThreads = 2
	cfg.Pipeline = 2
	cfg.Duration = time.Second
	cfg.Quiet = true
	res := runOK(t, cfg)
	if res.Requests == 0 || res.Errors != 0 {
		t.Errorf("weaseldb /ok: requests %d, errors %v", res.Requests, res.ErrorsByKind)
	}
}
