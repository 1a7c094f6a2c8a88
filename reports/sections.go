package reports

import (
	"fmt"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"weaseldb/loadtester"
)

// histogramStats is the load result's decoded histogram, or why it is missing.
type histogramStats struct {
	h   *hdrhistogram.Histogram
	err error
}

// latencyRows are the load tester's own percentiles, in the order printed.
var latencyRows = []struct {
	label, field string
	get          func(loadtester.Latency) int64
}{
	{"p50", "latency_ns.p50", func(l loadtester.Latency) int64 { return l.P50 }},
	{"p90", "latency_ns.p90", func(l loadtester.Latency) int64 { return l.P90 }},
	{"p99", "latency_ns.p99", func(l loadtester.Latency) int64 { return l.P99 }},
	{"p99.9", "latency_ns.p999", func(l loadtester.Latency) int64 { return l.P999 }},
}

// latencyUnit is the unit every latency of one report is printed in: ms when
// the median is above 10 ms (closed-loop runs with thousands of connections),
// µs otherwise.
type latencyUnit struct {
	name  string
	scale float64 // unit per nanosecond
	prec  int
}

func chooseLatencyUnit(p50Ns float64) latencyUnit {
	if p50Ns >= 10e6 {
		return latencyUnit{name: "ms", scale: 1e-6, prec: 2}
	}
	return latencyUnit{name: "µs", scale: 1e-3, prec: 1}
}

func (w *writer) latency() error {
	r := w.run
	w.p("### Latency\n\n")
	w.p("Closed-loop latency of every request, as the load tester measured it (`load.json` `latency_ns`; p99.99 from its `histogram`).\n\n")
	u := chooseLatencyUnit(float64(r.Load.Latency.P50))
	w.p("| percentile | latency |\n|---|---|\n")
	for _, row := range latencyRows {
		f := w.book.add("Latency "+row.label, float64(row.get(r.Load.Latency)), u.scale, u.name, u.prec, LoadFile, row.field)
		w.p("| %s | %s |\n", row.label, f.Ref())
	}
	if w.hist.h != nil {
		f := w.book.add("Latency p99.99", float64(w.hist.h.ValueAtQuantile(99.99)), u.scale, u.name, u.prec, LoadFile, "histogram:q=99.99")
		w.p("| p99.99 | %s |\n", f.Ref())
	}
	maxF := w.book.add("Latency max", float64(r.Load.Latency.Max), u.scale, u.name, u.prec, LoadFile, "latency_ns.max")
	w.p("| max | %s |\n\n", maxF.Ref())
	if w.hist.h == nil {
		w.p("_No latency plots: the load result's histogram could not be decoded (%v)._\n\n", w.hist.err)
	} else {
		if err := w.image(SpectrumPNG, "Latency percentile spectrum", func(p string) error { return plotSpectrum(p, w.hist.h, u) }); err != nil {
			return err
		}
		if err := w.image(HistogramPNG, "Latency histogram", func(p string) error { return plotHistogram(p, w.hist.h, u) }); err != nil {
			return err
		}
	}
	if log := r.HdrLog; log != nil {
		w.p("The HdrHistogram interval log (`%s`) holds %s intervals and %s requests in all.\n\n",
			HdrLogFile,
			w.book.add("HDR log intervals", float64(len(log.Intervals)), 1, "", 0, HdrLogFile, "hdrlog:intervals").Ref(),
			w.book.add("HDR log requests", float64(log.Total.TotalCount()), 1, "", 0, HdrLogFile, "hdrlog:total_count").Ref())
		if err := w.image(LatencyOverTimePNG, "Latency per interval", func(p string) error { return plotLatencyOverTime(p, log, u) }); err != nil {
			return err
		}
	} else {
		w.p("_No HdrHistogram interval log (`%s`) in this run._\n\n", HdrLogFile)
	}
	return nil
}

// threadCounts is what runs on the machine during the load.
type threadCounts struct {
	io, release, pipeline, network, connect int
	strategy                                string
}

