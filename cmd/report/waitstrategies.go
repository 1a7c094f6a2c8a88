package main

import (
	"io"
	"strings"
	"time"

	"weaseldb/reports"
	"weaseldb/reports/runner"
)

// waitStrategies is `report wait-strategies`: flags here, the comparison in
// reports/runner.
func waitStrategies(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report wait-strategies", stderr)
	o := &runner.WaitOptions{}
	fs.StringVar(&o.Bin, "bin", "build", "directory holding weaseldb, load_tester and bench_pipeline")
	fs.StringVar(&o.RunDir, "run", "", "run directory: wait_strategies.json and every raw result go here")
	fs.Float64Var(&o.DurationS, "duration", 5, "seconds of measured load per server run (at least 2)")
	fs.Float64Var(&o.WarmupS, "warmup", 1, "seconds of load before the measured window, excluded from every figure")
	fs.Float64Var(&o.IdleS, "idle", 3, "seconds of idle CPU measured after the load (at least 1)")
	fs.IntVar(&o.IdleConns, "idle-conns", 100, "keep-alive connections held open while idle")
	fs.IntVar(&o.Concurrency, "concurrency", 100, "load_tester connections")
	fs.IntVar(&o.LoadThreads, "load-threads", 1, "load_tester network threads (a dedicated CPU each)")
	fs.IntVar(&o.IOThreads, "io-threads", 1, "server io_threads")
	fs.IntVar(&o.Release, "release-threads", 1, "server pipeline_release_threads")
	fs.IntVar(&o.OkIterations, "ok-iterations", 0, "server ok_resolve_iterations (spin work per /ok)")
	fs.StringVar(&o.Strategies, "strategies", strings.Join(reports.WaitStrategyNames, ","), "wait strategies, comma-separated")
	fs.StringVar(&o.Cores, "cores", "shared,dedicated", "kinds of cores: shared, dedicated or both")
	fs.StringVar(&o.AllowedCPUs, "allowed-cpus", "", "plan against this CPU list instead of sched_getaffinity (implies --plan)")
	fs.BoolVar(&o.Plan, "plan", false, "print the plan (which runs, which CPUs, which are skipped) and run nothing")
	fs.DurationVar(&o.ReadyTimeout, "ready-timeout", 15*time.Second, "how long the server may take to say it is ready")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	return runner.WaitStrategies(o, stdout, stderr)
}
