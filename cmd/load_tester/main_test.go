package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	vegeta "github.com/tsenart/vegeta/v12/lib"
	"golang.org/x/sys/unix"

	"weaseldb/loadtester"
	"weaseldb/loadtester/result"
)

// okServer answers every request with 200 after delay, counting the
// connections it accepted and the requests it read.
type okServer struct {
	*httptest.Server
	conns, requests atomic.Int64
}

func startOKServer(t *testing.T, delay time.Duration) *okServer {
	t.Helper()
	s := &okServer{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		time.Sleep(delay)
		w.Write([]byte(`{"status":"ok"}`))
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func (s *okServer) port() string { return strconv.Itoa(s.Listener.Addr().(*net.TCPAddr).Port) }

// waitForPreflight returns once s has accepted the run's preflight
// connection: the run is then past its flags, its signal handler and its
// preflight, waiting for --start-at.
func waitForPreflight(t *testing.T, s *okServer) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); s.conns.Load() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no preflight connection within 10 s")
		}
	}
}

// waitForRequests waits until s has been asked n requests: with at most
// the run's connections in flight, the client has answers to report.
func waitForRequests(t *testing.T, s *okServer, n int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); s.requests.Load() < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests of %d within 10 s", s.requests.Load(), n)
		}
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
		{"interrupted waiting for --start-at", fmt.Errorf("%w while waiting (%w)", loadtester.ErrInterrupted, context.Canceled), exitInterrupted},
		{"wrapped twice", fmt.Errorf("run: %w", fmt.Errorf("%w while waiting", loadtester.ErrInterrupted)), exitInterrupted},
		{"start-at past", fmt.Errorf("%w: 2020-01-01", loadtester.ErrStartAtPast), exitUsage},
		{"descriptors", fmt.Errorf("%w: 10", loadtester.ErrTooFewDescriptors), exitUsage},
		{"target down", fmt.Errorf("%w: refused", loadtester.ErrTargetDown), exitFailure},
		{"context canceled alone", context.Canceled, exitFailure},
		{"other", errors.New("write --json: disk full"), exitFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exitStatus(tt.err); got != tt.want {
				t.Errorf("exitStatus(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

// A finished run's exit status follows its verdict.
func TestOutcomeStatus(t *testing.T) {
	tests := []struct {
		name string
		res  result.Result
		max  int64
		want int
	}{
		{"clean", result.Result{Requests: 10, Answered: 10, Due: 10}, 0, exitOK},
		{"not clean, within --max-errors", result.Result{Requests: 10, Answered: 10, Unfinished: 2, Due: 12}, 5, exitOK},
		{"over --max-errors", result.Result{Requests: 10, Answered: 10, Dropped: 1, Due: 11}, 0, exitFailure},
		{"no responses", result.Result{}, 0, exitFailure},
		{"interrupted", result.Result{Interrupted: true, Unfinished: 5}, 0, exitInterrupted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outcome, _, _ := result.Verdict(&tt.res, tt.max)
			if got := outcomeStatus(outcome); got != tt.want {
				t.Errorf("exit %d, want %d", got, tt.want)
			}
		})
	}
}

func TestHelpAndBadFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"--help"}, &out, &errOut); code != exitOK || !strings.Contains(out.String(), "--requests-per-conn") {
		t.Errorf("--help: code %d, output %q", code, out.String())
	}
	out.Reset()
	if code := run([]string{"--concurrency", "-1"}, &out, &errOut); code != exitUsage || strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("bad flag: code %d, stderr %q (want one line)", code, errOut.String())
	}
	out.Reset()
	if code := run([]string{"merge", "--help"}, &out, &errOut); code != exitOK || !strings.Contains(out.String(), "IN.json...") {
		t.Errorf("merge --help: code %d, output %q", code, out.String())
	}
}

