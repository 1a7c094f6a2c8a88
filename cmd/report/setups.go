package main

import (
	"context"
	"io"
	"time"

	"weaseldb/bench"
)

// setups is `report setups`: flags here, the rounds in reports/bench.
func setups(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report setups", stderr)
	o := &bench.SetupsOptions{}
	commonFlags(fs, &o.Common, "weaseldb, load_tester and bench_cpu_work", 5, "after each setup's last round")
	fs.StringVar(&o.Config, "config", "", "the seed's server config (its threads, wait strategy and work per request)")
	fs.IntVar(&o.Rounds, "rounds", 5, "rounds; each calibrates, then runs both setups, the first alternating")
	fs.Float64Var(&o.DurationS, "duration", 4, "seconds of measured load per run (at least 2)")
	fs.IntVar(&o.Connections, "concurrency", 2000, "the seed's load_tester connections, in all (spread over its network threads)")
	fs.IntVar(&o.RequestsPerConn, "requests-per-conn", 500, "requests per connection before it reconnects (both setups)")
	// 2, not the 8 the seed report lists: the seed's own script passes 2,
	// and connect threads only open connections (docs/report.md).
	fs.IntVar(&o.ConnectThreads, "connect-threads", 2, "load_tester connect threads (both setups; the seed's script's 2, its report lists 8)")
	fs.IntVar(&o.NetworkThreads, "network-threads", 10, "the seed's load_tester network threads")
	fs.Float64Var(&o.StatsIntervalS, "stats-interval", 1, "seconds between load_tester's interval lines")
	fs.IntVar(&o.WorkIterations, "work-iterations", 4000, "spin iterations bench_cpu_work times each round (the server's ok_resolve_iterations)")
	fs.DurationVar(&o.WorkTarget, "work-target", 740*time.Nanosecond, "cost bench_cpu_work --target calibrates each round")
	fs.Float64Var(&o.SustainS, "sustain", 0, "after the rounds, load each setup once more for this many seconds without a break, the server sampled every --sustain-window (0: no sustained run)")
	fs.Float64Var(&o.SustainWindowS, "sustain-window", 10, "seconds per window of the sustained run: requests served, GC pauses, RSS")
	fs.BoolVar(&o.StageWaits, "stage-waits", false, "turn the servers' stage wait histogram on (commit.pipeline_stage_waits), for the report's section on where a request waits; it costs the server instructions per request")
	fs.BoolVar(&o.RequireDedicated, "require-dedicated", false, "fail before running anything when the fitted setup cannot have dedicated cores here (the plan and what it needs printed)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	// Each round runs both setups: a warm-up, the measured load and the idle
	// check each, and about 2 s to start and calibrate (an estimate).
	perRun := time.Duration((o.WarmupS + o.DurationS + o.IdleS + 2) * float64(time.Second))
	sustained := time.Duration(0)
	if o.SustainS > 0 {
		sustained = 2 * time.Duration((o.WarmupS+o.SustainS+2)*float64(time.Second))
	}
	out, log, done := withProgress(stdout, stderr, time.Duration(2*o.Rounds)*perRun+sustained)
	defer done()
	return bench.Setups(ctx, o, out, log)
}
