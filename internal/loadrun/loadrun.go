// Package loadrun is the one way the harness runs load_tester, and any other
// of its tools, as a child process: the gate's load runs and the report's
// (bench) all go through it.
//
// A run is started through internal/serverproc (Pdeathsig: it cannot
// outlive the harness; pinned to CPUs when asked). When the caller's
// context ends (an interrupt) or the run passes its time limit, the tool
// gets SIGINT first, as a terminal's Ctrl-C would give it: load_tester then
// writes what it measured, marked interrupted. Whatever is still running a
// grace later is killed. Run reads load_tester's JSON result back
// (result.ReadResult) and says how the run ended with a typed error:
// ErrInterrupted, *TimeoutError, *ExitError, or one that names why the tool
// could not be run or its result read.
//
// Who owns what: Exec's caller owns the Command and its Output; os/exec's
// copying goroutine writes the tool's output (to Output and to the package's
// last-line record, under its mutex); Exec reads the record only after
// the tool was waited for.
package loadrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"weaseldb/internal/serverproc"
	"weaseldb/loadtester/result"
)

// DefaultGrace is how long a tool may take to stop after SIGINT before it
// is killed: load_tester drains and writes its result in that time.
const DefaultGrace = 5 * time.Second

// LoadTester names load_tester in messages, whatever its binary is called.
const LoadTester = "load_tester"

// ErrInterrupted is a run cut short because its context was cancelled (an
// interrupt): the tool was stopped with SIGINT (then SIGKILL after the
// grace). It wraps context.Canceled.
var ErrInterrupted error = interrupted{}

type interrupted struct{}

// "interrupted" is what the gate has always recorded for such a run.
func (interrupted) Error() string { return "interrupted" }
func (interrupted) Unwrap() error { return context.Canceled }

// TimeoutError is a run that passed its time limit: it was stopped as an
// interrupted one is.
type TimeoutError struct {
	Tool  string
	Limit time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s did not finish within %v", e.Tool, e.Limit)
}

// Unwrap makes a timeout a context.DeadlineExceeded.
func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

// ExitError is a tool that exited with a non-zero status, or was killed by
// a signal (Status -1). For load_tester that is its own verdict on the run
// (failed, unfinished or dropped requests over --max-errors, the target
// down), and Run returns the result it wrote beside the error.
type ExitError struct {
	Tool     string
	Status   int    // its exit status; -1 when a signal ended it
	LastLine string // ": <its last line of output>" or ""
	Err      error  // the *exec.ExitError: "exit status 1", "signal: killed"
}

func (e *ExitError) Error() string {
	return fmt.Sprintf("%s exited with status %d%s", e.Tool, e.Status, e.LastLine)
}

func (e *ExitError) Unwrap() error { return e.Err }

// RunError is a tool that could not be started, or waited for (its
// output outlived it by more than the grace).
type RunError struct {
	Tool     string
	LastLine string // ": <its last line of output>" or ""
	Err      error
}

func (e *RunError) Error() string { return fmt.Sprintf("%s: %v%s", e.Tool, e.Err, e.LastLine) }

func (e *RunError) Unwrap() error { return e.Err }

// Command is one run of a tool.
type Command struct {
	Name    string // in messages; default the binary's base name (Run: LoadTester)
	Binary  string
	Args    []string
	CPUs    []int         // run it (every thread) on these CPUs only; empty: unpinned
	Timeout time.Duration // its time limit; 0: none but the context's
	Grace   time.Duration // from SIGINT to SIGKILL; 0: DefaultGrace
	// Output receives everything the tool prints, stdout and stderr (nil:
	// nothing but its last line is kept, for errors).
	Output io.Writer
	// OnStart, when set, is told the tool's pid once it started, on the
	// calling goroutine, before the tool is waited for.
	OnStart func(pid int)
}

func (c Command) name() string {
	if c.Name != "" {
		return c.Name
	}
	return filepath.Base(c.Binary)
}

