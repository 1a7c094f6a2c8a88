// Command bench_cpu_work validates and calibrates the spin work
// (cpuwork.SpendCPUCycles): it prints ns per call for given iteration counts,
// or finds the iteration count that costs a target time on this machine.
//
//	bench_cpu_work 4000
//	bench_cpu_work 4000 8000            # interleaved, with the ratio to the first
//	bench_cpu_work --target 740ns --json cal.json   # repeated until two passes agree within 5%
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"weaseldb/internal/benchmain"
	"weaseldb/internal/cliflag"
	"weaseldb/internal/jsonfile"
	"weaseldb/server/cpuwork"
)

// result is one iteration count's figures; the first four fields are the
// contract's JSON (docs/CONTRACTS.md).
type result struct {
	Iterations       int     `json:"iterations"`
	NsPerCallMedian  float64 `json:"ns_per_call_median"`
	NsPerCallMin     float64 `json:"ns_per_call_min"`
	NsPerCallMax     float64 `json:"ns_per_call_max"`
	Runs             int     `json:"runs"`
	CallsPerRun      int     `json:"calls_per_run"`
	WallNsMedian     float64 `json:"wall_ns_per_call_median"`
	WallNsMin        float64 `json:"wall_ns_per_call_min"`
	NsPerIteration   float64 `json:"ns_per_iteration"`
	RatioToFirst     float64 `json:"ratio_to_first,omitempty"`
	RatioMinToFirst  float64 `json:"ratio_min_to_first,omitempty"`
	TargetNs         float64 `json:"target_ns,omitempty"`
	TargetIterations int     `json:"target_iterations,omitempty"`
	// The calibration's passes (--target): it repeats its search until two
	// agree within 5%; agreed is false when none did, spread is the largest
	// count over the smallest, minus one.
	TargetPasses []cpuwork.Pass `json:"target_passes,omitempty"`
	TargetAgreed *bool          `json:"target_agreed,omitempty"`
	TargetSpread *float64       `json:"target_spread,omitempty"`
}

// output is the JSON file: the first (or calibrated) count's figures at the
// top level, and every count's under "results".
type output struct {
	result
	Results []result `json:"results"`
}

type options struct {
	iterations []int
	target     time.Duration
	runs       int
	runTime    time.Duration
	jsonPath   string
}

func main() {
	os.Exit(benchmain.Run("bench_cpu_work", os.Args[1:], os.Stdout, os.Stderr, parseArgs, run))
}

// parseArgs accepts flags before, between and after the iteration counts.
func parseArgs(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("bench_cpu_work", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.DurationVar(&o.target, "target", 0, "find the iteration count whose call costs this long (e.g. 740ns)")
	fs.IntVar(&o.runs, "runs", 31, "timed runs per iteration count (median, min, max are over these)")
	fs.DurationVar(&o.runTime, "run-time", 3*time.Millisecond, "length of one timed run")
	fs.StringVar(&o.jsonPath, "json", "", "write the result as JSON to this file")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: bench_cpu_work [flags] ITERATIONS [ITERATIONS...]\n       bench_cpu_work [flags] --target 740ns\n\n")
		fmt.Fprintf(stderr, "Prints ns per cpuwork.SpendCPUCycles(ITERATIONS) call: median, min and max over\nrepeated runs (several counts run interleaved), or calibrates --target.\n\nflags:\n")
		fs.PrintDefaults()
	}
	for {
		if err := cliflag.Parse(fs, args); err != nil {
			return o, err
		}
		if fs.NArg() == 0 {
			break
		}
		n, err := strconv.Atoi(fs.Arg(0))
		if err != nil || n < 0 {
			return o, fmt.Errorf("iterations %q: want a whole number >= 0", fs.Arg(0))
		}
		o.iterations = append(o.iterations, n)
		args = fs.Args()[1:]
	}
	switch {
	case len(o.iterations) == 0 && o.target == 0:
		fs.Usage()
		return o, errors.New("give ITERATIONS or --target")
	case o.target < 0:
		return o, fmt.Errorf("--target %v: want > 0", o.target)
	case o.runs < 1:
		return o, fmt.Errorf("--runs %d: want >= 1", o.runs)
	case o.runTime <= 0:
		return o, fmt.Errorf("--run-time %v: want > 0", o.runTime)
	}
	return o, nil
}

