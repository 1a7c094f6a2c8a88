// Package bench runs the report's benchmarks and records what each run
// measured in the run directory (the schemas are package artifacts'; package
// reports renders them): weaseldb under load_tester with its CPU sampled and
// its threads read back, bench_pipeline, bench_cpu_work. It holds the logic
// of `report setups` (setups.json), `report wait-strategies`
// (wait_strategies.json) and `report manifest` (the machine, the config,
// the script's steps); cmd/report keeps the flags. The runs are planned by
// package plan (which the report's checks share: bench imports nothing of
// package reports), servers are started and stopped through internal/serverproc,
// load_tester and the other tools run through internal/loadrun, CPU is
// sampled with SampleCPU (the tree's one CPU sampler, on internal/procstat),
// and configs are written with the TOML encoder.
package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"weaseldb/internal/affinity"
	"weaseldb/internal/jsonfile"
	"weaseldb/internal/loadrun"
	"weaseldb/internal/procstat"
	"weaseldb/loadtester/result"
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

// ErrInterrupted is returned by a run whose context was cancelled (SIGINT or
// SIGTERM to the command): every tool it ran was stopped, every server it
// started was stopped, and what was measured before is kept. It is
// loadrun's: a tool stopped by the interrupt says so in the same words.
var ErrInterrupted = loadrun.ErrInterrupted

// Tools runs the binaries of one directory and keeps their output in the run
// directory. It is used from one goroutine at a time.
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

func (t *Tools) ctx() context.Context {
	if t.Ctx == nil {
		return context.Background()
	}
	return t.Ctx
}

// interrupted tells whether the run was interrupted: no step may start.
func (t *Tools) interrupted() bool { return t.ctx().Err() != nil }

// Path is the file name in the run directory.
func (t *Tools) Path(name string) string { return filepath.Join(t.RunDir, name) }

// Command runs one tool of Bin to completion, pinned to cpus when any are
// given, its output in RUN/<name>.log; it is stopped after timeout.
func (t *Tools) Command(timeout time.Duration, name string, cpus []int, tool string, args ...string) error {
	return t.command(timeout, name, cpus, nil, tool, args...)
}

// command is Command with onStart, when set, told the tool's pid once it
// started (on the calling goroutine, before it waits for the tool).
func (t *Tools) command(timeout time.Duration, name string, cpus []int, onStart func(pid int), tool string, args ...string) error {
	c, logFile, err := t.toolCommand(timeout, name, cpus, onStart, tool, args)
	if err != nil {
		return err
	}
	defer logFile.Close()
	t.Logf("%s: %s %s", name, c.Binary, strings.Join(c.Args, " "))
	if err := loadrun.Exec(t.ctx(), c); err != nil {
		return toolError(err, tool, name, timeout)
	}
	return nil
}

// load runs load_tester (internal/loadrun) like command, its result in
// RUN/<name>.json, and reads that result back.
func (t *Tools) load(timeout time.Duration, name string, cpus []int, onStart func(pid int), args []string) (*result.Result, error) {
	c, logFile, err := t.toolCommand(timeout, name, cpus, onStart, "load_tester", args)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	s := loadrun.Spec{Command: c, JSONPath: t.Path(name + ".json")}
	t.Logf("%s: %s %s", name, c.Binary, strings.Join(s.Argv(), " "))
	res, err := loadrun.Run(t.ctx(), s)
	if err != nil {
		return nil, toolError(err, "load_tester", name, timeout)
	}
	return res, nil
}

// toolCommand is the loadrun command of one tool of Bin, its output in
// RUN/<name>.log (the caller closes it).
func (t *Tools) toolCommand(timeout time.Duration, name string, cpus []int, onStart func(pid int), tool string, args []string) (loadrun.Command, *os.File, error) {
	logFile, err := os.Create(t.Path(name + ".log"))
	if err != nil {
		return loadrun.Command{}, nil, err
	}
	return loadrun.Command{Binary: filepath.Join(t.Bin, tool), Args: args, CPUs: cpus, Timeout: timeout,
		Output: logFile, OnStart: onStart}, logFile, nil
}

// toolError words a failed run of tool for the run's records: the tool,
// what happened, and where its log is. An error reading a result is
// returned as it is: it names the file.
func toolError(err error, tool, name string, timeout time.Duration) error {
	var timedOut *loadrun.TimeoutError
	var exit *loadrun.ExitError
	var failed *loadrun.RunError
	switch {
	case errors.Is(err, loadrun.ErrInterrupted):
		return fmt.Errorf("%s: %w (log %s.log)", tool, ErrInterrupted, name)
	case errors.As(err, &timedOut):
		return fmt.Errorf("%s: ran past %v (log %s.log)", tool, timeout, name)
	case errors.As(err, &exit):
		return fmt.Errorf("%s: %w (log %s.log)", tool, exit.Err, name)
	case errors.As(err, &failed):
		return fmt.Errorf("%s: %w (log %s.log)", tool, failed.Err, name)
	}
	return err
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
	return jsonfile.WriteFile(t.Path(name), v)
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

// machineTopology is where the allowed CPUs sit: read from sysfs for this
// process's own CPUs; flat for a simulated set (a plan for a machine this
// is not).
func machineTopology(simulated string, allowed []int) procstat.Topology {
	if simulated != "" {
		return procstat.FlatTopology(allowed, "a simulated CPU set: no topology")
	}
	topo := procstat.ReadTopology(procstat.SysRoot, allowed)
	topo.NetIRQs = procstat.NetworkIRQs(procstat.ProcRoot, procstat.SysRoot)
	return topo
}

// allowedCPUs is the CPUs the runs are planned from: simulated (a CPU list
// given on the command line, for a plan) or this process's allowed set.
func allowedCPUs(simulated string) ([]int, error) {
	if simulated != "" {
		return affinity.ParseCPUList(simulated)
	}
	return affinity.AllowedCPUs()
}
