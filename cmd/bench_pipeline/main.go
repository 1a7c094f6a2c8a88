// Command bench_pipeline measures the ThreadPipeline (server/pipeline) against
// Go channels: the seed's three benchmark families (one stage with spin work;
// batch sizes with and without spin work; the wait strategies across two
// stages), CPU per item from the kernel's accounting, and the CPU each wait
// strategy uses while the pipeline sits idle; and, on request, the latency
// family: each wait strategy's hand-off latency, one way and round trip, at a
// low rate and at saturation, on dedicated and on shared cores.
//
//	bench_pipeline --quick
//	bench_pipeline --json results.json
//	bench_pipeline --families latency --cpus auto --json latency.json
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"weaseldb/internal/benchmain"
	"weaseldb/internal/cliflag"
	"weaseldb/internal/jsonfile"
	"weaseldb/pipebench"
)

// options are the flags: the suite they describe, and what to do with it.
type options struct {
	suite    pipebench.Suite
	jsonPath string
	// --print-plan: print where --cpus auto puts each thread, run nothing.
	printPlan bool
}

func main() {
	os.Exit(benchmain.Run("bench_pipeline", os.Args[1:], os.Stdout, os.Stderr, parseArgs, run))
}

func parseArgs(args []string, stderr io.Writer) (options, error) {
	var o options
	var families, cpus string
	su := &o.suite
	fs := flag.NewFlagSet("bench_pipeline", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&su.Quick, "quick", false, "fewer runs and a 0.5 s idle measurement: the whole run takes well under 30 s")
	fs.IntVar(&su.Runs, "runs", 0, "timed runs per case (default 10, or 3 with --quick)")
	fs.DurationVar(&su.Idle, "idle", 0, "how long each strategy's pipeline sits idle while its CPU is measured (default 2s, or 500ms with --quick; 0s with --families skipping wait_strategy)")
	fs.StringVar(&families, "families", strings.Join(pipebench.DefaultFamilies(), ","), "comma-separated families to run, of "+strings.Join(pipebench.KnownFamilies(), ", ")+" (latency runs only when named)")
	fs.IntVar(&su.Latency.Samples, "latency-samples", pipebench.DefaultLatencySamples, fmt.Sprintf("latency family: items (or round trips) per low-rate case; saturation cases take %dx as many", pipebench.SaturationFactor))
	fs.DurationVar(&su.Latency.Interval, "latency-interval", pipebench.DefaultLatencyInterval, "latency family: the low rate's gap between items (keep it above the pipeline's 50µs IdleSpin, so every parking strategy parks)")
	fs.DurationVar(&su.Latency.MaxDuration, "latency-max", pipebench.DefaultLatencyMaxDuration, "latency family: a case ends after this long even with samples to go (marked truncated)")
	fs.StringVar(&o.jsonPath, "json", "", "write the results as JSON to this file")
	fs.BoolVar(&o.printPlan, "print-plan", false, "with --cpus auto: print where each hot thread goes (cpu=N core=N node=N idle=...: its physical core, NUMA node and the hyper-threads left idle), what the machine could not give, and the network interrupts that may land on those CPUs; run nothing")
	fs.StringVar(&cpus, "cpus", "", "pin threads: `P,S0,S1` = the producer's CPU, then stage 0's and stage 1's (checked against the allowed set; a CPU may repeat); auto = a CPU per hot thread by internal/placement (PlaceHot: from 2 CPUs for the latency family). The latency family runs each case on these dedicated cores and unpinned")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: bench_pipeline [--quick] [--json FILE] [flags]\n\n")
		fmt.Fprintf(stderr, "Runs the ThreadPipeline benchmark families and the same cases over Go channels\n(one item per send, and slices of the batch size), prints a table, and measures\neach wait strategy's idle CPU.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := cliflag.Parse(fs, args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if su.Families, err = pipebench.ParseFamilies(families); err != nil {
		return o, err
	}
	if o.printPlan && cpus != "auto" {
		return o, errors.New("--print-plan: only with --cpus auto")
	}
	if su.CPUs, err = pipebench.ChooseCPUs(cpus, su.Families); err != nil {
		return o, err
	}
	if su.Runs < 0 || su.Idle < 0 {
		return o, errors.New("--runs and --idle must not be negative")
	}
	if su.Latency.Samples < 1 || su.Latency.Interval < 0 || su.Latency.MaxDuration <= 0 {
		return o, errors.New("--latency-samples must be at least 1, --latency-interval not negative, --latency-max positive")
	}
	if su.Runs == 0 {
		su.Runs = 10
		if su.Quick {
			su.Runs = 3
		}
	}
	if su.Idle == 0 {
		su.Idle = 2 * time.Second
		if su.Quick {
			su.Idle = 500 * time.Millisecond
		}
	}
	return o, nil
}

// run prints --cpus auto's plan (--print-plan), or measures the suite and
// writes its JSON.
func run(o options, stdout io.Writer) error {
	if o.printPlan {
		for _, l := range o.suite.CPUs.Plan {
			fmt.Fprintln(stdout, l)
		}
		return nil
	}
	rep, err := o.suite.Run(stdout)
	if err != nil {
		return err
	}
	return writeJSON(o, rep)
}

// writeJSON writes the report to --json's file, if one was named.
func writeJSON(o options, rep pipebench.Report) error {
	if o.jsonPath == "" {
		return nil
	}
	out, err := pipebench.Artifact(rep)
	if err != nil {
		return err
	}
	return jsonfile.WriteFile(o.jsonPath, out)
}