// Exec runs the tool to completion. It returns nil when the tool exited 0;
// otherwise ErrInterrupted (ctx ended before it did), *TimeoutError,
// *ExitError or *RunError.
func Exec(ctx context.Context, c Command) error {
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if c.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, c.Timeout)
	}
	defer cancel()
	last := &lastLine{}
	cmd := exec.CommandContext(runCtx, c.Binary, c.Args...)
	var out io.Writer = last
	if c.Output != nil {
		out = io.MultiWriter(c.Output, last)
	}
	// One writer for both: os/exec then copies them on one goroutine, in
	// the order the tool wrote them.
	cmd.Stdout, cmd.Stderr = out, out
	// SIGINT first, as a terminal's Ctrl-C: load_tester then writes what it
	// measured, marked interrupted. SIGKILL after WaitDelay.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = c.Grace
	if cmd.WaitDelay <= 0 {
		cmd.WaitDelay = DefaultGrace
	}
	err := serverproc.StartOn(cmd, c.CPUs)
	if err == nil {
		if c.OnStart != nil {
			c.OnStart(cmd.Process.Pid)
		}
		err = cmd.Wait()
	}
	// The context's verdict wins: a tool stopped by it exits non-zero, and
	// one that finished as it ended ran no full course either.
	switch {
	case ctx.Err() != nil:
		return ErrInterrupted
	case runCtx.Err() != nil:
		return &TimeoutError{Tool: c.name(), Limit: c.Timeout}
	case err == nil:
		return nil
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return &ExitError{Tool: c.name(), Status: exitErr.ExitCode(), LastLine: last.String(), Err: exitErr}
	}
	return &RunError{Tool: c.name(), LastLine: last.String(), Err: err}
}

// Spec is one load_tester run.
type Spec struct {
	// Command is load_tester: its flags in Args, without --json, which Run
	// adds (Argv); Name defaults to LoadTester.
	Command
	// JSONPath is its --json file: removed before the run (a stale result
	// is never read as this run's), read back after it.
	JSONPath string
}

// Argv is load_tester's command line without the binary: Args, then --json.
func (s Spec) Argv() []string {
	return append(slices.Clone(s.Args), "--json", s.JSONPath)
}

// Run runs load_tester to completion and reads its result back. It returns
//
//   - the result and nil: it exited 0;
//   - the result and an *ExitError: it exited non-zero after writing its
//     result (nil when it wrote none);
//   - the result it wrote before it stopped (nil when none), marked
//     interrupted, and ErrInterrupted: ctx ended first;
//   - nil and a *TimeoutError or *RunError;
//   - nil and an error saying it wrote no result (after exiting 0) or one
//     that cannot be read (result.ReadResult's).
func Run(ctx context.Context, s Spec) (*result.Result, error) {
	if s.Name == "" {
		s.Name = LoadTester
	}
	_ = os.Remove(s.JSONPath)
	c := s.Command
	c.Args = s.Argv()
	err := Exec(ctx, c)
	var exit *ExitError
	switch {
	case errors.Is(err, ErrInterrupted):
		res, _ := result.ReadResult(s.JSONPath)
		return res, err
	case err != nil && !errors.As(err, &exit):
		return nil, err
	}
	res, err := result.ReadResult(s.JSONPath)
	var notRead *fs.PathError
	switch {
	case err != nil && errors.As(err, &notRead) && exit != nil:
		return nil, exit
	case err != nil && errors.As(err, &notRead):
		return nil, fmt.Errorf("%s wrote no result: %w", s.Name, notRead)
	case err != nil:
		return nil, err
	case exit != nil:
		return res, exit
	}
	return res, nil
}

// lastLine keeps the last non-empty line written to it, as Line gives it,
// without keeping the output: the first maxLine bytes of each line, after
// its leading white space, and whether more than white space followed.
type lastLine struct {
	mu        sync.Mutex
	cur, last line
}

// line is the kept start of one line of output.
type line struct {
	text []byte // up to maxLine bytes, leading white space skipped
	more bool   // a byte other than white space came after text was full
}

// maxLine is where a last line is cut (and "..." added).
const maxLine = 200

func (l *lastLine) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range p {
		switch {
		case b == '\n':
			if len(l.cur.text) > 0 { // it starts with a byte other than white space
				l.last = l.cur
			}
			l.cur = line{text: l.cur.text[:0:0]}
		case len(l.cur.text) == 0 && isSpace(b):
		case len(l.cur.text) < maxLine:
			l.cur.text = append(l.cur.text, b)
		case !isSpace(b):
			l.cur.more = true
		}
	}
	return len(p), nil
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\v' || b == '\f' }

// String is ": <the last non-empty line>" (cut at maxLine bytes, then
// "...") or "" when nothing but white space was written.
func (l *lastLine) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	last := l.last
	if len(l.cur.text) > 0 {
		last = l.cur // a last line without its newline
	}
	if last.more {
		return ": " + string(last.text) + "..."
	}
	text := strings.TrimRight(string(last.text), " \t\r\v\f")
	if text == "" {
		return ""
	}
	return ": " + text
}
