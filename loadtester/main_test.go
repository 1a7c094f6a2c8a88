package loadtester

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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

// waitForPreflight returns once s has accepted the run's preflight
// connection: the run is then past its flags, its signal handler and its
// preflight, waiting for --start-at.
func waitForPreflight(t *testing.T, s *testServer) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); s.conns.Load() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no preflight connection within 10 s")
		}
	}
}

// Cancelled while waiting for --start-at (issue 24): the run is reported as
// interrupted (ErrInterrupted, wrapping the context's error), returns at
// once without sending anything, and --json says interrupted with nothing
// measured, as after an interrupt during the warm-up.
func TestStartAtWaitInterrupted(t *testing.T) {
	s := startTestServer(t, "tcp", nil)
	cfg := testConfig(s)
	cfg.StartAt = time.Now().Add(5 * time.Second)
	cfg.JSONPath = filepath.Join(t.TempDir(), "r.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for s.conns.Load() == 0 && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	res, err := Run(ctx, cfg, &bytes.Buffer{})
	if !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want ErrInterrupted wrapping context.Canceled", err)
	}
	if !time.Now().Before(cfg.StartAt) {
		t.Errorf("Run returned after --start-at: it did not stop waiting when cancelled")
	}
	if n := s.requests.Load(); n != 0 {
		t.Errorf("the server read %d requests: nothing may be sent before the window opens", n)
	}
	if res == nil || !res.Interrupted || res.Due != 0 || res.Requests != 0 {
		t.Fatalf("result %+v, want an interrupted one with nothing measured", res)
	}
	written, err := ReadResult(cfg.JSONPath)
	if err != nil {
		t.Fatalf("--json: %v", err)
	}
	if !written.Interrupted || written.Due != 0 || len(written.Warnings) == 0 {
		t.Errorf("--json: interrupted %v, due %d, warnings %q", written.Interrupted, written.Due, written.Warnings)
	}
}

// An error's exit status: an interruption before the window opened exits
// 130 like one during the run, however deeply it is wrapped.
func TestExitStatus(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"interrupted waiting for --start-at", fmt.Errorf("%w while waiting (%w)", ErrInterrupted, context.Canceled), ExitInterrupted},
		{"wrapped twice", fmt.Errorf("run: %w", fmt.Errorf("%w while waiting", ErrInterrupted)), ExitInterrupted},
		{"start-at past", fmt.Errorf("%w: 2020-01-01", ErrStartAtPast), ExitUsage},
		{"descriptors", fmt.Errorf("%w: 10", ErrTooFewDescriptors), ExitUsage},
		{"target down", fmt.Errorf("%w: refused", ErrTargetDown), ExitFailure},
		{"context canceled alone", context.Canceled, ExitFailure},
		{"other", errors.New("write --json: disk full"), ExitFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exitStatus(tt.err); got != tt.want {
				t.Errorf("exitStatus(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
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

// ^C while waiting for --start-at exits 130, like ^C during the run, with
// one line on stderr and a --json result that says interrupted.
func TestBinarySIGINTDuringStartAtWait(t *testing.T) {
	bin := buildBinary(t)
	s := startTestServer(t, "tcp", nil)
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--port", strconv.Itoa(s.port()), "--start-at", "+10s",
		"--duration", "1", "--json", jsonPath, "--quiet")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForPreflight(t, s)
	cmd.Process.Signal(syscall.SIGINT)
	start := time.Now()
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != ExitInterrupted {
		t.Errorf("err %v, want exit status %d\nstdout: %s\nstderr: %s", err, ExitInterrupted, stdout.String(), stderr.String())
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("stopped %v after SIGINT: it kept waiting for --start-at", took)
	}
	if lines := strings.Count(stderr.String(), "\n"); lines != 1 || !strings.Contains(stderr.String(), "interrupted while waiting for --start-at") {
		t.Errorf("stderr %q, want one line saying it was interrupted while waiting", stderr.String())
	}
	res, err := ReadResult(jsonPath)
	if err != nil {
		t.Fatalf("no result after SIGINT: %v\nstdout: %s", err, stdout.String())
	}
	if !res.Interrupted || res.Due != 0 || s.requests.Load() != 0 {
		t.Errorf("result: interrupted %v, due %d; server read %d requests", res.Interrupted, res.Due, s.requests.Load())
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
