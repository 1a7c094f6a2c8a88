//go:build ignore

// gen_synthetic writes the synthetic artifacts of testdata/report_run: a run
// directory shaped like the one scripts/reproduce_threading_report.sh writes,
// with plausible numbers for a 2-core machine. Run from the repository root:
//
//	go run testdata/report_run/gen_synthetic.go testdata/report_run
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

func main() {
	dir := os.Args[1]
	rng := rand.New(rand.NewPCG(1, 2))
	const seconds, rateMean = 20, 61000.0
	total := hdrhistogram.New(1000, 60e9, 3)
	var logBuf bytes.Buffer
	lw := hdrhistogram.NewHistogramLogWriter(&logBuf)
	base := int64(1785000000000)
	must(lw.OutputLogFormatVersion())
	must(lw.OutputStartTime(base))
	must(lw.OutputLegend())
	var intervals []map[string]any
	var requests int64
	for s := 0; s < seconds; s++ {
		rate := rateMean * (1 + 0.04*rng.NormFloat64())
		if s == 0 {
			rate *= 0.7 // connections still ramping up
		}
		n := int64(rate)
		h := hdrhistogram.New(1000, 60e9, 3)
		for i := int64(0); i < n; i++ {
			// Closed loop with 2000 connections: ~2000/rate s median, long tail.
			lat := 2000 / rate * 1e9 * math.Exp(0.25*rng.NormFloat64())
			if rng.Float64() < 0.002 {
				lat *= 3 + 4*rng.Float64()
			}
			must(h.RecordValue(int64(lat)))
		}
		h.SetStartTimeMs(base + int64(s)*1000)
		h.SetEndTimeMs(base + int64(s+1)*1000)
		must(lw.OutputIntervalHistogram(h))
		total.Merge(h)
		requests += n
		intervals = append(intervals, map[string]any{"t_s": float64(s + 1), "requests": n, "requests_per_sec": float64(n),
			"p50_ns": h.ValueAtQuantile(50), "p99_ns": h.ValueAtQuantile(99), "errors": 0})
	}
	enc, err := total.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	must(err)
	load := map[string]any{
		"version": 1, "requests": requests, "errors": 0, "duration_s": float64(seconds),
		"requests_per_sec": float64(requests) / seconds,
		"latency_ns": map[string]any{"p50": total.ValueAtQuantile(50), "p90": total.ValueAtQuantile(90),
			"p99": total.ValueAtQuantile(99), "p999": total.ValueAtQuantile(99.9), "max": total.Max()},
		"intervals": intervals, "errors_by_kind": map[string]int64{},
		"client_cpu_fraction": 0.31, "client_cpu_cores": 0.62, "client_bound": false, "interrupted": false,
		"config": map[string]any{"unix_socket": "weaseldb.sock", "concurrency": 2000, "requests_per_conn": 500,
			"connect_threads": 2, "network_threads": 10, "gomaxprocs": 12, "duration_s": seconds, "stats_interval_s": 1, "path": "/ok", "method": "GET"},
		"histogram": string(enc),
	}
	write(dir, "load.json", load)
	must(os.WriteFile(filepath.Join(dir, "load.hlog"), logBuf.Bytes(), 0o644))
	write(dir, "cpu_work.json", map[string]any{"iterations": 4000, "ns_per_call_median": 1093.4, "ns_per_call_min": 1071.2, "ns_per_call_max": 1188.9, "runs": 15, "cpu_ns_per_call_median": 1088.6})
	write(dir, "cpu_work_target.json", map[string]any{"iterations": 2707, "target_ns": 740, "ns_per_call_median": 741.8, "ns_per_call_min": 728.5, "ns_per_call_max": 802.3, "runs": 15, "cpu_ns_per_call_median": 739.6})
	write(dir, "server_cpu_loaded.json", map[string]any{"version": 1, "pid": 4242, "phase": "loaded", "delay_s": 2, "window_s": 17.003,
		"cpu_s": 20.91, "core_fraction": 20.91 / 17.003, "resolution_s": 0.01, "machine_busy_cores": 1.97})
	write(dir, "server_cpu_idle.json", map[string]any{"version": 1, "pid": 4242, "phase": "idle", "delay_s": 1, "window_s": 5.001,
		"cpu_s": 0.01, "core_fraction": 0.01 / 5.001, "resolution_s": 0.01})
	var cases []map[string]any
	add := func(family, name, strategy string, stages, batch, spin int, ns, cpu float64) {
		cases = append(cases, map[string]any{"family": family, "name": name, "impl": "pipeline", "strategy": strategy, "stages": stages,
			"batch": batch, "spin_iters": spin, "ns_per_item": ns, "items_per_sec": 1e9 / ns, "cpu_ns_per_item": cpu})
	}
	add("single_stage_spin", "spin4000", "WaitIfStageEmpty", 1, 0, 4000, 1131.7, 2204.9)
	for i, b := range []int{1, 4, 16, 64, 256} {
		ns := []float64{212.4, 96.3, 61.8, 55.2, 54.1}[i]
		add("batch_size", fmt.Sprintf("batch%d", b), "WaitIfStageEmpty", 1, b, 10, ns, ns*1.9)
	}
	add("wait_strategy", "WaitIfStageEmpty", "WaitIfStageEmpty", 2, 4, 10, 388.6, 512.3)
	add("wait_strategy", "WaitIfUpstreamIdle", "WaitIfUpstreamIdle", 2, 4, 10, 301.2, 598.8)
	add("wait_strategy", "Never", "Never", 2, 4, 10, 262.9, 789.4)
	write(dir, "bench_pipeline.json", map[string]any{"cases": cases, "idle": []map[string]any{
		{"strategy": "WaitIfStageEmpty", "core_fraction": 0.0}, {"strategy": "WaitIfUpstreamIdle", "core_fraction": 0.0}, {"strategy": "Never", "core_fraction": 1.98}}})
	write(dir, "manifest.json", map[string]any{
		"version": 1, "started_at": "2026-11-30T01:30:00Z", "finished_at": "2026-11-30T01:31:10Z", "duration_s": seconds, "quick": true,
		"machine": map[string]any{"cpu_model": "Synthetic CPU @ 2.20GHz", "cores": 2, "kernel": "Linux 6.8.0", "go_version": "go1.26.8",
			"gomaxprocs": 2, "os": "linux", "arch": "amd64"},
		"config": map[string]any{"path": "testdata/test_benchmark_config.toml", "values": map[string]any{
			"server": map[string]any{"io_threads": 8, "max_request_size_bytes": 1048576, "event_batch_size": 32,
				"interfaces": []any{map[string]any{"type": "tcp", "address": "0.0.0.0", "port": 8123}, map[string]any{"type": "unix", "path": "weaseldb.sock"}}},
			"commit":    map[string]any{"pipeline_wait_strategy": "WaitIfUpstreamIdle", "pipeline_release_threads": 1},
			"benchmark": map[string]any{"ok_resolve_iterations": 4000}}},
		"steps": []map[string]any{
			{"name": "build", "command": "make build", "exit_code": 0, "wall_s": 3.2},
			{"name": "cpu_work", "command": "build/bench_cpu_work 4000 --json RUN/cpu_work.json", "exit_code": 0, "wall_s": 2.1},
			{"name": "cpu_work_target", "command": "build/bench_cpu_work --target 740ns --json RUN/cpu_work_target.json", "exit_code": 0, "wall_s": 2.4},
			{"name": "server", "command": "build/weaseldb --config testdata/test_benchmark_config.toml", "exit_code": 0, "wall_s": 29.5},
			{"name": "load", "command": "build/load_tester --unix-socket weaseldb.sock --concurrency 2000 --requests-per-conn 500 --connect-threads 2 --network-threads 10 --duration 20 --stats-interval 1 --json RUN/load.json --hdr-log RUN/load.hlog", "exit_code": 0, "wall_s": 20.6},
			{"name": "bench_pipeline", "command": "build/bench_pipeline --quick --json RUN/bench_pipeline.json", "exit_code": 0, "wall_s": 11.8}},
		"server_exit_code": 0, "nofile_limit": "65536", "server_gomaxprocs": "10"})
}

func write(dir, name string, v any) {
	data, err := json.MarshalIndent(v, "", "  ")
	must(err)
	must(os.WriteFile(filepath.Join(dir, name), append(data, '\n'), 0o644))
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
