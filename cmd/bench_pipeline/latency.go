package main

import (
	"io"
	"runtime"

	"weaseldb/artifacts"
	"weaseldb/internal/affinity"
	"weaseldb/pipebench"
)

// runLatency measures the latency family, each case on dedicated cores
// and then on shared ones (interleaved, so a neighbour's burst hits both
// alike), and prints its table.
func runLatency(o options, stdout io.Writer) ([]pipebench.LatencyRow, *artifacts.PipelineClock, error) {
	clock := pipebench.PipelineClock(pipebench.MeasureClock(200_000), pipebench.ClockSource())
	cases := pipebench.LatencyCases(o.latency)
	if len(cases) == 0 {
		return nil, clock, nil
	}
	pipebench.WriteLatencyHeader(stdout, cases[0], clock)
	allowed, _ := affinity.AllowedCPUs()
	shared := pipebench.SharedLatencyPlan(allowed, runtime.GOMAXPROCS(0))
	rows, err := pipebench.MeasureLatencyFamily(cases, o.latencyPlan, shared, func(r pipebench.LatencyRow) { pipebench.WriteLatencyRow(stdout, r) })
	if err != nil {
		return nil, nil, err
	}
	pipebench.WriteLatencyLegend(stdout, o.latencyPlan, shared)
	return rows, clock, nil
}
