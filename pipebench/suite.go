package pipebench

// A whole bench_pipeline run: the latency family (when named) on goroutines
// of its own, then the throughput families with the producer pinned on the
// calling goroutine's thread, then each wait strategy's idle CPU, each table
// printed as it fills.
//
// Who owns what: Suite.Run runs on the caller's goroutine, which it locks
// to the producer's CPU when the run is pinned (for the life of the
// process: the thread is never handed back); every other goroutine is a
// case's, started and joined by the measurement that owns it.

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"time"

	"weaseldb/artifacts"
	"weaseldb/internal/affinity"
	"weaseldb/server/pipeline"
)

// Suite is what one run measures and where.
type Suite struct {
	Families []string // of KnownFamilies
	Quick    bool     // only recorded in the report: Runs and Idle are already sized
	Runs     int      // timed runs per throughput case
	Idle     time.Duration
	CPUs     CPUChoice
	Latency  LatencyParams
}

// Run measures the suite, printing each table to out as it fills.
func (s Suite) Run(out io.Writer) (Report, error) {
	start := time.Now()
	rep := Report{Quick: s.Quick, CPUs: s.CPUs.CPUs}
	// The latency family first: it pins (and unpins) per case on goroutines
	// of its own, before pin locks this goroutine's thread for the rest.
	if slices.Contains(s.Families, FamilyLatency) {
		fmt.Fprintf(out, "bench_pipeline: GOMAXPROCS=%d, %d CPUs, latency family\n", runtime.GOMAXPROCS(0), runtime.NumCPU())
		var err error
		if rep.Latency, rep.Clock, err = s.runLatency(out); err != nil {
			return rep, err
		}
	}
	families := ThroughputFamilies(s.Families)
	if len(families) == 0 {
		fmt.Fprintf(out, "Took %.1fs.\n", time.Since(start).Seconds())
		return rep, nil
	}
	hooks, err := pinProducer(s.CPUs.CPUs, families)
	if err != nil {
		return rep, err
	}
	pinned := "not pinned"
	if cpus := s.CPUs.CPUs; len(cpus) > 0 {
		pinned = fmt.Sprintf("producer on CPU %d, stages on CPUs %v", cpus[0], cpus[1:])
	}
	quick := ""
	if s.Quick {
		quick = " (--quick)"
	}
	fmt.Fprintf(out, "bench_pipeline: GOMAXPROCS=%d, %d CPUs, %d runs per case%s, %s\n",
		runtime.GOMAXPROCS(0), runtime.NumCPU(), s.Runs, quick, pinned)
	// --cpus auto's plan, as --print-plan prints it, before the run: the
	// cores and nodes, what the machine could not give, the interrupts.
	for _, l := range s.CPUs.Plan {
		fmt.Fprintln(out, "plan: "+l)
	}
	table := NewCaseTable(out)
	if rep.Results, err = MeasureCases(FamilyCases(families), Options{Runs: s.Runs, Hooks: hooks}, table.Begin, table.Row); err != nil {
		return rep, err
	}
	if slices.Contains(families, FamilyWaitStrategy) {
		WriteIdleHeader(out, s.Idle)
		for _, st := range pipeline.Strategies() {
			r, err := MeasureIdle(st, s.Idle, hooks)
			if err != nil {
				return rep, err
			}
			rep.Idle = append(rep.Idle, r)
			WriteIdleRow(out, r)
		}
	}
	WriteCaseLegend(out, time.Since(start))
	return rep, nil
}

// runLatency measures the latency family, each case on dedicated cores
// and then on shared ones (interleaved, so a neighbour's burst hits both
// alike), and prints its table.
func (s Suite) runLatency(out io.Writer) ([]LatencyRow, *artifacts.PipelineClock, error) {
	clock := PipelineClock(MeasureClock(200_000), ClockSource())
	cases := LatencyCases(s.Latency)
	if len(cases) == 0 {
		return nil, clock, nil
	}
	WriteLatencyHeader(out, cases[0], clock)
	allowed, _ := affinity.AllowedCPUs()
	shared := SharedLatencyPlan(allowed, runtime.GOMAXPROCS(0))
	rows, err := MeasureLatencyFamily(cases, s.CPUs.Latency, shared, func(r LatencyRow) { WriteLatencyRow(out, r) })
	if err != nil {
		return nil, nil, err
	}
	WriteLatencyLegend(out, s.CPUs.Latency, shared)
	return rows, clock, nil
}

// pinProducer locks the calling goroutine (the producer) to cpus[0] and
// returns the hooks that pin each stage goroutine; it raises GOMAXPROCS so
// every pinned thread has a P and the rest one more. The producer's thread
// stays locked for the life of the process; stage threads end with their
// goroutines. No CPUs: no pinning, no hooks.
func pinProducer(cpus []int, families []string) (Hooks, error) {
	if len(cpus) == 0 {
		return Hooks{}, nil
	}
	runtime.GOMAXPROCS(affinity.GOMAXPROCSFor(1+MaxStages(families), runtime.GOMAXPROCS(0)))
	if err := affinity.PinCurrentThread(cpus[:1]); err != nil {
		return Hooks{}, fmt.Errorf("pin the producer: %w", err)
	}
	stageCPUs := cpus[1:]
	return Hooks{Pinned: true, StageStart: func(stage int) error {
		return affinity.PinCurrentThread(stageCPUs[stage : stage+1])
	}}, nil
}
