package reports

import (
	"fmt"
	"image/color"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"weaseldb/artifacts"
	"weaseldb/internal/affinity"
	"weaseldb/internal/numfmt"
)

// WaitCoresPNG is the plot of the server runs across wait strategies, shared
// against dedicated cores.
const WaitCoresPNG = "wait_strategies_cores.png"

// waitStrategiesSection renders wait_strategies.json: the server and
// bench_pipeline per strategy on shared and dedicated cores, the runs skipped
// for want of CPUs, and a plot of the server runs.
func (w *writer) waitStrategiesSection() error {
	w.p("### Wait strategies on shared and dedicated cores\n\n")
	ws := w.run.WaitStrategies
	if ws == nil || len(ws.Runs) == 0 {
		w.p("_Not run: this run has no `%s` (server runs across wait strategies on shared and dedicated cores; `scripts/compare_wait_strategies.sh`)._\n\n", artifacts.WaitStrategiesFile)
		return nil
	}
	w.p("Each wait strategy of the commit pipeline, on shared cores (nothing pinned) and on dedicated cores (each hot thread pinned to a CPU of its own), planned from the CPUs this process could use (%s). ", ws.AllowedCPUs)
	w.p("Server runs: %s s of `load_tester` load on `/ok` (%d connections over the unix socket) after %s s of warm-up, then %s s idle with %d keep-alive connections open. ",
		numfmt.Format(ws.DurationS, 1), ws.Concurrency, numfmt.Format(ws.WarmupS, 1), numfmt.Format(ws.IdleS, 1), ws.IdleConns)
	w.p("Every number is a field of `%s` (the row's Field column); CPU is the kernel's accounting of the whole process (all threads).\n\n", artifacts.WaitStrategiesFile)
	if ws.Note != "" {
		w.p("%s\n\n", ws.Note)
	}
	w.waitServerTable(ws)
	w.waitPipelineTable(ws)
	w.waitNotMeasured(ws)
	idx := measuredRuns(ws, artifacts.BenchServer)
	if len(idx) == 0 {
		w.p("_No server run was measured: no plot._\n\n")
	} else if err := w.image(WaitCoresPNG, "Server req/s and CPU per request per wait strategy, shared and dedicated cores",
		func(p string) error { return plotWaitCores(p, ws, idx) }); err != nil {
		return err
	}
	return w.waitLatencySection(ws)
}

func (w *writer) waitServerTable(ws *artifacts.WaitStrategies) {
	idx := measuredRuns(ws, artifacts.BenchServer)
	if len(idx) == 0 {
		return
	}
	w.p("**weaseldb under load** (server CPU per request = server CPU over the measured window ÷ requests):\n\n")
	w.p("| strategy | cores | req/s | p50 µs | p99 µs | server CPU ns/request | client CPU ns/request | idle CPU %% of one core | GOMAXPROCS | field |\n")
	w.p("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, i := range idx {
		r := ws.Runs[i]
		w.p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | `runs[%d]` |\n", r.Strategy, coresLabel(r),
			optNumber(r.Throughput, 1, 0), optNumber(r.P50Ns, 1e-3, 1), optNumber(r.P99Ns, 1e-3, 1),
			optNumber(r.CPUNsPerOp, 1, 0), optNumber(r.ClientCPUNsPerRequest, 1, 0), optNumber(r.IdleCoreFraction, 100, 2),
			optInt(r.GOMAXPROCS), i)
	}
	w.p("\n")
	for _, i := range idx {
		if r := ws.Runs[i]; r.Unfinished > 0 || r.Dropped > 0 {
			w.p("> **%s on %s cores is not a clean sample**: %d requests were unfinished and %d dropped (`runs[%d]`), so its req/s is not the server's speed.\n\n",
				r.Strategy, r.Cores, r.Unfinished, r.Dropped, i)
		}
	}
}

