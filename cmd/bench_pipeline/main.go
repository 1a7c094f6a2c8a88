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
	"runtime"
	"slices"
	"strings"
	"time"

	"weaseldb/internal/affinity"
	"weaseldb/internal/benchmain"
	"weaseldb/internal/cliflag"
	"weaseldb/internal/jsonfile"
	"weaseldb/internal/placement"
	"weaseldb/internal/procstat"
	"weaseldb/pipebench"
	"weaseldb/server/pipeline"
)

type options struct {
	cpus     []int // producer, then stage 0, stage 1; empty: no pinning
	quick    bool
	runs     int
	idle     time.Duration
	families []string
	jsonPath string
	// The latency family: its sizes, and where its dedicated cases pin the
	// producer and the stage (set whatever --cpus says).
	latency     pipebench.LatencyParams
	latencyPlan pipebench.LatencyPlan
	// --print-plan: print where --cpus auto puts each thread, run nothing.
	printPlan bool
	plan      []string // the plan's lines (--cpus auto)
}

func main() {
	os.Exit(benchmain.Run("bench_pipeline", os.Args[1:], os.Stdout, os.Stderr, parseArgs, run))
}

// allFamilies are the families a run takes by default: the throughput
// families. knownFamilies adds the latency family, run on request.
func allFamilies() []string {
	return []string{pipebench.FamilySingleStage, pipebench.FamilyBatch, pipebench.FamilyBatchSpin, pipebench.FamilyWaitStrategy}
}

func knownFamilies() []string { return append(allFamilies(), pipebench.FamilyLatency) }

// throughputFamilies are the chosen families but latency.
func throughputFamilies(families []string) []string {
	var out []string
	for _, f := range families {
		if f != pipebench.FamilyLatency {
			out = append(out, f)
		}
	}
	return out
}

func parseArgs(args []string, stderr io.Writer) (options, error) {
	var o options
	var families string
	fs := flag.NewFlagSet("bench_pipeline", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&o.quick, "quick", false, "fewer runs and a 0.5 s idle measurement: the whole run takes well under 30 s")
	fs.IntVar(&o.runs, "runs", 0, "timed runs per case (default 10, or 3 with --quick)")
	fs.DurationVar(&o.idle, "idle", 0, "how long each strategy's pipeline sits idle while its CPU is measured (default 2s, or 500ms with --quick; 0s with --families skipping wait_strategy)")
	fs.StringVar(&families, "families", strings.Join(allFamilies(), ","), "comma-separated families to run, of "+strings.Join(knownFamilies(), ", ")+" (latency runs only when named)")
	fs.IntVar(&o.latency.Samples, "latency-samples", pipebench.DefaultLatencySamples, fmt.Sprintf("latency family: items (or round trips) per low-rate case; saturation cases take %dx as many", pipebench.SaturationFactor))
	fs.DurationVar(&o.latency.Interval, "latency-interval", pipebench.DefaultLatencyInterval, "latency family: the low rate's gap between items (keep it above the pipeline's 50µs IdleSpin, so every parking strategy parks)")
	fs.DurationVar(&o.latency.MaxDuration, "latency-max", pipebench.DefaultLatencyMaxDuration, "latency family: a case ends after this long even with samples to go (marked truncated)")
	fs.StringVar(&o.jsonPath, "json", "", "write the results as JSON to this file")
	fs.BoolVar(&o.printPlan, "print-plan", false, "with --cpus auto: print where each hot thread goes (cpu=N core=N node=N idle=...: its physical core, NUMA node and the hyper-threads left idle), what the machine could not give, and the network interrupts that may land on those CPUs; run nothing")
	var cpus string
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
	for _, f := range strings.Split(families, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !slices.Contains(knownFamilies(), f) {
			return o, fmt.Errorf("--families: unknown family %q (want some of %s)", f, strings.Join(knownFamilies(), ", "))
		}
		o.families = append(o.families, f)
	}
	if len(o.families) == 0 {
		return o, errors.New("--families: name at least one family")
	}
	o.latencyPlan = pipebench.LatencyPlan{Skip: "not pinned: --cpus auto (or --cpus P,S0) gives the producer and the stage a CPU each"}
	others := throughputFamilies(o.families)
	if o.printPlan && cpus != "auto" {
		return o, errors.New("--print-plan: only with --cpus auto")
	}
	if cpus == "auto" {
		allowed, err := affinity.AllowedCPUs()
		if err != nil {
			return o, err
		}
		topo := procstat.ReadTopology(procstat.SysRoot, allowed)
		topo.NetIRQs = procstat.NetworkIRQs(procstat.ProcRoot, procstat.SysRoot)
		o.latencyPlan = pipebench.PlanLatencyOn(topo)
		if len(others) > 0 {
			list, p, err := pipebench.AutoPlan(topo, pipebench.MaxStages(others))
			if err != nil {
				return o, fmt.Errorf("--cpus auto: %w", err)
			}
			o.cpus, o.plan = list, planLines(topo, p)
		}
	} else if cpus != "" {
		list, err := affinity.ParseCPUList(cpus)
		if err != nil {
			return o, fmt.Errorf("--cpus: %w", err)
		}
		if need := 1 + pipebench.MaxStages(o.families); len(list) < need {
			return o, fmt.Errorf("--cpus %s: need %d CPUs (the producer, then one per stage)", cpus, need)
		}
		allowed, err := affinity.AllowedCPUs()
		if err != nil {
			return o, err
		}
		distinct := slices.Compact(slices.Sorted(slices.Values(list)))
		if err := affinity.Validate(distinct, allowed); err != nil {
			return o, fmt.Errorf("--cpus: %w", err)
		}
		o.latencyPlan = pipebench.PlanLatencyList(list, allowed)
		if len(others) > 0 {
			o.cpus = list
		}
	}
	if o.runs < 0 || o.idle < 0 {
		return o, errors.New("--runs and --idle must not be negative")
	}
	if o.latency.Samples < 1 || o.latency.Interval < 0 || o.latency.MaxDuration <= 0 {
		return o, errors.New("--latency-samples must be at least 1, --latency-interval not negative, --latency-max positive")
	}
	if o.runs == 0 {
		o.runs = 10
		if o.quick {
			o.runs = 3
		}
	}
	if o.idle == 0 {
		o.idle = 2 * time.Second
		if o.quick {
			o.idle = 500 * time.Millisecond
		}
	}
	return o, nil
}

