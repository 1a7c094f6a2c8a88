// Command report writes the threading performance report from the artifacts
// of one run, and runs the measurements the reproduction script needs
// (setups, wait-strategies, manifest). Flags and wiring only: the logic is
// in reports (the generator, a pure renderer of artifacts) and bench (the
// runs, the sampling and the machine's description). See
// docs/report.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"weaseldb/bench"
	"weaseldb/internal/cliflag"
	"weaseldb/internal/serverproc"
	"weaseldb/reports"
)

const usage = `usage:
  report --run DIR --out reports/threading_performance_report.md [--images img] [--html]
  report setups --run DIR --config FILE [--bin build] [--rounds 5] [--duration 4] [--warmup 1]
                [--idle 5] [--concurrency 2000] [--requests-per-conn 500] [--connect-threads 2]
                [--network-threads 10] [--work-iterations 4000] [--work-target 740ns]
                [--sustain 0] [--sustain-window 10] [--stage-waits] [--require-dedicated]
                [--plan] [--allowed-cpus LIST]
  report wait-strategies --run DIR [--bin build] [--duration 5] [--warmup 1] [--idle 3]
                [--cores shared,dedicated] [--strategies LIST] [--plan] [--allowed-cpus LIST]
  report manifest --run DIR --config FILE --steps FILE [--config-source FILE] [--duration S]
                [--quick] [--nofile LIMIT] [--started RFC3339] [--out FILE]
                [--virtual tcg|kvm --host-cpus N --host-cpu-model NAME]
  report check --run DIR [--cpus N] [--require-dedicated] [--out DIR/checks.json]
  report progress [--total SECONDS] < LINES   (a step's lines as one line in place on a terminal)

A run whose manifest says its CPUs were virtual (scripts/manycore.sh) is
rendered as a functional check, never as performance: report --run DIR
writes DIR/manycore_report.md unless --out names another file.
`

func main() {
	// SIGINT or SIGTERM cancels ctx: a measuring subcommand stops its tools
	// and the servers it started, keeps what it measured, and exits 130.
	ctx, stop := serverproc.SupervisorContext()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		// --help printed the usage: not a failure.
	case errors.Is(err, bench.ErrInterrupted):
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(130)
	case errors.Is(err, cliflag.ErrUsage):
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "setups":
			return setups(ctx, args[1:], stdout, stderr)
		case "wait-strategies":
			return waitStrategies(ctx, args[1:], stdout, stderr)
		case "manifest":
			return manifest(args[1:], stdout, stderr)
		case "check":
			return check(args[1:], stdout, stderr)
		case "progress":
			return followCmd(args[1:], os.Stdin, stdout, stderr)
		}
	}
	return generate(args, stdout, stderr)
}

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	return fs
}

// commonFlags registers the flags every measuring subcommand shares.
func commonFlags(fs *flag.FlagSet, c *bench.Common, tools string, idleS float64, idleWhen string) {
	fs.StringVar(&c.Bin, "bin", "build", "directory holding "+tools)
	fs.StringVar(&c.RunDir, "run", "", "run directory: the results and every raw artifact go here")
	fs.Float64Var(&c.WarmupS, "warmup", 1, "seconds of load before the measured window, excluded from every figure")
	fs.Float64Var(&c.IdleS, "idle", idleS, "seconds of idle CPU measured "+idleWhen+" (at least 1)")
	fs.IntVar(&c.IdleConns, "idle-conns", 100, "keep-alive connections held open while idle")
	fs.DurationVar(&c.ReadyTimeout, "ready-timeout", 15*time.Second, "how long each server may take to say it is ready")
	fs.Float64Var(&c.DrainS, "drain", 0, "load_tester --drain in seconds: how long requests in flight after the window may still finish (0: its default; more on slow or emulated machines)")
	fs.Float64Var(&c.RequestTimeoutS, "request-timeout", 0, "load_tester --timeout in seconds: how long a request may wait for its response (0: its default; more on slow or emulated machines)")
	fs.StringVar(&c.AllowedCPUs, "allowed-cpus", "", "plan against this CPU list instead of sched_getaffinity (implies --plan)")
	fs.BoolVar(&c.Plan, "plan", false, "print the plan and run nothing")
}

// parseNoArgs parses flags that take no positional arguments.
func parseNoArgs(fs *flag.FlagSet, args []string) error {
	if err := cliflag.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

func generate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", stderr)
	runDir := fs.String("run", "", "run directory holding the artifacts (manifest.json, setups.json or load.json, ...)")
	out := fs.String("out", "reports/threading_performance_report.md", "markdown report to write")
	images := fs.String("images", "img", "image directory, relative to the report's directory")
	html := fs.Bool("html", false, "also write the report's HTML twin beside it (report.md: report.html), its plots inline")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if *runDir == "" {
		fs.Usage()
		return errors.New("--run DIR is required")
	}
	outSet := false
	fs.Visit(func(f *flag.Flag) { outSet = outSet || f.Name == "out" })
	line, err := reports.Render(reports.RenderOptions{RunDir: *runDir, Out: *out, OutSet: outSet, Images: *images, HTML: *html})
	if line != "" {
		fmt.Fprintln(stdout, line)
	}
	return err
}