// The outputs the command writes agree with each other and with what it
// printed: the JSON (naming the vegeta file), the HDR log (an interval per
// measured interval) and vegeta's results (one per due request), written
// after the progress lines, before the summary and its verdict.
func TestOutputsWritten(t *testing.T) {
	s := startOKServer(t, time.Millisecond)
	dir := t.TempDir()
	jsonPath, hlog, bin := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.hlog"), filepath.Join(dir, "r.bin")
	var out, errOut bytes.Buffer
	code := run([]string{"--port", s.port(), "--concurrency", "4", "--duration", "1", "--warmup", "0.2",
		"--stats-interval", "0.25", "--json", jsonPath, "--hdr-log", hlog, "--vegeta", bin}, &out, &errOut)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	res, err := result.ReadResult(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if res.VegetaFile != bin || res.VegetaSampleEvery != 1 || res.Requests == 0 {
		t.Errorf("vegeta_file %q, every %d, requests %d", res.VegetaFile, res.VegetaSampleEvery, res.Requests)
	}
	var logged, intervals int64
	for _, h := range readHDRLog(t, hlog) {
		logged += h.TotalCount()
		intervals++
	}
	if logged != res.Hist().TotalCount() || intervals != int64(len(res.Intervals)) {
		t.Errorf("HDR log: %d values in %d intervals, the result %d in %d", logged, intervals, res.Hist().TotalCount(), len(res.Intervals))
	}
	if got := readVegeta(t, bin); int64(len(got)) != res.Due {
		t.Errorf("vegeta: %d results for %d due requests", len(got), res.Due)
	}
	text := out.String()
	header, note, summary, verdict := strings.Index(text, "t(s)"), strings.Index(text, "vegeta: wrote all"),
		strings.Index(text, "requests/sec"), strings.Index(text, "verdict       ok")
	if header < 0 || !(header < note && note < summary && summary < verdict) || !strings.Contains(text, "(warm-up, excluded)") {
		t.Errorf("want the progress lines, the vegeta note, the summary and the verdict in that order:\n%s", text)
	}
	// --quiet: the summary alone.
	out.Reset()
	if code := run([]string{"--port", s.port(), "--concurrency", "2", "--duration", "0.3", "--quiet",
		"--vegeta", bin}, &out, &errOut); code != exitOK || strings.Contains(out.String(), "t(s)") || strings.Contains(out.String(), "vegeta:") {
		t.Errorf("--quiet: exit %d, printed:\n%s", code, out.String())
	}
}

// An output that cannot be written fails the command (exit 1, one line):
// each before any load (outputcheck_test.go checks no request is sent).
func TestOutputNotWritten(t *testing.T) {
	s := startOKServer(t, 0)
	missing := filepath.Join(t.TempDir(), "no", "such", "dir")
	for _, tc := range []struct{ flag, want string }{
		{"--hdr-log", "load_tester: --hdr-log: open "},
		{"--json", "load_tester: --json " + missing},
		{"--vegeta", "load_tester: --vegeta " + missing},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run([]string{"--port", s.port(), "--concurrency", "2", "--duration", "0.3", "--quiet", tc.flag, filepath.Join(missing, "f")}, &out, &errOut)
			if code != exitFailure || strings.Count(errOut.String(), "\n") != 1 || !strings.HasPrefix(errOut.String(), tc.want) {
				t.Errorf("exit %d, stderr %q: want 1 and one line starting %q", code, errOut.String(), tc.want)
			}
		})
	}
}

func readHDRLog(t *testing.T, path string) []*hdrhistogram.Histogram {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reader := hdrhistogram.NewHistogramLogReader(f)
	var out []*hdrhistogram.Histogram
	for {
		h, err := reader.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("hdr log: %v", err)
		}
		if h == nil {
			return out
		}
		out = append(out, h)
	}
}