func (w *writer) waitPipelineTable(ws *artifacts.WaitStrategies) {
	idx := measuredRuns(ws, artifacts.BenchPipeline)
	if len(idx) == 0 {
		return
	}
	w.p("**bench_pipeline, wait_strategy family** (2 stages, batch 4, 10 spin iterations per item per stage; no per-item latency is recorded):\n\n")
	w.p("| strategy | cores | items/s | CPU ns/item | idle CPU %% of one core | field |\n|---|---|---|---|---|---|\n")
	for _, i := range idx {
		r := ws.Runs[i]
		w.p("| %s | %s | %s | %s | %s | `runs[%d]` |\n", r.Strategy, coresLabel(r),
			optNumber(r.Throughput, 1, 0), optNumber(r.CPUNsPerOp, 1, 1), optNumber(r.IdleCoreFraction, 100, 2), i)
	}
	w.p("\n")
}

// waitNotMeasured lists skipped and failed runs with their reasons.
func (w *writer) waitNotMeasured(ws *artifacts.WaitStrategies) {
	var lines []string
	for i, r := range ws.Runs {
		if r.Status == artifacts.StatusMeasured {
			continue
		}
		lines = append(lines, fmt.Sprintf("- %s %s, %s cores: **%s**: %s (`runs[%d]`)", r.Bench, r.Strategy, r.Cores, r.Status, r.Reason, i))
	}
	if len(lines) == 0 {
		return
	}
	w.p("Not measured (nothing is estimated in their place):\n\n%s\n\n", strings.Join(lines, "\n"))
	if len(measuredRuns(ws, artifacts.BenchServer)) > 0 && !hasMeasured(ws, artifacts.CoresDedicated) {
		w.p("Only shared cores were measured: there the spinning strategies (`WaitIfUpstreamIdle`, `Never`) compete with the load tester and with each other for the same CPUs, while they are meant for dedicated cores.\n\n")
	}
}

func coresLabel(r artifacts.WaitRun) string {
	if r.Cores == artifacts.CoresDedicated && r.CPUPlan != "" {
		return fmt.Sprintf("dedicated (%s%s)", r.CPUPlan, placementNote(r.Placement, r.PlacementGaveUp, r.IRQWarnings))
	}
	return r.Cores
}

// placementNote says which physical cores and NUMA nodes a dedicated run's
// threads used (from its plan's lines, "io 0 cpu=2 core=2 node=0 idle=3"),
// what the plan gave up, and how many network interrupts may land on them;
// "" for a run planned before placement was recorded.
func placementNote(lines, gaveUp, irqs []string) string {
	var cores, nodes []int
	idle := 0
	for _, l := range lines {
		var core, node int
		_, after, ok := strings.Cut(l, " core=")
		if !ok {
			continue
		}
		if _, err := fmt.Sscanf(after, "%d node=%d", &core, &node); err != nil {
			continue
		}
		cores, nodes = append(cores, core), append(nodes, node)
		if !strings.HasSuffix(l, "idle=none") {
			idle++
		}
	}
	if len(cores) == 0 {
		return ""
	}
	note := fmt.Sprintf("; physical cores %s, node %s", affinity.FormatCPUList(slices.Sorted(slices.Values(cores))),
		affinity.FormatCPUList(slices.Compact(slices.Sorted(slices.Values(nodes)))))
	if idle > 0 {
		note += fmt.Sprintf(", %d with their hyper-threads left idle", idle)
	}
	if len(gaveUp) > 0 {
		note += "; gave up " + strings.Join(gaveUp, "; ")
	}
	if len(irqs) > 0 {
		note += fmt.Sprintf("; %d network interrupts may land on these CPUs (irq_warnings)", len(irqs))
	}
	return note
}

// optNumber prints v × scale, or "not measured".
func optNumber(v *float64, scale float64, prec int) string {
	if v == nil {
		return "not measured"
	}
	return numfmt.Format(*v*scale, prec)
}