func (w *writer) threads() threadCounts {
	t := threadCounts{release: 1, strategy: "(server default)"}
	if w.ioThreads != nil {
		t.io = int(w.ioThreads.Value)
	}
	if v, ok := w.configValue("commit.pipeline_release_threads"); ok {
		if n, isNum := v.(float64); isNum {
			t.release = int(n)
		}
	}
	if v, ok := w.configValue("commit.pipeline_wait_strategy"); ok {
		if s, isStr := v.(string); isStr {
			t.strategy = s
		}
	}
	t.pipeline = 3 + t.release
	if n, ok := w.run.loadConfig()["network_threads"].(float64); ok {
		t.network = int(n)
	}
	if n, ok := w.run.loadConfig()["connect_threads"].(float64); ok {
		t.connect = int(n)
	}
	return t
}

func (w *writer) architecture() error {
	t := w.threads()
	cores := w.run.Manifest.Machine.Cores
	w.p("### Threading Architecture\n\n")
	w.p("The server's design (shared/DESIGN.md), with this run's thread counts from its config:\n\n")
	w.p("```\n")
	w.p("I/O loops (%d, one epoll instance each; every listener in every loop, EPOLLEXCLUSIVE)\n", t.io)
	w.p("  -> one batch push per read batch\n")
	w.p("Commit pipeline (ring of slots, wait strategy %s):\n", t.strategy)
	w.p("  Sequence (1) -> Resolve (1, spins ok_resolve_iterations for /ok) -> Persist (1) -> Release (%d)\n", t.release)
	w.p("  -> response handed back to the connection's owning loop -> writev\n")
	w.p("```\n\n")
	w.p("- Server: %d I/O threads + %d pipeline threads = %d threads\n", t.io, t.pipeline, t.io+t.pipeline)
	w.p("- Load tester on the same machine: %d network threads + %d connect threads\n", t.network, t.connect)
	total := t.io + t.pipeline + t.network
	if cores > 0 && total > cores {
		w.p("- **Oversubscribed:** about %d threads that want a core compete for %d cores (`manifest.json` machine.cores). This is the seed's setup (test_benchmark_config.toml's io_threads = %d, 10 load-tester network threads) run on a smaller machine; it lowers throughput and inflates tail latency, and the numbers below must be read that way.\n", total, cores, t.io)
	}
	w.p("\n")
	return nil
}

func (w *writer) healthCheck() error {
	w.p("### Health Check Pipeline (/ok endpoint)\n\n")
	w.p("- **Throughput**: %s\n", ref(w.rps))
	w.p("- **Configurable CPU work**: %s", ref(w.workNs))
	if w.iterations != nil {
		w.p(" (%s, timed by `bench_cpu_work`", ref(w.iterations))
		if cw := w.run.CPUWork; cw != nil && cw.WallNsPerCallMedian > 0 {
			w.p("; median CPU time per call, which preemption on a busy machine does not inflate; the median wall time was %s",
				w.book.add("Wall time per call of the CPU work", cw.WallNsPerCallMedian, 1, "ns", 0, CPUWorkFile, "wall_ns_per_call_median").Ref())
		}
		w.p(")")
	}
	w.p("\n")
	if t := w.run.CPUWorkTarget; t != nil {
		target := t.TargetNs
		if target == 0 {
			target = SeedWorkNs
		}
		cost, field := t.NsPerCallMedian, "ns_per_call_median"
		w.targetIters = fig(w.book.add("Iterations costing the target", float64(t.Iterations), 1, "iterations", 0, CPUWorkTargetFile, "iterations"))
		w.p("- **Calibration**: %s cost %s here (the seed's %d ns took %d iterations)\n",
			w.targetIters.Ref(),
			w.book.add("Cost of the calibrated iterations", cost, 1, "ns", 0, CPUWorkTargetFile, field).Ref(),
			int(target), SeedWorkIterations)
		w.calibrationCheck(t)
	}
	w.p("- **Theoretical maximum CPU time per request at this throughput**: %s (1,000,000,000 ns ÷ requests/s: the time the single resolve thread has per request)\n", ref(w.theoMax))
	w.p("- **CPU work efficiency**: %s (CPU work ÷ theoretical maximum: the share of the resolve thread's time spent on the configured work)\n", ref(w.efficiency))
	if w.cpuPerReq != nil {
		w.p("- **Server CPU per request, all threads**: %s (%s of CPU while loaded ÷ requests/s)", ref(w.cpuPerReq), ref(w.loadedCores))
		if w.workNs != nil {
			share := w.book.derive("Share of server CPU spent on the configured work", w.workNs.Value/w.cpuPerReq.Value*100, "%", 1, "CPU work per request ÷ server CPU per request")
			w.p("; the configured work is %s of it", share.Ref())
		}
		w.p("\n")
	}
	w.boundLine()
	w.p("- **Pipeline stages**: Sequence (versions, request-id dedupe) → Resolve (CPU work) → Persist (response) → Release (send)\n")
	w.p("- **CPU usage when idle**: %s\n\n", ref(w.idleCores))
	return nil
}

