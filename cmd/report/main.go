// Command report writes the threading performance report from the artifacts
// of one run, and provides the small measurement helpers the reproduction
// script needs (cpu-sample, manifest). See docs/report.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"weaseldb/internal/benchmain"
	"weaseldb/reports"
)

const usage = `usage:
  report --run DIR --out reports/threading_performance_report.md [--images img]
  report cpu-sample --pid PID --seconds S [--delay S] [--phase NAME] --json FILE
  report manifest --run DIR --config FILE --steps FILE [--duration S] [--quick]
                  [--server-exit N] [--nofile LIMIT] [--server-gomaxprocs N]
                  [--started RFC3339] [--out FILE]
  report config --in FILE --out FILE [--tcp-address ADDR] [--tcp-port N|auto]
  report wait-strategies --run DIR [--bin build] [--duration 5] [--warmup 1] [--idle 3]
                  [--cores shared,dedicated] [--strategies LIST] [--plan] [--allowed-cpus LIST]
`

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		// --help printed the usage: not a failure.
	default:
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "cpu-sample":
			return cpuSample(args[1:], stdout, stderr)
		case "manifest":
			return manifest(args[1:], stdout, stderr)
		case "config":
			return adjustConfig(args[1:], stdout, stderr)
		case "wait-strategies":
			return waitStrategies(args[1:], stdout, stderr)
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

func generate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", stderr)
	runDir := fs.String("run", "", "run directory holding the artifacts (manifest.json, load.json, ...)")
	out := fs.String("out", "reports/threading_performance_report.md", "markdown report to write")
	images := fs.String("images", "img", "image directory, relative to the report's directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *runDir == "" || fs.NArg() > 0 {
		fs.Usage()
		return errors.New("--run DIR is required and no positional arguments are taken")
	}
	r, err := reports.LoadRun(*runDir)
	if err != nil {
		return err
	}
	cmd := fmt.Sprintf("report --run %s --out %s", *runDir, *out)
	res, err := reports.Generate(r, reports.Options{OutPath: *out, ImageDir: *images, Command: cmd})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report: wrote %s (%d figures, %d plots)\n", res.Markdown, len(res.Figures), len(res.Images))
	return nil
}

func cpuSample(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report cpu-sample", stderr)
	pid := fs.Int("pid", 0, "process to measure")
	seconds := fs.Float64("seconds", 5, "length of the measured window")
	delay := fs.Float64("delay", 0, "seconds to wait before the window opens")
	phase := fs.String("phase", "", "label recorded in the JSON (loaded, idle)")
	jsonOut := fs.String("json", "", "file to write the sample to")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *pid <= 0 || *jsonOut == "" || *seconds <= 0 || *delay < 0 {
		fs.Usage()
		return errors.New("cpu-sample needs --pid > 0, --seconds > 0, --delay >= 0 and --json FILE")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := reports.SampleCPU(ctx, reports.SampleOptions{Pid: *pid, Phase: *phase,
		Delay: seconds2d(*delay), Window: seconds2d(*seconds)})
	if err != nil {
		return err
	}
	if err := benchmain.WriteJSON(*jsonOut, s); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report: pid %d %s: %.3f cores over %.1f s (%.2f s CPU)\n", s.Pid, s.Phase, s.CoreFraction, s.WindowS, s.CPUS)
	return nil
}

func seconds2d(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func manifest(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report manifest", stderr)
	runDir := fs.String("run", "", "run directory")
	config := fs.String("config", "", "the TOML config the server read")
	configSource := fs.String("config-source", "", "the config it was adjusted from, if any")
	stepsFile := fs.String("steps", "", "the script's step log (name, exit, wall s, command; tab-separated)")
	duration := fs.Float64("duration", 0, "requested load duration in seconds")
	quick := fs.Bool("quick", false, "bench_pipeline ran with --quick")
	serverExit := fs.Int("server-exit", -1, "the server's exit status after SIGTERM (-1: unknown)")
	nofile := fs.String("nofile", "", "the open-files limit the run had")
	serverProcs := fs.String("server-gomaxprocs", "", "GOMAXPROCS the server reported at start")
	started := fs.String("started", "", "when the run started (RFC 3339)")
	out := fs.String("out", "", "manifest to write (default RUN/manifest.json)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *runDir == "" || *config == "" || *stepsFile == "" {
		fs.Usage()
		return errors.New("manifest needs --run, --config and --steps")
	}
	cfg, err := reports.ReadConfigRecord(*config)
	if err != nil {
		return err
	}
	cfg.Source = *configSource
	steps, err := reports.ReadSteps(*stepsFile)
	if err != nil {
		return err
	}
	m := reports.Manifest{Version: 1, StartedAt: *started, FinishedAt: time.Now().UTC().Format(time.RFC3339),
		DurationS: *duration, Quick: *quick, Machine: reports.DescribeMachine(), Config: cfg, Steps: steps, NofileLimit: *nofile,
		ServerGOMAXPROCS: *serverProcs}
	if *serverExit >= 0 {
		m.ServerExitCode = serverExit
	}
	if *out == "" {
		*out = filepath.Join(*runDir, reports.ManifestFile)
	}
	if err := benchmain.WriteJSON(*out, m); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report: wrote %s\n", *out)
	return nil
}

func adjustConfig(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report config", stderr)
	in := fs.String("in", "", "TOML config to copy")
	out := fs.String("out", "", "where to write the adjusted copy")
	addr := fs.String("tcp-address", "", "address for every TCP interface (empty: keep)")
	portFlag := fs.String("tcp-port", "0", "port for every TCP interface: N, 0 to keep the config's, or auto for a free loopback port")
	if err := fs.Parse(args); err != nil {
		return err
	}
	port, err := parsePort(*portFlag)
	if *in == "" || *out == "" || err != nil {
		fs.Usage()
		return fmt.Errorf("config needs --in and --out, and --tcp-port auto or 0..65535 (%v)", err)
	}
	if err := reports.AdjustConfig(*in, *out, reports.ConfigAdjustment{TCPAddress: *addr, TCPPort: port}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report: wrote %s\n", *out)
	return nil
}

// parsePort reads --tcp-port. "auto" asks the kernel for a free loopback port,
// so two runs at once do not collide on the config's fixed port (the load
// itself uses the unix socket).
func parsePort(s string) (int, error) {
	if s == "auto" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("find a free port: %w", err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port, nil
	}
	port, err := strconv.Atoi(s)
	if err != nil || port < 0 || port > 65535 {
		return 0, fmt.Errorf("port %q", s)
	}
	return port, nil
}