func optInt(n int) string {
	if n == 0 {
		return "n/a"
	}
	return fmt.Sprint(n)
}

// plotWaitCores draws the server runs' req/s and CPU per request per
// strategy, a bar per kind of cores side by side.
func plotWaitCores(path string, ws *artifacts.WaitStrategies, idx []int) error {
	var strategies []string
	for _, i := range idx {
		if !slices.Contains(strategies, ws.Runs[i].Strategy) {
			strategies = append(strategies, ws.Runs[i].Strategy)
		}
	}
	slices.SortStableFunc(strategies, func(a, b string) int { return strategyOrder(a) - strategyOrder(b) })
	series := []struct {
		cores string
		color color.Color
	}{{artifacts.CoresShared, colorBlue}, {artifacts.CoresDedicated, colorOrange}}
	rate := plot.New()
	rate.Title.Text = "Server throughput (wait_strategies.json)"
	rate.Y.Label.Text = "thousand req/s"
	cpu := plot.New()
	cpu.Title.Text = "Server CPU per request (wait_strategies.json)"
	cpu.Y.Label.Text = "CPU µs per request"
	width := vg.Points(22)
	var present []int // series with at least one measured run
	for k, s := range series {
		for _, i := range idx {
			if ws.Runs[i].Cores == s.cores {
				present = append(present, k)
				break
			}
		}
	}
	for n, k := range present {
		s := series[k]
		rv := make(plotter.Values, len(strategies))
		cv := make(plotter.Values, len(strategies))
		for _, i := range idx {
			r := ws.Runs[i]
			j := slices.Index(strategies, r.Strategy)
			if r.Cores != s.cores || j < 0 {
				continue
			}
			if r.Throughput != nil {
				rv[j] = *r.Throughput / 1e3
			}
			if r.CPUNsPerOp != nil {
				cv[j] = *r.CPUNsPerOp / 1e3
			}
		}
		// Bars of one strategy sit side by side around its tick.
		offset := width * vg.Length(2*n-len(present)+1) / 2
		for _, pv := range []struct {
			p    *plot.Plot
			v    plotter.Values
			prec int
		}{{rate, rv, 1}, {cpu, cv, 2}} {
			bars, err := plotter.NewBarChart(pv.v, width)
			if err != nil {
				return fmt.Errorf("wait-strategy plot: %w", err)
			}
			bars.Color = s.color
			bars.LineStyle.Width = 0
			bars.Offset = offset
			pv.p.Add(bars)
			pv.p.Legend.Add(s.cores+" cores", bars)
			if labels, err := barLabels(pv.v, pv.prec, offset); err == nil {
				pv.p.Add(labels)
			}
		}
	}
	for _, p := range []*plot.Plot{rate, cpu} {
		p.Add(plotter.NewGrid())
		p.NominalX(strategies...)
		p.X.Min, p.X.Max = -0.6, float64(len(strategies))-0.4
		p.Y.Min = 0
		p.Y.Max *= 1.3 // room for the value labels and the legend
		p.Legend.Top = true
	}
	return savePNG(path, widePlotWidthIn, widePlotHeightIn, rate, cpu)
}

// barLabels prints each bar's value above it (the values differ by orders of
// magnitude, so small bars would otherwise be unreadable).
func barLabels(v plotter.Values, prec int, offset vg.Length) (*plotter.Labels, error) {
	xys := make(plotter.XYs, len(v))
	text := make([]string, len(v))
	for i, y := range v {
		xys[i] = plotter.XY{X: float64(i), Y: y}
		text[i] = numfmt.Format(y, prec)
	}
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: text})
	if err != nil {
		return nil, err
	}
	for i := range l.TextStyle {
		l.TextStyle[i].XAlign = draw.XCenter
		l.TextStyle[i].YAlign = draw.YBottom
		l.Offset = vg.Point{X: offset}
	}
	return l, nil
}