func (w *writer) idleCPU() error {
	w.p("### CPU Usage When Idle\n\n")
	l, i := w.run.ServerLoaded, w.run.ServerIdle
	if l == nil && i == nil {
		w.p("_Not measured: neither `%s` nor `%s` is in this run._\n\n", ServerCPULoaded, ServerCPUIdle)
		return nil
	}
	w.p("The server's CPU time was read from `/proc/<pid>/stat` (resolution 10 ms) while the load ran and again after it stopped.\n\n")
	w.p("| phase | window | server CPU | artifact |\n|---|---|---|---|\n")
	if l != nil {
		win := w.book.add("Loaded CPU window", l.WindowS, 1, "s", 1, ServerCPULoaded, "window_s")
		w.p("| under load | %s | %s | `%s` |\n", win.Ref(), ref(w.loadedCores), ServerCPULoaded)
	}
	if i != nil {
		win := w.book.add("Idle CPU window", i.WindowS, 1, "s", 1, ServerCPUIdle, "window_s")
		used := w.book.add("Idle CPU time used", i.CPUS, 1e3, "ms", 0, ServerCPUIdle, "cpu_s")
		w.p("| idle, after the load | %s | %s (%s in all) | `%s` |\n", win.Ref(), ref(w.idleCores), used.Ref(), ServerCPUIdle)
	}
	w.p("\n")
	if i != nil {
		if i.CoreFraction <= 0.01 {
			w.p("Idle CPU is at the noise floor: the pipeline threads block (futex) instead of spinning once the load is gone.\n\n")
		} else {
			w.p("**Idle CPU is not zero**: something keeps spinning or polling after the load (wait strategy `%s`).\n\n", w.threads().strategy)
		}
	}
	return nil
}

func (w *writer) pipelineBench() error {
	w.p("### Pipeline micro-benchmarks (bench_pipeline)\n\n")
	pb := w.run.Pipeline
	if pb == nil {
		w.p("_Not measured: `%s` is not in this run._\n\n", PipelineBenchFile)
		return nil
	}
	w.p("Every row is one case of `%s`; the Field column names it, and the numbers are that case's fields.\n\n", PipelineBenchFile)
	w.p("| family | case | strategy | stages | batch | spin iters | ns/item | items/s | CPU ns/item | field |\n")
	w.p("|---|---|---|---|---|---|---|---|---|---|\n")
	for i, c := range pb.Cases {
		w.p("| %s | %s | %s | %d | %d | %d | %s | %s | %s | `cases[%d]` |\n", c.Family, caseLabel(c), c.Strategy, c.Stages, c.Batch, c.SpinIters,
			FormatNumber(c.NsPerItem, 1), FormatNumber(c.ItemsPerSec, 0), FormatNumber(c.CPUNsPerItem, 1), i)
	}
	w.p("\n")
	if len(pb.Idle) > 0 {
		w.p("Idle CPU of a pipeline with nothing to do, per strategy (`%s` `idle`):\n\n| strategy | idle CPU | field |\n|---|---|---|\n", PipelineBenchFile)
		for i, s := range pb.Idle {
			w.p("| %s | %s%% of one core | `idle[%d]` |\n", s.Strategy, FormatNumber(s.CoreFraction*100, 2), i)
		}
		w.p("\n")
	}
	if idx := waitStrategyCases(pb); len(idx) > 0 {
		return w.image(WaitStrategiesPNG, "Wait strategy comparison", func(p string) error { return plotWaitStrategies(p, pb, idx) })
	}
	w.p("_No wait-strategy family in `%s`: no comparison plot._\n\n", PipelineBenchFile)
	return nil
}

