package loadrun

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The test binary is its own fake tool: with LOADRUN_FAKE set it behaves
// as that mode says (a load_tester that writes its --json result, or not,
// and exits as told) instead of running the tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("LOADRUN_FAKE"); mode != "" {
		os.Exit(fakeMain(mode, os.Args[1:]))
	}
	// The fake is this test binary: built with -race it would sleep a
	// second at exit (the race runtime's atexit_sleep_ms default).
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	os.Exit(m.Run())
}

const fakeResult = `{"version":2,"requests":10,"answered":10,"due":10,"requests_per_sec":5}`

func fakeMain(mode string, args []string) int {
	fs := flag.NewFlagSet("fake", flag.ContinueOnError)
	jsonPath := fs.String("json", "", "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	write := func(doc string) {
		if err := os.WriteFile(*jsonPath, []byte(doc), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "fake:", err)
			os.Exit(1)
		}
	}
	switch mode {
	case "ok":
		fmt.Println("fake: measuring")
		write(fakeResult)
		return 0
	case "exit1":
		write(fakeResult)
		fmt.Fprintln(os.Stderr, "fake: 3 unfinished")
		return 1
	case "exit1-nojson":
		fmt.Fprintln(os.Stderr, "fake: target down")
		return 1
	case "nojson":
		return 0
	case "garbled":
		write("{not json")
		return 0
	case "sleep": // as load_tester: SIGINT writes what was measured, marked interrupted
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt)
		fmt.Println("fake: running")
		select {
		case <-sig:
			write(`{"version":2,"requests":3,"interrupted":true}`)
			return 130
		case <-time.After(time.Minute):
			return 0
		}
	case "deaf": // ignores SIGINT: only SIGKILL ends it
		signal.Ignore(os.Interrupt)
		fmt.Println("fake: not listening")
		time.Sleep(time.Minute)
		return 0
	}
	return 2
}

func fakeSpec(t *testing.T, mode string) Spec {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("LOADRUN_FAKE", mode)
	return Spec{Command: Command{Binary: self, Grace: 2 * time.Second}, JSONPath: filepath.Join(t.TempDir(), "load.json")}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name     string
		mode     string
		timeout  time.Duration
		cancelOn string // cancel the context once the tool prints this line ("": never)
		result   bool   // a result comes back
		check    func(err error) bool
		wantText string // in the error's message
	}{
		{name: "clean", mode: "ok", result: true, check: func(err error) bool { return err == nil }},
		{name: "exit 1 with a result", mode: "exit1", result: true, check: func(err error) bool {
			var e *ExitError
			return errors.As(err, &e) && e.Status == 1 && e.LastLine == ": fake: 3 unfinished" && e.Tool == LoadTester
		}, wantText: "load_tester exited with status 1: fake: 3 unfinished"},
		{name: "exit 1 without a result", mode: "exit1-nojson", check: func(err error) bool {
			var e *ExitError
			return errors.As(err, &e) && e.Err.Error() == "exit status 1"
		}, wantText: "target down"},
		{name: "exit 0 without a result", mode: "nojson", check: func(err error) bool {
			return errors.Is(err, os.ErrNotExist)
		}, wantText: "load_tester wrote no result: open "},
		{name: "garbled result", mode: "garbled", check: func(err error) bool { return err != nil }, wantText: "parse result"},
		{name: "timeout", mode: "sleep", timeout: 300 * time.Millisecond, check: func(err error) bool {
			var e *TimeoutError
			return errors.As(err, &e) && e.Limit == 300*time.Millisecond && errors.Is(err, context.DeadlineExceeded)
		}, wantText: "load_tester did not finish within 300ms"},
		{name: "interrupted: SIGINT, and what it measured comes back", mode: "sleep", cancelOn: "fake: running", result: true,
			check: func(err error) bool { return errors.Is(err, ErrInterrupted) && errors.Is(err, context.Canceled) }, wantText: "interrupted"},
		{name: "interrupted, deaf to SIGINT: killed after the grace", mode: "deaf", cancelOn: "fake: not listening",
			check: func(err error) bool { return errors.Is(err, ErrInterrupted) }, wantText: "interrupted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := fakeSpec(t, tt.mode)
			s.Timeout = tt.timeout
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancelOn != "" {
				// On the tool's word that its handler is in place, never
				// after a guessed delay: a SIGINT before it kills the tool
				// (a loaded machine starts it slowly) and nothing is written.
				s.Output = &lineTrigger{line: tt.cancelOn, fire: cancel}
			}
			began := time.Now()
			res, err := Run(ctx, s)
			if took := time.Since(began); took > 10*time.Second {
				t.Errorf("took %v: the tool was not stopped", took)
			}
			if (res != nil) != tt.result {
				t.Errorf("result %+v, want one: %v", res, tt.result)
			}
			if !tt.check(err) {
				t.Errorf("error %v (%T) is not the one expected", err, err)
			}
			if err != nil && !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("error %q, want it to say %q", err, tt.wantText)
			}
			if tt.mode == "sleep" && tt.cancelOn != "" && (res == nil || !res.Interrupted || res.Requests != 3) {
				t.Errorf("an interrupted run's result %+v, want the one written on SIGINT", res)
			}
		})
	}
}

