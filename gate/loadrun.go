package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"weaseldb/internal/serverproc"
	"weaseldb/loadtester"
)

// LoadSpec is one load_tester invocation.
type LoadSpec struct {
	Binary      string
	Target      Target
	Duration    time.Duration
	Warmup      time.Duration
	Concurrency int
	Threads     int
	CPUs        []int // run load_tester on these CPUs only (empty: unpinned)
	Path        string
	Extra       []string // more flags, passed as given
	JSONPath    string
	// Scenario and Phase say what the run is for (the result's file name,
	// and the tests' synthetic lab); neither reaches load_tester.
	Scenario string
	Phase    string // PhaseSetup, PhaseWarmup or PhaseMeasured
}

// Phases of a load run.
const (
	PhaseSetup    = "setup"    // a scenario's setup load, unmeasured
	PhaseWarmup   = "warm-up"  // the discarded run of a freshly started server
	PhaseMeasured = "measured" // a sample
)

// Args is the load_tester command line (without the binary).
func (l LoadSpec) Args() []string {
	args := append([]string{}, l.Target.LoadArgs()...)
	args = append(args,
		"--duration", seconds(l.Duration),
		"--warmup", seconds(l.Warmup),
		"--concurrency", strconv.Itoa(l.Concurrency),
		"--network-threads", strconv.Itoa(l.Threads),
		"--path", l.Path,
		"--quiet",
		"--json", l.JSONPath,
	)
	return append(args, l.Extra...)
}

// seconds formats a duration as load_tester's seconds argument ("1.5s").
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// LoadExitError is a load_tester run that wrote its result but exited
// non-zero: load_tester's own verdict on the run (errors, unfinished or
// dropped requests over --max-errors). The result still says what happened.
type LoadExitError struct {
	Status   int
	LastLine string // ": <its last line>" or ""
}

func (e *LoadExitError) Error() string {
	return fmt.Sprintf("load_tester exited with status %d%s", e.Status, e.LastLine)
}

// RunLoad runs load_tester once and returns its result. An error is one
// line (load_tester's last line of output). When load_tester exited
// non-zero but wrote its result, both come back, the error a
// *LoadExitError, so the caller can say what was wrong with the run.
func RunLoad(ctx context.Context, l LoadSpec) (loadtester.Result, error) {
	_ = os.Remove(l.JSONPath)
	// Generous: start-up, connect timeout, the drain and the JSON write on a loaded machine.
	limit := l.Warmup + l.Duration + 30*time.Second
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, l.Binary, l.Args()...)
	var out bytes.Buffer // --quiet: a summary of a few dozen lines at most
	cmd.Stdout = &out
	cmd.Stderr = &out
	cmd.WaitDelay = 2 * time.Second
	err := serverproc.StartOn(cmd, l.CPUs)
	if err == nil {
		err = cmd.Wait()
	}
	switch {
	case parent.Err() != nil:
		return loadtester.Result{}, errors.New("interrupted")
	case ctx.Err() != nil:
		return loadtester.Result{}, fmt.Errorf("load_tester did not finish within %v", limit)
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return loadtester.Result{}, fmt.Errorf("load_tester: %v%s", err, lastLine(out.String()))
	}
	data, readErr := os.ReadFile(l.JSONPath)
	if readErr != nil {
		if err != nil {
			return loadtester.Result{}, fmt.Errorf("load_tester: %v%s", err, lastLine(out.String()))
		}
		return loadtester.Result{}, fmt.Errorf("load_tester wrote no result: %w", readErr)
	}
	// Not loadtester.ReadResult: the gate reads no histogram, so decoding one
	// could only add a way for a run to fail.
	var r loadtester.Result
	if err := json.Unmarshal(data, &r); err != nil {
		return loadtester.Result{}, fmt.Errorf("reading %s: %w", filepath.Base(l.JSONPath), err)
	}
	if exitErr != nil {
		return r, &LoadExitError{Status: exitErr.ExitCode(), LastLine: lastLine(out.String())}
	}
	if r.RequestsPerSec <= 0 && r.Errors == 0 {
		return r, errors.New("load_tester measured no requests")
	}
	return r, nil
}

// lastLine is ": <the last non-empty line of out>" or "".
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return ""
	}
	if len(last) > 200 {
		last = last[:200] + "..."
	}
	return ": " + last
}