func (w *writer) seedComparison() error {
	m := w.run.Manifest
	t := w.threads()
	w.p("## Where this run differs from the seed\n\n")
	w.p("| | seed | this run |\n|---|---|---|\n")
	w.p("| throughput | ~825k req/s | %s |\n", ref(w.rps))
	w.p("| CPU work efficiency | ~61%% | %s |\n", ref(w.efficiency))
	w.p("| CPU work per request | 740 ns (4000 iterations) | %s |\n", ref(w.workNs))
	w.p("| I/O threads | 8 | %s |\n", ref(w.ioThreads))
	w.p("| load duration | 30 s | %s requested |\n", w.book.add("Requested load duration", m.DurationS, 1, "s", 0, ManifestFile, "duration_s").Ref())
	w.p("| cores | not stated (a larger machine) | %d |\n\n", m.Machine.Cores)
	w.p("Why the numbers differ:\n\n")
	w.p("1. **Cores.** This machine has %d cores for %d server threads and %d load-tester threads. The seed's %d I/O threads assume a core each; here they time-share, and the load tester takes CPU from the same cores.", m.Machine.Cores, t.io+t.pipeline, t.network+t.connect, SeedIOThreads)
	if w.harnessBusy != nil {
		w.p(" During the load the server and the load tester together used %s of the %d cores.", ref(w.harnessBusy), m.Machine.Cores)
	}
	w.p("\n")
	if w.run.Load.ClientBound {
		w.p("2. **The client was the bottleneck**: the load tester flagged itself client-bound, so this throughput is a lower bound of the server's capacity.\n")
	} else {
		w.p("2. **The client shares the machine.** The load tester did not flag itself client-bound, but its CPU comes from the same cores as the server's.\n")
	}
	w.p("3. **Calibration.** The seed's 740 ns was 4000 iterations on its CPU; here 4000 iterations cost %s", ref(w.workNs))
	if w.targetIters != nil {
		w.p(" and 740 ns is %s", ref(w.targetIters))
	}
	w.p(". Efficiency uses the cost measured here.\n")
	w.p("4. **Implementation.** This is the Go server (epoll loops through golang.org/x/sys, a generic ring pipeline); the seed is C++. This run does not isolate that factor.\n")
	w.p("5. **Shared machine.** ")
	if w.machineBusy != nil && w.harnessBusy != nil {
		other := w.book.derive("Other processes' CPU under load", w.machineBusy.Value-w.harnessBusy.Value, "cores", 2,
			"server_cpu_loaded.json machine_busy_cores − (core_fraction + load.json client_cpu_cores)")
		w.p("Other processes used about %s during the load (whole machine %s minus server and load tester %s). ", other.Ref(), ref(w.machineBusy), ref(w.harnessBusy))
	} else {
		w.p("Other work may have run on the machine at the same time. ")
	}
	w.p("The per-interval throughput plot shows how steady the run was.\n\n")
	return nil
}

func (w *writer) testConfiguration() error {
	m := w.run.Manifest
	w.p("## Test Configuration\n\n")
	w.p("Machine (`%s` machine):\n\n| | |\n|---|---|\n", ManifestFile)
	w.p("| CPU | %s |\n| cores | %d |\n| kernel | %s |\n| Go | %s |\n| GOMAXPROCS (default here) | %d |\n", orNA(m.Machine.CPUModel), m.Machine.Cores,
		orNA(m.Machine.Kernel), orNA(m.Machine.GoVersion), m.Machine.GOMAXPROCS)
	if m.ServerGOMAXPROCS != "" {
		w.p("| GOMAXPROCS (the server's, from its log) | %s |\n", m.ServerGOMAXPROCS)
	}
	if g, ok := w.run.loadConfig()["gomaxprocs"].(float64); ok {
		w.p("| GOMAXPROCS (the load tester's) | %d |\n", int(g))
	}
	w.p("| OS/arch | %s/%s |\n", orNA(m.Machine.OS), orNA(m.Machine.Arch))
	if m.NofileLimit != "" {
		w.p("| open files limit | %s |\n", m.NofileLimit)
	}
	w.p("\nServer config `%s`", orNA(m.Config.Path))
	if m.Config.Source != "" {
		w.p(", a copy of `%s` with the TCP interface adjusted for a local run (the unix socket, which the load uses, is unchanged)", m.Config.Source)
	}
	w.p(" (`%s` config.values):\n\n| key | value |\n|---|---|\n", ManifestFile)
	for _, section := range sortedKeys(m.Config.Values) {
		if table, ok := m.Config.Values[section].(map[string]any); ok {
			for _, k := range sortedKeys(table) {
				w.p("| %s.%s | %s |\n", section, k, formatAny(table[k]))
			}
		} else {
			w.p("| %s | %s |\n", section, formatAny(m.Config.Values[section]))
		}
	}
	w.p("\nLoad tester flags (`%s` config):\n\n| flag | value |\n|---|---|\n", LoadFile)
	loadConfig := w.run.loadConfig()
	for _, k := range sortedKeys(loadConfig) {
		w.p("| %s | %s |\n", k, formatAny(loadConfig[k]))
	}
	w.p("\nCommands, in order, with exit status and wall time (`%s` steps). The server and the load tester ran in the run directory, where the config's relative unix socket path `weaseldb.sock` lands:\n\n```\n", ManifestFile)
	for _, s := range m.Steps {
		w.p("# %s: exit %d, %.1f s\n%s\n", s.Name, s.ExitCode, s.WallS, s.Command)
	}
	w.p("```\n\n")
	if m.ServerExitCode != nil {
		w.p("The server exited with status %d after SIGTERM.\n\n", *m.ServerExitCode)
	}
	return nil
}

