// Command load_tester drives HTTP/1.1 or HTTP/2 load (plaintext or TLS) at a server and reports
// throughput, latency percentiles, errors by kind and its own CPU use; its
// merge subcommand adds the results of several instances. See
// docs/load_tester.md and docs/distributed.md. This is the command line
// (flags.go, steps.go, merge.go): the engine and its output writers are
// package loadtester.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"weaseldb/loadtester"
	"weaseldb/loadtester/result"
	"weaseldb/runview"
)

// Exit statuses.
const (
	exitOK          = 0
	exitFailure     = 1   // target down, errors above --max-errors, an output not written
	exitUsage       = 2   // bad flags, --start-at past, too few descriptors
	exitThreshold   = 99  // a --threshold crossed (as k6 exits); 1 and 130 come first
	exitInterrupted = 130 // SIGINT/SIGTERM: what was measured is still printed and written
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command: flags, signals, the run, its outputs and summary; it
// returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "merge" {
		return runMerge(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "html" {
		return runHTML(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "compare" {
		return runCompare(args[1:], stdout, stderr)
	}
	o, help, err := parseArgs(args)
	if help {
		usage(stdout)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "load_tester: %s (see --help)\n", oneLine(err))
		return exitUsage
	}
	o.cfg.Command = commandLine(args) // the result names what ran it
	if _, why := loadtester.ResolveIOBackend(o.cfg.IOBackend); why != "" {
		fmt.Fprintf(stderr, "load_tester: --io-backend io_uring: running on epoll: %s\n", oneLine(errors.New(why)))
	}
	if err := checkOutputs(o); err != nil { // before any load, as --hdr-log
		fmt.Fprintf(stderr, "load_tester: %s\n", oneLine(err))
		return exitFailure
	}
	metrics, err := startMetrics(&o, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "load_tester: %s\n", oneLine(err))
		return exitUsage
	}
	defer stopMetrics(metrics, o.metricsLinger, stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); stop() }() // a second ^C kills at once
	if o.rateSteps != nil || o.findRate {
		sr, err := runSteps(ctx, o, stdout)
		if sr != nil && o.html != "" {
			writeRunPage(o.html, args, stderr, func() (*runview.Page, error) { return runview.StepsPage(sr, nil) })
		}
		if err != nil {
			fmt.Fprintf(stderr, "load_tester: %s\n", oneLine(err))
			return exitStatus(err)
		}
		if s := sr.Search; s != nil && s.Rate == 0 {
			fmt.Fprintf(stderr, "load_tester: find-rate: %s\n", s.Certainty)
		}
		if !sr.ThresholdsPass() && !sr.Interrupted {
			fmt.Fprintln(stderr, "load_tester: thresholds crossed in a step (table above)")
		}
		return stepsStatus(sr)
	}
	cfg, notes := o.cfg, io.Writer(nil)
	if !o.quiet {
		cfg.Progress, notes = stdout, stdout
	}
	res, err := loadtester.RunWithOutputs(ctx, cfg, o.outputs(), notes)
	if res != nil {
		res.PrintSummary(stdout)
		if o.html != "" {
			writeRunPage(o.html, args, stderr, func() (*runview.Page, error) { return runview.ResultPage(res, nil) })
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "load_tester: %s\n", oneLine(err))
		return exitStatus(err)
	}
	outcome, verdict, reason := result.Verdict(res, o.cfg.MaxErrors)
	if verdict != "" {
		fmt.Fprintf(stdout, "  verdict       %s\n", verdict)
	}
	if reason != "" {
		fmt.Fprintf(stderr, "load_tester: %s\n", reason)
	}
	return thresholdStatus(outcomeStatus(outcome), res, stderr, "load_tester")
}

// thresholdStatus is status, or 99 when it is 0 and a threshold of res was
// crossed (named in one line on stderr).
func thresholdStatus(status int, res *result.Result, stderr io.Writer, prog string) int {
	crossed := res.CrossedThresholds()
	if crossed == "" || res.Interrupted {
		return status
	}
	fmt.Fprintf(stderr, "%s: thresholds crossed: %s\n", prog, crossed)
	if status == exitOK {
		return exitThreshold
	}
	return status
}

// exitStatus is the exit status of a run that ended in err.
func exitStatus(err error) int {
	switch {
	case errors.Is(err, loadtester.ErrInterrupted): // ^C before the window opened: as ^C during the run
		return exitInterrupted
	case errors.Is(err, loadtester.ErrStartAtPast), errors.Is(err, loadtester.ErrTooFewDescriptors):
		return exitUsage // the command cannot run as given
	}
	return exitFailure
}

// outcomeStatus is the exit status of a finished run's verdict.
func outcomeStatus(o result.Outcome) int {
	switch o {
	case result.OutcomeFail:
		return exitFailure
	case result.OutcomeInterrupted:
		return exitInterrupted
	}
	return exitOK
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }
