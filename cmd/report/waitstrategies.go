package main

import (
	"context"
	"io"
	"strings"

	"weaseldb/artifacts"
	"weaseldb/bench"
)

// waitStrategies is `report wait-strategies`: flags here, the comparison in
// reports/bench.
func waitStrategies(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report wait-strategies", stderr)
	o := &bench.WaitOptions{}
	commonFlags(fs, &o.Common, "weaseldb, load_tester and bench_pipeline", 3, "after each server run's load")
	fs.Float64Var(&o.DurationS, "duration", 5, "seconds of measured load per server run (at least 2)")
	fs.IntVar(&o.Concurrency, "concurrency", 100, "load_tester connections")
	fs.IntVar(&o.LoadThreads, "load-threads", 1, "load_tester network threads (a dedicated CPU each)")
	fs.IntVar(&o.RequestsPerConn, "requests-per-conn", 0, "load_tester closes each connection after this many requests and opens another (0: keep-alive throughout)")
	fs.IntVar(&o.IOThreads, "io-threads", 1, "server io_threads")
	fs.IntVar(&o.Release, "release-threads", 1, "server pipeline_release_threads")
	fs.IntVar(&o.OkIterations, "ok-iterations", 0, "server ok_resolve_iterations (spin work per /ok)")
	fs.StringVar(&o.Strategies, "strategies", strings.Join(artifacts.WaitStrategyNames, ","), "wait strategies, comma-separated")
	fs.StringVar(&o.Cores, "cores", "shared,dedicated", "kinds of cores: shared, dedicated or both")
	fs.StringVar(&o.RateFractions, "rate-fractions", bench.DefaultRateFractions, "each server run again open-loop (load_tester --rate-steps) at these fractions of its closed-loop req/s; none: skip")
	fs.Float64Var(&o.RateStepS, "rate-step-duration", 2, "seconds of measured load per open-loop step")
	fs.BoolVar(&o.Latency, "latency", true, "also run bench_pipeline's latency family (hand-off latency per strategy, dedicated and shared cores)")
	fs.IntVar(&o.LatencySamples, "latency-samples", 0, "bench_pipeline --latency-samples (0: its default)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	// How long is left is not known ahead (the plan depends on the CPUs and
	// each run's open-loop steps on its own closed-loop rate): time run only.
	out, log, done := withProgress(stdout, stderr, 0)
	defer done()
	return bench.WaitStrategies(ctx, o, out, log)
}