// pin locks the calling goroutine (the producer) to o.cpus[0] and returns
// the hooks that pin each stage goroutine; it raises GOMAXPROCS so every
// pinned thread has a P and the rest one more. The producer's thread stays
// locked for the life of the process; stage threads end with their
// goroutines.
func pin(o options) (pipebench.Hooks, error) {
	if len(o.cpus) == 0 {
		return pipebench.Hooks{}, nil
	}
	runtime.GOMAXPROCS(affinity.GOMAXPROCSFor(1+pipebench.MaxStages(o.families), runtime.GOMAXPROCS(0)))
	if err := affinity.PinCurrentThread(o.cpus[:1]); err != nil {
		return pipebench.Hooks{}, fmt.Errorf("pin the producer: %w", err)
	}
	stageCPUs := o.cpus[1:]
	return pipebench.Hooks{Pinned: true, StageStart: func(stage int) error {
		return affinity.PinCurrentThread(stageCPUs[stage : stage+1])
	}}, nil
}

// planLines are --print-plan's lines: one per thread, then what the plan
// gave up and the interrupts that may land on its CPUs.
func planLines(topo procstat.Topology, p placement.Plan) []string {
	var lines []string
	for _, t := range p.Threads {
		lines = append(lines, t.String())
	}
	if topo.Flat {
		lines = append(lines, "topology: flat ("+topo.Note+")")
	}
	for _, g := range p.GaveUp {
		lines = append(lines, "gave up: "+g)
	}
	for _, w := range placement.IRQWarnings(p.Threads, topo.NetIRQs) {
		lines = append(lines, "warning: "+w)
	}
	return lines
}

func run(o options, stdout io.Writer) error {
	if o.printPlan {
		for _, l := range o.plan {
			fmt.Fprintln(stdout, l)
		}
		return nil
	}
	start := time.Now()
	rep := pipebench.Report{Quick: o.quick, CPUs: o.cpus}
	// The latency family first: it pins (and unpins) per case on goroutines
	// of its own, before pin locks this goroutine's thread for the rest.
	if slices.Contains(o.families, pipebench.FamilyLatency) {
		fmt.Fprintf(stdout, "bench_pipeline: GOMAXPROCS=%d, %d CPUs, latency family\n", runtime.GOMAXPROCS(0), runtime.NumCPU())
		var err error
		if rep.Latency, rep.Clock, err = runLatency(o, stdout); err != nil {
			return err
		}
	}
	o.families = throughputFamilies(o.families)
	if len(o.families) == 0 {
		fmt.Fprintf(stdout, "Took %.1fs.\n", time.Since(start).Seconds())
		return writeJSON(o, rep)
	}
	hooks, err := pin(o)
	if err != nil {
		return err
	}
	pinned := "not pinned"
	if len(o.cpus) > 0 {
		pinned = fmt.Sprintf("producer on CPU %d, stages on CPUs %v", o.cpus[0], o.cpus[1:])
	}
	fmt.Fprintf(stdout, "bench_pipeline: GOMAXPROCS=%d, %d CPUs, %d runs per case%s, %s\n",
		runtime.GOMAXPROCS(0), runtime.NumCPU(), o.runs, map[bool]string{true: " (--quick)", false: ""}[o.quick], pinned)
	// --cpus auto's plan, as --print-plan prints it, before the run: the
	// cores and nodes, what the machine could not give, the interrupts.
	for _, l := range o.plan {
		fmt.Fprintln(stdout, "plan: "+l)
	}
	table := pipebench.NewCaseTable(stdout)
	if rep.Results, err = pipebench.MeasureCases(pipebench.FamilyCases(o.families), pipebench.Options{Runs: o.runs, Hooks: hooks}, table.Begin, table.Row); err != nil {
		return err
	}
	if slices.Contains(o.families, pipebench.FamilyWaitStrategy) {
		pipebench.WriteIdleHeader(stdout, o.idle)
		for _, s := range pipeline.Strategies() {
			r, err := pipebench.MeasureIdle(s, o.idle, hooks)
			if err != nil {
				return err
			}
			rep.Idle = append(rep.Idle, r)
			pipebench.WriteIdleRow(stdout, r)
		}
	}
	pipebench.WriteCaseLegend(stdout, time.Since(start))
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