func readVegeta(t *testing.T, path string) []vegeta.Result {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) == 0 {
		return nil // no results at all
	}
	dec := vegeta.DecoderFor(bytes.NewReader(data))
	if dec == nil {
		t.Fatalf("vegeta cannot detect the encoding of %s", path)
	}
	var out []vegeta.Result
	for {
		var r vegeta.Result
		if err := dec.Decode(&r); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("%s: %v", path, err)
			}
			return out
		}
		out = append(out, r)
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
		if !errors.As(err, &exit) || exit.ExitCode() != exitFailure {
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
	s := startOKServer(t, time.Millisecond)
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--port", s.port(), "--concurrency", "4",
		"--duration", "60", "--json", jsonPath, "--quiet")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForRequests(t, s, 50) // measured requests to write, however slow the start
	cmd.Process.Signal(syscall.SIGINT)
	start := time.Now()
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted {
		t.Errorf("err %v, want exit status %d", err, exitInterrupted)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("stopped %v after SIGINT", took)
	}
	res, err := result.ReadResult(jsonPath)
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
// one line on stderr and a --json result that says interrupted; the HDR
// log and vegeta files asked for are written empty, so nothing an earlier
// run left there is taken for this one's.
func TestBinarySIGINTDuringStartAtWait(t *testing.T) {
	bin := buildBinary(t)
	s := startOKServer(t, 0)
	dir := t.TempDir()
	jsonPath, hlog, bin2 := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.hlog"), filepath.Join(dir, "r.bin")
	for _, p := range []string{hlog, bin2} {
		if err := os.WriteFile(p, []byte("an earlier run's"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--port", s.port(), "--start-at", "+10s",
		"--duration", "1", "--json", jsonPath, "--hdr-log", hlog, "--vegeta", bin2, "--quiet")
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
	if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted {
		t.Errorf("err %v, want exit status %d\nstdout: %s\nstderr: %s", err, exitInterrupted, stdout.String(), stderr.String())
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("stopped %v after SIGINT: it kept waiting for --start-at", took)
	}
	if lines := strings.Count(stderr.String(), "\n"); lines != 1 || !strings.Contains(stderr.String(), "interrupted while waiting for --start-at") {
		t.Errorf("stderr %q, want one line saying it was interrupted while waiting", stderr.String())
	}
	res, err := result.ReadResult(jsonPath)
	if err != nil {
		t.Fatalf("no result after SIGINT: %v\nstdout: %s", err, stdout.String())
	}
	if !res.Interrupted || res.Due != 0 || s.requests.Load() != 0 {
		t.Errorf("result: interrupted %v, due %d; server read %d requests", res.Interrupted, res.Due, s.requests.Load())
	}
	for _, p := range []string{hlog, bin2} {
		if st, err := os.Stat(p); err != nil || st.Size() != 0 {
			t.Errorf("%s: %v, want it emptied", p, err)
		}
	}
}

// descriptorChildEnv makes the test binary, re-run by
// TestRefusesMoreConnectionsThanDescriptors, lower its own descriptor
// limit (soft and hard: no raising it back) and run the command.
const descriptorChildEnv = "LOADTESTER_DESCRIPTOR_CHILD"

func TestDescriptorChild(t *testing.T) {
	if os.Getenv(descriptorChildEnv) != "1" {
		t.Skip("run by TestRefusesMoreConnectionsThanDescriptors")
	}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 64, Max: 64}); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		os.Exit(3)
	}
	os.Exit(run([]string{"--unix-socket", "/nonexistent/none.sock", "--concurrency", "100", "--duration", "1"}, os.Stdout, os.Stderr))
}

// A run that cannot hold its connections is refused before it starts
// (exit 2, the numbers and the fix in one line) instead of running with
// fewer connections than asked and a count of connect errors.
func TestRefusesMoreConnectionsThanDescriptors(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestDescriptorChild$")
	cmd.Env = append(os.Environ(), descriptorChildEnv+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitUsage {
		t.Fatalf("exit %v, want %d; stderr: %s", err, exitUsage, stderr.String())
	}
	for _, want := range []string{"--concurrency 100 needs", "64", "ulimit -n"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q lacks %q", stderr.String(), want)
		}
	}
	if strings.Contains(stderr.String(), "cannot connect") || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("stderr %q: want one line, before trying the target", stderr.String())
	}
}