func run(o options, stdout io.Writer) error {
	var results []result
	var top result
	var calErr error
	if o.target > 0 {
		c, err := cpuwork.Calibrate(o.target, o.runs, o.runTime)
		var notAgreed *cpuwork.NotAgreedError
		if err != nil && !errors.As(err, &notAgreed) {
			return err
		}
		calErr = err
		top = calibrationResult(o.target, c)
		fmt.Fprintf(stdout, "target %v: %d iterations (measured %.1f CPU ns per call, median of %d runs); %s\n",
			o.target, c.Iterations, c.Stats.MedianNs, c.Stats.Runs, describePasses(c))
		results = append(results, top)
	}
	if len(o.iterations) > 0 {
		stats, err := cpuwork.MeasureInterleaved(o.iterations, o.runs, o.runTime)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%12s %14s %10s %10s %10s %16s %16s\n", "iterations", "ns/call(med)", "min", "max", "ns/iter", "wall-ns(med,min)", "ratio(med,min)")
		for i, st := range stats {
			r := toResult(st)
			if i > 0 && stats[0].MedianNs > 0 && stats[0].MinNs > 0 {
				r.RatioToFirst = st.MedianNs / stats[0].MedianNs
				r.RatioMinToFirst = st.MinNs / stats[0].MinNs
			}
			ratio := "-"
			if i > 0 {
				ratio = fmt.Sprintf("%.3f,%.3f", r.RatioToFirst, r.RatioMinToFirst)
			}
			fmt.Fprintf(stdout, "%12d %14.1f %10.1f %10.1f %10.4f %16s %16s\n",
				r.Iterations, r.NsPerCallMedian, r.NsPerCallMin, r.NsPerCallMax, r.NsPerIteration,
				fmt.Sprintf("%.0f,%.0f", r.WallNsMedian, r.WallNsMin), ratio)
			results = append(results, r)
		}
		fmt.Fprintf(stdout, "(ns/call: the thread's CPU time per call, %d runs of about %v per count, interleaved;\n wall-ns also counts time the thread sat preempted; ratio = this count's median and min over the first count's)\n", o.runs, o.runTime)
		if o.target == 0 {
			top = results[0]
		}
	}
	if o.jsonPath != "" {
		if err := jsonfile.WriteFile(o.jsonPath, output{result: top, Results: results}); err != nil {
			return err
		}
	}
	return calErr // a calibration whose passes never agreed fails, its JSON written
}

func calibrationResult(target time.Duration, c cpuwork.Calibration) result {
	r := toResult(c.Stats)
	spread := c.Spread()
	r.TargetNs, r.TargetIterations = float64(target.Nanoseconds()), c.Iterations
	r.TargetPasses, r.TargetAgreed, r.TargetSpread = c.Passes, &c.Agreed, &spread
	return r
}

// describePasses says how the repeated search went.
func describePasses(c cpuwork.Calibration) string {
	counts := make([]string, len(c.Passes))
	for i, p := range c.Passes {
		counts[i] = strconv.Itoa(p.Iterations)
	}
	if c.Agreed {
		return fmt.Sprintf("two of %d passes agreed within %.0f%%: %s", len(c.Passes), cpuwork.AgreeWithin*100, strings.Join(counts, ", "))
	}
	return fmt.Sprintf("NO two of %d passes agreed within %.0f%%: %s", len(c.Passes), cpuwork.AgreeWithin*100, strings.Join(counts, ", "))
}

func toResult(st cpuwork.Stats) result {
	r := result{
		Iterations:      st.Iterations,
		NsPerCallMedian: st.MedianNs,
		NsPerCallMin:    st.MinNs,
		NsPerCallMax:    st.MaxNs,
		Runs:            st.Runs,
		CallsPerRun:     st.CallsPerRun,
		WallNsMedian:    st.WallMedianNs,
		WallNsMin:       st.WallMinNs,
	}
	if st.Iterations > 0 {
		r.NsPerIteration = st.MedianNs / float64(st.Iterations)
	}
	return r
}