func TestRunRemovesAStaleResult(t *testing.T) {
	s := fakeSpec(t, "nojson")
	if err := os.WriteFile(s.JSONPath, []byte(fakeResult), 0o644); err != nil {
		t.Fatal(err)
	}
	if res, err := Run(context.Background(), s); res != nil || err == nil {
		t.Fatalf("a stale result was read as this run's: %+v, %v", res, err)
	}
}

func TestExecOutputAndStart(t *testing.T) {
	s := fakeSpec(t, "ok")
	var out bytes.Buffer
	var pid int
	c := s.Command
	c.Args, c.Output, c.OnStart = s.Argv(), &out, func(p int) { pid = p }
	if err := Exec(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if pid <= 0 || out.String() != "fake: measuring\n" {
		t.Errorf("pid %d, output %q", pid, out.String())
	}
	c.Binary = filepath.Join(t.TempDir(), "missing")
	err := Exec(context.Background(), c)
	var failed *RunError
	if !errors.As(err, &failed) || !strings.HasPrefix(err.Error(), "missing: ") || !errors.Is(err, syscall.ENOENT) {
		t.Errorf("a missing binary: %v", err)
	}
}

func TestArgv(t *testing.T) {
	s := Spec{Command: Command{Args: []string{"--duration", "1s"}}, JSONPath: "/r/load.json"}
	got := strings.Join(s.Argv(), " ")
	if got != "--duration 1s --json /r/load.json" || len(s.Args) != 2 {
		t.Errorf("Argv %q (Args %v)", got, s.Args)
	}
}

func TestLastLine(t *testing.T) {
	long := strings.Repeat("x", 250)
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"nothing", nil, ""},
		{"white space only", []string{" \n\t\n"}, ""},
		{"one line", []string{"load_tester: 40 unfinished\n"}, ": load_tester: 40 unfinished"},
		{"the last of several, blank lines after it", []string{"a\nb\n\n  \n"}, ": b"},
		{"trimmed", []string{"  spaced out \r\n"}, ": spaced out"},
		{"no final newline", []string{"a\n", "part", "ial"}, ": partial"},
		{"split across writes", []string{"fir", "st\nsec", "ond\n"}, ": second"},
		{"cut at 200 bytes", []string{long + "\n"}, ": " + long[:200] + "..."},
		{"white space past 200 bytes is no cut", []string{long[:200] + "     \n"}, ": " + long[:200]},
	}
	for _, tt := range tests {
		var l lastLine
		for _, w := range tt.writes {
			l.Write([]byte(w))
		}
		if got := l.String(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// lineTrigger calls fire once a whole line equal to line has been written.
type lineTrigger struct {
	mu   sync.Mutex
	buf  []byte
	line string
	fire func()
	done bool
}

func (w *lineTrigger) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for !w.done {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		if strings.TrimSpace(string(w.buf[:i])) == w.line {
			w.done = true
			w.fire()
		}
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}
