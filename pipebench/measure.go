package pipebench

import (
	"fmt"
	"slices"
	"time"

	"weaseldb/internal/procstat"
	"weaseldb/internal/stats"
	"weaseldb/server/pipeline"
)

// Options controls a measurement.
type Options struct {
	Runs   int // timed runs per case (default 10)
	Warmup int // untimed runs first (default 1)
	Hooks  Hooks
}

func (o Options) withDefaults() Options {
	if o.Runs < 1 {
		o.Runs = 10
	}
	if o.Warmup < 0 {
		o.Warmup = 0
	} else if o.Warmup == 0 {
		o.Warmup = 1
	}
	return o
}

// Result is one case's figures over its timed runs.
type Result struct {
	Case
	Runs         int
	NsPerItem    float64 // median over runs of wall time per item
	NsPerItemMin float64
	NsPerItemMax float64
	ItemsPerSec  float64 // 1e9 / NsPerItem
	// CPUNsPerItem is the median over runs of the process's user+system CPU
	// (getrusage: the producer, every stage goroutine and the Go runtime)
	// per item: what the kernel charged, not wall time.
	CPUNsPerItem float64
	// RatioToFirst is ItemsPerSec over that of its family's first case
	// (1 for the first case; 2 means twice as many items per second).
	RatioToFirst float64
}

// Measure runs one case: warm-up runs, then timed runs of c.Items items.
func Measure(c Case, o Options) (Result, error) {
	o = o.withDefaults()
	r, err := Start(c, o.Hooks)
	if err != nil {
		return Result{}, err
	}
	defer r.Close()
	for range o.Warmup {
		r.Run(c.Items)
	}
	wall := make([]float64, o.Runs)
	cpu := make([]float64, o.Runs)
	for i := range o.Runs {
		cpu0, err := procstat.SelfCPU()
		if err != nil {
			return Result{}, err
		}
		start := time.Now()
		r.Run(c.Items)
		el := time.Since(start)
		cpu1, err := procstat.SelfCPU()
		if err != nil {
			return Result{}, err
		}
		wall[i] = float64(el.Nanoseconds()) / float64(c.Items)
		cpu[i] = float64((cpu1 - cpu0).Nanoseconds()) / float64(c.Items)
	}
	slices.Sort(wall)
	slices.Sort(cpu)
	res := Result{
		Case:         c,
		Runs:         o.Runs,
		NsPerItem:    stats.Median(wall),
		NsPerItemMin: wall[0],
		NsPerItemMax: wall[len(wall)-1],
		CPUNsPerItem: stats.Median(cpu),
	}
	res.ItemsPerSec = 1e9 / res.NsPerItem
	return res, nil
}

// SetRatios fills RatioToFirst: each result against the first result of its
// family, in the given order.
func SetRatios(results []Result) {
	first := map[string]float64{}
	for i := range results {
		r := &results[i]
		if _, ok := first[r.Family]; !ok {
			first[r.Family] = r.ItemsPerSec
		}
		if ref := first[r.Family]; ref > 0 {
			r.RatioToFirst = r.ItemsPerSec / ref
		}
	}
}

// MeasureCases measures the cases in order, each with o, and keeps every
// result's RatioToFirst against its family's first (SetRatios) as it goes,
// so a table printed case by case shows the ratio: before, if not nil, runs
// ahead of each case (a family's title), after with each result.
func MeasureCases(cases []Case, o Options, before func(Case), after func(Result)) ([]Result, error) {
	var results []Result
	for _, c := range cases {
		if before != nil {
			before(c)
		}
		res, err := Measure(c, o)
		if err != nil {
			return nil, err
		}
		results = append(results, res)
		SetRatios(results)
		if after != nil {
			after(results[len(results)-1])
		}
	}
	return results, nil
}

// IdleResult is the CPU a strategy's pipeline uses while it waits for work.
type IdleResult struct {
	Strategy pipeline.WaitStrategy
	Seconds  float64 // how long it sat idle
	// CoreFraction is the process's CPU over that time, in cores
	// (0.005 = 0.5% of one core; Never may show up to one core per stage).
	CoreFraction float64
}

// settle is how long an idle measurement waits after the last item, so
// that bounded spins have expired before the clock starts.
const settle = 200 * time.Millisecond

// MeasureIdle starts the wait-strategy family's two-stage pipeline with the
// strategy, moves some items through it, lets it settle, and measures the
// process's CPU while it sits idle for d.
func MeasureIdle(s pipeline.WaitStrategy, d time.Duration, h Hooks) (IdleResult, error) {
	c := waitCase(ImplPipeline, s)
	c.Name = c.defaultName()
	r, err := Start(c, h)
	if err != nil {
		return IdleResult{}, err
	}
	defer r.Close()
	r.Run(c.Items)
	time.Sleep(settle)
	cpu0, err := procstat.SelfCPU()
	if err != nil {
		return IdleResult{}, err
	}
	start := time.Now()
	time.Sleep(d)
	el := time.Since(start)
	cpu1, err := procstat.SelfCPU()
	if err != nil {
		return IdleResult{}, fmt.Errorf("pipebench: idle %v: %w", s, err)
	}
	return IdleResult{Strategy: s, Seconds: el.Seconds(), CoreFraction: float64(cpu1-cpu0) / float64(el)}, nil
}
