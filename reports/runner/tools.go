// Package runner runs the harness's binaries for the threading report and
// records what each run measured in the run directory: weaseldb under
// load_tester with its CPU sampled, bench_pipeline, bench_cpu_work. It holds
// the logic of `report wait-strategies` (the wait-strategy comparison,
// wait_strategies.json); cmd/report keeps the flags. Servers are started and
// stopped through internal/serverproc, CPU is sampled with
// reports.SampleCPU, and configs are written with the TOML encoder.
package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"weaseldb/internal/affinity"
	"weaseldb/internal/benchmain"
	"weaseldb/internal/serverproc"
)

// Common are the settings every measuring subcommand shares (`report
// setups`, `report wait-strategies`); their flags fill them.
type Common struct {
	Bin, RunDir string  // the binaries' directory; where every result goes
	WarmupS     float64 // load before each measured window, excluded
	IdleS       float64 // idle CPU window after the load
	IdleConns   int     // keep-alive connections held open while idle
	// DrainS is load_tester's --drain: how long requests in flight after
	// the window may still finish before they count as unfinished (0:
	// load_tester's default). Slow (emulated) machines need more.
	DrainS float64
	// RequestTimeoutS is load_tester's --timeout: how long a request may
	// wait for its response before it fails (0: load_tester's default).
	RequestTimeoutS float64
	ReadyTimeout    time.Duration
	AllowedCPUs     string // a simulated allowed set: plan only
	Plan            bool   // print the plan, run nothing
}

// Tools runs the binaries of one directory and keeps their output in the run
// directory. It is used from one goroutine at a time.
// ErrInterrupted is returned by a run whose context was cancelled (SIGINT or
// SIGTERM to the command): every tool it ran was stopped, every server it
// started was stopped, and what was measured before is kept.
var ErrInterrupted = errors.New("interrupted")

type Tools struct {
	// Ctx, cancelled on an interrupt, stops every command the Tools run;
	// nil is never cancelled.
	Ctx    context.Context
	Bin    string    // directory holding weaseldb, load_tester, bench_pipeline, bench_cpu_work
	RunDir string    // where every log and raw result goes
	Log    io.Writer // progress lines
	Prefix string    // starts every progress line, e.g. "wait-strategies"
}

// Logf prints one progress line.
func (t *Tools) Logf(format string, args ...any) {
	fmt.Fprintf(t.Log, "=== "+t.Prefix+": "+format+"\n", args...)
}

// Path is the file name in the run directory.
func (t *Tools) ctx() context.Context {
	if t.Ctx == nil {
		return context.Background()
	}
	return t.Ctx
}

// interrupted tells whether the run was interrupted: no step may start.
func (t *Tools) interrupted() bool { return t.ctx().Err() != nil }

func (t *Tools) Path(name string) string { return filepath.Join(t.RunDir, name) }

// Command runs one tool of Bin to completion, pinned to cpus when any are
// given, its output in RUN/<name>.log; it is killed after timeout.
func (t *Tools) Command(timeout time.Duration, name string, cpus []int, tool string, args ...string) error {
	return t.command(timeout, name, cpus, nil, tool, args...)
}

// command is Command with onStart, when set, told the tool's pid once it
// started (on the calling goroutine, before it waits for the tool).
func (t *Tools) command(timeout time.Duration, name string, cpus []int, onStart func(pid int), tool string, args ...string) error {
	path := filepath.Join(t.Bin, tool)
	logFile, err := os.Create(t.Path(name + ".log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	ctx, cancel := context.WithTimeout(t.ctx(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// SIGINT first, as a terminal's Ctrl-C would: load_tester then writes
	// what it measured, marked interrupted. SIGKILL after WaitDelay.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	t.Logf("%s: %s %s", name, path, strings.Join(args, " "))
	err = serverproc.StartOn(cmd, cpus)
	if err == nil {
		if onStart != nil {
			onStart(cmd.Process.Pid)
		}
		err = cmd.Wait()
	}
	if err != nil {
		switch {
		case t.interrupted():
			return fmt.Errorf("%s: %w (log %s.log)", tool, ErrInterrupted, name)
		case ctx.Err() != nil:
			return fmt.Errorf("%s: ran past %v (log %s.log)", tool, timeout, name)
		}
		return fmt.Errorf("%s: %w (log %s.log)", tool, err, name)
	}
	return nil
}

// ReadJSON decodes a file of the run directory.
func (t *Tools) ReadJSON(name string, dst any) error {
	data, err := os.ReadFile(t.Path(name))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, dst); err != nil {
		return fmt.Errorf("decode %s: %w", name, err)
	}
	return nil
}

// WriteJSON writes v, indented, to a file of the run directory.
func (t *Tools) WriteJSON(name string, v any) error {
	return benchmain.WriteJSON(t.Path(name), v)
}

// slowMachineArgs are load_tester's --drain and --timeout flags, when asked
// for: a slow (emulated) machine needs more than their defaults.
func (c *Common) slowMachineArgs() []string {
	var args []string
	if c.DrainS > 0 {
		args = append(args, "--drain", fmt.Sprint(c.DrainS))
	}
	if c.RequestTimeoutS > 0 {
		args = append(args, "--timeout", fmt.Sprint(c.RequestTimeoutS))
	}
	return args
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func ptr(v float64) *float64 { return &v }

// allowedCPUs is the CPUs the runs are planned from: simulated (a CPU list
// given on the command line, for a plan) or this process's allowed set.
func allowedCPUs(simulated string) ([]int, error) {
	if simulated != "" {
		return affinity.ParseCPUList(simulated)
	}
	return affinity.AllowedCPUs()
}
