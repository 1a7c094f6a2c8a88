package main

import (
	"io"
	"time"

	"weaseldb/reports/runner"
)

// setups is `report setups`: flags here, the rounds in reports/runner.
func setups(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report setups", stderr)
	o := &runner.SetupsOptions{}
	fs.StringVar(&o.Bin, "bin", "build", "directory holding weaseldb, load_tester and bench_cpu_work")
	fs.StringVar(&o.RunDir, "run", "", "run directory: setups.json, the setups' configs and rounds/ go here")
	fs.StringVar(&o.Config, "config", "", "the seed's server config (its threads, wait strategy and work per request)")
	fs.IntVar(&o.Rounds, "rounds", 5, "rounds; each calibrates, then runs both setups, the first alternating")
	fs.Float64Var(&o.DurationS, "duration", 4, "seconds of measured load per run (at least 2)")
	fs.Float64Var(&o.WarmupS, "warmup", 1, "seconds of load before the measured window, excluded from every figure")
	fs.Float64Var(&o.IdleS, "idle", 5, "seconds of idle CPU measured after each setup's last round (at least 1)")
	fs.IntVar(&o.IdleConns, "idle-conns", 100, "keep-alive connections held open while idle")
	fs.IntVar(&o.Connections, "concurrency", 2000, "the seed's load_tester connections")
	fs.IntVar(&o.RequestsPerConn, "requests-per-conn", 500, "requests per connection before it reconnects (both setups)")
	fs.IntVar(&o.ConnectThreads, "connect-threads", 2, "load_tester connect threads (both setups)")
	fs.IntVar(&o.NetworkThreads, "network-threads", 10, "the seed's load_tester network threads")
	fs.Float64Var(&o.StatsIntervalS, "stats-interval", 1, "seconds between load_tester's interval lines")
	fs.IntVar(&o.WorkIterations, "work-iterations", 4000, "spin iterations bench_cpu_work times each round (the server's ok_resolve_iterations)")
	fs.DurationVar(&o.WorkTarget, "work-target", 740*time.Nanosecond, "cost bench_cpu_work --target calibrates each round")
	fs.StringVar(&o.AllowedCPUs, "allowed-cpus", "", "plan against this CPU list instead of sched_getaffinity (implies --plan)")
	fs.BoolVar(&o.Plan, "plan", false, "print both setups and the order of the runs, and run nothing")
	fs.DurationVar(&o.ReadyTimeout, "ready-timeout", 15*time.Second, "how long each server may take to say it is ready")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	return runner.Setups(o, stdout, stderr)
}
