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

	"weaseldb/artifacts"
	"weaseldb/internal/affinity"
	"weaseldb/internal/benchmain"
	"weaseldb/internal/jsonfile"
	"weaseldb/internal/placement"
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
	latencyPlan latencyPlan
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
	var cpus string
	fs.StringVar(&cpus, "cpus", "", "pin threads: `P,S0,S1` = the producer's CPU, then stage 0's and stage 1's (checked against the allowed set; a CPU may repeat); auto = a CPU per hot thread by internal/placement (PlaceHot: from 2 CPUs for the latency family). The latency family runs each case on these dedicated cores and unpinned")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: bench_pipeline [--quick] [--json FILE] [flags]\n\n")
		fmt.Fprintf(stderr, "Runs the ThreadPipeline benchmark families and the same cases over Go channels\n(one item per send, and slices of the batch size), prints a table, and measures\neach wait strategy's idle CPU.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
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
	o.latencyPlan = latencyPlan{skip: "not pinned: --cpus auto (or --cpus P,S0) gives the producer and the stage a CPU each"}
	others := throughputFamilies(o.families)
	if cpus == "auto" {
		allowed, err := affinity.AllowedCPUs()
		if err != nil {
			return o, err
		}
		o.latencyPlan = planLatencyAuto(allowed)
		if len(others) > 0 {
			list, err := autoCPUs(allowed, maxStages(others))
			if err != nil {
				return o, fmt.Errorf("--cpus auto: %w", err)
			}
			o.cpus = list
		}
	} else if cpus != "" {
		list, err := affinity.ParseCPUList(cpus)
		if err != nil {
			return o, fmt.Errorf("--cpus: %w", err)
		}
		if need := 1 + maxStages(o.families); len(list) < need {
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
		o.latencyPlan = planLatencyList(list, allowed)
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

// autoCPUs places the producer and one thread per stage on dedicated
// cores by internal/placement (PlaceHot): where the full plan fits, the one
// the gate and the report use, so a standalone run pins its threads where
// the report's wait-strategy comparison does; with exactly a CPU per thread,
// each its own and none kept. It fails, saying how many CPUs it needs, where
// some thread would have to share: spinning stages on shared cores measure
// the contention, not the pipeline.
func autoCPUs(allowed []int, stages int) ([]int, error) {
	need := placement.Need{Producer: true, StageThreads: slices.Repeat([]int{1}, stages)}
	p, err := placement.PlaceHot(allowed, need)
	if err == nil && !p.Dedicated {
		err = fmt.Errorf("needs %d CPUs (one per hot thread: the producer and %d stages), this process may use %d (%s)",
			stages+1, stages, len(allowed), affinity.FormatCPUList(allowed))
	}
	if err != nil {
		return nil, err
	}
	list := []int{p.ProducerCPU}
	for _, s := range p.StageCPUs {
		list = append(list, s...)
	}
	return list, nil
}

// maxStages is the most stages any chosen family's cases use.
func maxStages(families []string) int {
	n := 1
	for _, c := range pipebench.AllCases() {
		if slices.Contains(families, c.Family) {
			n = max(n, c.Stages)
		}
	}
	return n
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
	runtime.GOMAXPROCS(affinity.GOMAXPROCSFor(1+maxStages(o.families), runtime.GOMAXPROCS(0)))
	if err := affinity.PinCurrentThread(o.cpus[:1]); err != nil {
		return pipebench.Hooks{}, fmt.Errorf("pin the producer: %w", err)
	}
	stageCPUs := o.cpus[1:]
	return pipebench.Hooks{Pinned: true, StageStart: func(stage int) error {
		return affinity.PinCurrentThread(stageCPUs[stage : stage+1])
	}}, nil
}

func run(o options, stdout io.Writer) error {
	start := time.Now()
	// The latency family first: it pins (and unpins) per case on goroutines
	// of its own, before pin locks this goroutine's thread for the rest.
	var latency []latencyRow
	var clock *artifacts.PipelineClock
	if slices.Contains(o.families, pipebench.FamilyLatency) {
		fmt.Fprintf(stdout, "bench_pipeline: GOMAXPROCS=%d, %d CPUs, latency family\n", runtime.GOMAXPROCS(0), runtime.NumCPU())
		var err error
		if latency, clock, err = runLatency(o, stdout); err != nil {
			return err
		}
	}
	o.families = throughputFamilies(o.families)
	if len(o.families) == 0 {
		fmt.Fprintf(stdout, "Took %.1fs.\n", time.Since(start).Seconds())
		if o.jsonPath != "" {
			return writeJSON(o, nil, nil, latency, clock)
		}
		return nil
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
	var results []pipebench.Result
	family := ""
	for _, c := range pipebench.AllCases() {
		if !slices.Contains(o.families, c.Family) {
			continue
		}
		if c.Family != family {
			family = c.Family
			fmt.Fprintf(stdout, "\n%s\n", familyTitle(c))
			fmt.Fprintf(stdout, "%-16s %-19s %6s %5s %11s %17s %14s %12s %8s\n",
				"impl", "strategy", "batch", "spin", "ns/item", "spread(min-max)", "items/s", "cpu-ns/item", "ratio")
		}
		res, err := pipebench.Measure(c, pipebench.Options{Runs: o.runs, Hooks: hooks})
		if err != nil {
			return err
		}
		results = append(results, res)
		pipebench.SetRatios(results)
		res = results[len(results)-1]
		fmt.Fprintf(stdout, "%-16s %-19s %6d %5d %11.1f %17s %14.0f %12.1f %7.2fx\n",
			res.Impl, res.StrategyName(), res.Batch, res.SpinIters, res.NsPerItem,
			fmt.Sprintf("%.1f-%.1f", res.NsPerItemMin, res.NsPerItemMax), res.ItemsPerSec, res.CPUNsPerItem, res.RatioToFirst)
	}
	var idle []pipebench.IdleResult
	if slices.Contains(o.families, pipebench.FamilyWaitStrategy) {
		fmt.Fprintf(stdout, "\nidle CPU: the wait_strategy pipeline (2 stages) idle for %v after a run; process CPU over wall time\n", o.idle)
		fmt.Fprintf(stdout, "%-19s %16s\n", "strategy", "% of one core")
		for _, s := range pipeline.Strategies() {
			r, err := pipebench.MeasureIdle(s, o.idle, hooks)
			if err != nil {
				return err
			}
			idle = append(idle, r)
			fmt.Fprintf(stdout, "%-19s %15.3f%%\n", s, 100*r.CoreFraction)
		}
	}
	fmt.Fprintf(stdout, "\nns/item: median wall time per item over the runs; spread: fastest and slowest run;\n"+
		"cpu-ns/item: the process's user+system CPU per item (getrusage), producer and stages together;\n"+
		"ratio: items/s over the family's first case. Took %.1fs.\n", time.Since(start).Seconds())
	if o.jsonPath != "" {
		return writeJSON(o, results, idle, latency, clock)
	}
	return nil
}

func familyTitle(c pipebench.Case) string {
	switch c.Family {
	case pipebench.FamilySingleStage:
		return fmt.Sprintf("== single_stage: 1 stage, %d spin iterations per item, pushes of %d, ring %d, %d items per run",
			c.SpinIters, c.Batch, 1<<c.LgSlots, c.Items)
	case pipebench.FamilyBatch:
		return fmt.Sprintf("== batch: 1 stage, no spin work (the hand-off cost), ring %d, %d items per run", 1<<c.LgSlots, c.Items)
	case pipebench.FamilyBatchSpin:
		return fmt.Sprintf("== batch_spin: 1 stage, %d spin iterations per item, ring %d, %d items per run", c.SpinIters, 1<<c.LgSlots, c.Items)
	default:
		return fmt.Sprintf("== wait_strategy: 2 stages, batch %d, %d spin iterations per item per stage, ring %d, %d items per run",
			c.Batch, c.SpinIters, 1<<c.LgSlots, c.Items)
	}
}

func writeJSON(o options, results []pipebench.Result, idle []pipebench.IdleResult, latency []latencyRow, clock *artifacts.PipelineClock) error {
	out := artifacts.PipelineBench{
		Version:    1,
		Quick:      o.quick,
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		NumCPU:     runtime.NumCPU(),
		GoVersion:  runtime.Version(),
		CPUs:       o.cpus,
		Cases:      []artifacts.PipelineCase{},
		Idle:       []artifacts.PipelineIdle{},
		Clock:      clock,
	}
	cores := artifacts.CoresShared
	if len(o.cpus) > 0 && len(slices.Compact(slices.Sorted(slices.Values(o.cpus)))) == len(o.cpus) {
		cores = artifacts.CoresDedicated
	}
	for _, r := range results {
		out.Cases = append(out.Cases, artifacts.PipelineCase{
			Family: r.Family, Name: r.Name, Impl: string(r.Impl), Strategy: r.StrategyName(),
			Stages: r.Stages, Batch: r.Batch, SpinIters: r.SpinIters,
			NsPerItem: r.NsPerItem, ItemsPerSec: r.ItemsPerSec, CPUNsPerItem: r.CPUNsPerItem,
			NsPerItemMin: r.NsPerItemMin, NsPerItemMax: r.NsPerItemMax, RatioToFirst: r.RatioToFirst,
			Items: r.Items, Runs: r.Runs, SlotCount: 1 << r.LgSlots, Cores: cores,
		})
	}
	for _, r := range latency {
		c, err := latencyCase(r)
		if err != nil {
			return err
		}
		out.Cases = append(out.Cases, c)
	}
	for _, r := range idle {
		out.Idle = append(out.Idle, artifacts.PipelineIdle{Strategy: r.Strategy.String(), CoreFraction: r.CoreFraction, Seconds: r.Seconds})
	}
	return jsonfile.WriteFile(o.jsonPath, out)
}