func (w *writer) sources() error {
	w.p("## Sources\n\n")
	w.p("Every figure above, by its number. Field is a JSON path into the artifact (× a unit scale where the report changes units); derived figures give their formula; the seed's figures quote %s.\n\n", seedReportReference)
	w.p("| # | figure | value | artifact | field |\n|---|---|---|---|---|\n")
	for _, f := range w.book.list {
		field := "`" + f.Field + "`"
		if f.Derived || f.Artifact == seedArtifact {
			field = f.Field
		} else if f.Scale != 1 {
			field += fmt.Sprintf(" × %g", f.Scale)
		}
		w.p("| %d | %s | %s | %s | %s |\n", f.ID, f.Name, f.Text, f.Artifact, field)
	}
	w.p("\n")
	return nil
}

// boundLine says what limited throughput: the cores, when the machine was
// busy, or something else, when CPU was left over. It uses the whole
// machine's busy CPU when measured (other users count too), else the server
// and the load tester together.
func (w *writer) boundLine() {
	cores := float64(w.run.Manifest.Machine.Cores)
	busy := w.machineBusy
	if busy == nil {
		busy = w.harnessBusy
	}
	if busy == nil || cores <= 0 {
		return
	}
	w.p("- **What bounds throughput here**: ")
	if w.machineBusy != nil {
		w.p("the machine's cores were busy %s of %d on average during the load", ref(w.machineBusy), int(cores))
		if w.harnessBusy != nil {
			w.p(" (the server and the load tester: %s; the rest is other processes)", ref(w.harnessBusy))
		}
	} else {
		w.p("the server and the load tester together used %s of %d cores", ref(w.harnessBusy), int(cores))
	}
	if busy.Value >= 0.85*cores {
		w.p(", while the resolve thread spent %s of its time on the configured work: the shared cores, not the resolve stage, set the pace\n", ref(w.efficiency))
	} else {
		w.p(", so CPU was left over; the limit is elsewhere (a serial stage, the closed loop of the load tester's connections, or scheduling)\n")
	}
}

// calibrationCheck flags a calibration whose cost per iteration disagrees with
// the timing of ok_resolve_iterations: the spin's cost is linear, so the two
// should agree unless the machine was noisy during one of them.
func (w *writer) calibrationCheck(target *CPUWork) {
	work := w.run.CPUWork
	if work == nil || work.Iterations <= 0 || target.Iterations <= 0 {
		return
	}
	a, b := work.NsPerCallMedian/float64(work.Iterations), target.NsPerCallMedian/float64(target.Iterations)
	if math.Abs(a-b) <= 0.25*math.Max(a, b) {
		return
	}
	fa := w.book.derive("Cost per iteration, timed run", a, "ns", 3, "cpu_work.json ns_per_call_median ÷ iterations")
	fb := w.book.derive("Cost per iteration, calibration", b, "ns", 3, "cpu_work_target.json ns_per_call_median ÷ iterations")
	w.p("- **The calibration disagrees with the timed run**: %s per iteration in the timed run, %s in the calibration. The cost is linear in iterations, so one of the two is off (a busy machine, a changing clock, or a fixed per-call overhead); read the calibrated iteration count with caution\n", fa.Ref(), fb.Ref())
}
