package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"weaseldb/loadtester"
)

// The seed report's published figures (shared/seeds, threading_performance_report.md):
// the C++ server on a larger machine, 8 I/O threads, 10 load-tester network threads.
const (
	SeedRequestsPerSec  = 825000
	SeedEfficiencyPct   = 61
	SeedWorkNs          = 740
	SeedWorkIterations  = 4000
	SeedIOThreads       = 8
	SeedNetworkThreads  = 10
	SeedRunSeconds      = 30
	seedArtifact        = "seed report"
	seedReportReference = "shared/seeds threading_performance_report.md"
)

// Image file names, written next to the report in Options.ImageDir.
const (
	ThroughputPNG      = "throughput.png"
	SpectrumPNG        = "latency_spectrum.png"
	HistogramPNG       = "latency_histogram.png"
	LatencyOverTimePNG = "latency_over_time.png"
	WaitStrategiesPNG  = "wait_strategies.png"
)

// Options says where the report goes.
type Options struct {
	OutPath  string // the markdown file, e.g. reports/threading_performance_report.md
	ImageDir string // relative to OutPath's directory; default "img"
	Command  string // the generator's own command line, printed in the header
}

// Result lists what Generate wrote.
type Result struct {
	Markdown string
	Images   []string // absolute or OutPath-relative paths of the PNGs written
	Figures  []Figure
}

// Generate renders the report of run into opts.OutPath and its plots into
// opts.ImageDir.
func Generate(run *Run, opts Options) (*Result, error) {
	if opts.OutPath == "" {
		return nil, errors.New("generate report: no output path")
	}
	if opts.ImageDir == "" {
		opts.ImageDir = "img"
	}
	outDir := filepath.Dir(opts.OutPath)
	imgDir := filepath.Join(outDir, opts.ImageDir)
	if err := os.MkdirAll(imgDir, 0o755); err != nil {
		return nil, fmt.Errorf("generate report: %w", err)
	}
	w := &writer{run: run, imgRel: opts.ImageDir, imgDir: imgDir, command: opts.Command}
	if err := w.render(); err != nil {
		return nil, err
	}
	if err := os.WriteFile(opts.OutPath, []byte(w.out.String()), 0o644); err != nil {
		return nil, fmt.Errorf("write report: %w", err)
	}
	return &Result{Markdown: opts.OutPath, Images: w.images, Figures: w.book.list}, nil
}

// writer renders one report. Sections are methods so each stays short.
type writer struct {
	run     *Run
	book    figureBook
	out     strings.Builder
	imgRel  string
	imgDir  string
	images  []string
	command string

	// Figures shared between sections.
	rps, workNs, theoMax, efficiency, loadedCores, cpuPerReq, idleCores *Figure
	ioThreads, iterations, harnessBusy, machineBusy, targetIters        *Figure
	hist                                                                histogramStats
}

func (w *writer) p(format string, args ...any) { fmt.Fprintf(&w.out, format, args...) }

func (w *writer) render() error {
	w.collect()
	sections := []func() error{
		w.header, w.summary, w.throughput, w.latency, w.architecture, w.healthCheck,
		w.idleCPU, w.pipelineBench, w.waitStrategiesSection, w.seedComparison,
		w.testConfiguration, w.sources,
	}
	for _, s := range sections {
		if err := s(); err != nil {
			return err
		}
	}
	return nil
}

// fig keeps a pointer to a figure so later sections can cite it.
func fig(f Figure) *Figure { return &f }

// ref prints a figure with its source number, or "not measured".
func ref(f *Figure) string {
	if f == nil {
		return "not measured"
	}
	return f.Ref()
}

// configValue looks a key of the server config up in the manifest.
func (w *writer) configValue(path string) (any, bool) {
	v, err := LookupField(w.run.raw[ManifestFile], "config.values."+path)
	return v, err == nil
}

// collect computes the figures the summary and several sections share.
func (w *writer) collect() {
	r := w.run
	w.rps = fig(w.book.add("Throughput, whole run", r.Load.RequestsPerSec, 1, "req/s", 0, LoadFile, "requests_per_sec"))
	if v, ok := w.configValue("server.io_threads"); ok {
		if n, isNum := v.(float64); isNum {
			w.ioThreads = fig(w.book.add("I/O threads (io_threads)", n, 1, "", 0, ManifestFile, "config.values.server.io_threads"))
		}
	}
	iters := 0.0
	if v, ok := w.configValue("benchmark.ok_resolve_iterations"); ok {
		if n, isNum := v.(float64); isNum {
			iters = n
			w.iterations = fig(w.book.add("ok_resolve_iterations", n, 1, "iterations", 0, ManifestFile, "config.values.benchmark.ok_resolve_iterations"))
		}
	}
	if cw := r.CPUWork; cw != nil {
		cost, field := cw.NsPerCallMedian, "ns_per_call_median"
		if iters == 0 || int(iters) == cw.Iterations {
			w.workNs = fig(w.book.add(fmt.Sprintf("CPU work per /ok request (%d iterations, median)", cw.Iterations), cost, 1, "ns", 0, CPUWorkFile, field))
		} else if cw.Iterations > 0 {
			// The server spins a different count than was timed: scale, since the cost is linear.
			scaled := cost / float64(cw.Iterations) * iters
			w.workNs = fig(w.book.derive("CPU work per /ok request (scaled to ok_resolve_iterations)", scaled, "ns", 0,
				"cpu_work.json "+field+" ÷ iterations × ok_resolve_iterations"))
		}
	}
	if r.Load.RequestsPerSec > 0 {
		w.theoMax = fig(w.book.derive("Theoretical maximum CPU time per request", 1e9/r.Load.RequestsPerSec, "ns", 0, "1e9 ÷ load.json requests_per_sec"))
		if w.workNs != nil {
			w.efficiency = fig(w.book.derive("CPU work efficiency", w.workNs.Value/w.theoMax.Value*100, "%", 1, "CPU work per request ÷ theoretical maximum CPU time"))
		}
	}
	if s := r.ServerLoaded; s != nil {
		w.loadedCores = fig(w.book.add("Server CPU under load", s.CoreFraction, 1, "cores", 2, ServerCPULoaded, "core_fraction"))
		if r.Load.RequestsPerSec > 0 {
			w.cpuPerReq = fig(w.book.derive("Server CPU per request", s.CoreFraction*1e9/r.Load.RequestsPerSec, "ns", 0, "server_cpu_loaded.json core_fraction × 1e9 ÷ load.json requests_per_sec"))
		}
	}
	if s := r.ServerLoaded; s != nil && r.Load.ClientCPUCores > 0 {
		w.harnessBusy = fig(w.book.derive("Server and load tester CPU together", s.CoreFraction+r.Load.ClientCPUCores, "cores", 2,
			"server_cpu_loaded.json core_fraction + load.json client_cpu_cores"))
	}
	if s := r.ServerLoaded; s != nil && s.MachineBusyCores > 0 {
		w.machineBusy = fig(w.book.add("Whole machine's busy CPU under load", s.MachineBusyCores, 1, "cores", 2, ServerCPULoaded, "machine_busy_cores"))
	}
	if s := r.ServerIdle; s != nil {
		w.idleCores = fig(w.book.add("Server CPU when idle", s.CoreFraction, 100, "% of one core", 2, ServerCPUIdle, "core_fraction"))
	}
	if h, err := DecodeHistogram(r.Load.Histogram); err == nil {
		w.hist = histogramStats{h: h}
	} else {
		w.hist = histogramStats{err: err}
	}
}

func (w *writer) header() error {
	m := w.run.Manifest
	w.p("# WeaselDB Threading Performance Report (Go)\n\n")
	cmd := w.command
	if cmd == "" {
		cmd = "report"
	}
	w.p("_Generated by `%s` from the artifacts of one run (`%s`, started %s). ", cmd, filepath.Base(w.run.Dir), orNA(m.StartedAt))
	w.p("Every number carries a source number in brackets; the [Sources](#sources) table names the artifact and field it comes from._\n\n")
	var failed []string
	for _, s := range m.Steps {
		if s.ExitCode != 0 {
			failed = append(failed, fmt.Sprintf("`%s` (exit %d)", s.Name, s.ExitCode))
		}
	}
	if len(failed) > 0 {
		w.p("> **Warning: steps of this run failed:** %s. Figures from those steps are missing or suspect.\n\n", strings.Join(failed, ", "))
	}
	return nil
}

func (w *writer) summary() error {
	r, m := w.run, w.run.Manifest
	w.p("## Summary\n\n")
	w.p("On this machine (%s, %d cores), WeaselDB's `/ok` health check endpoint sustained **%s** over %s of load",
		orNA(m.Machine.CPUModel), m.Machine.Cores, ref(w.rps),
		ref(fig(w.book.add("Load duration", r.Load.DurationS, 1, "s", 1, LoadFile, "duration_s"))))
	if w.workNs != nil {
		w.p(", with %s of configurable CPU work per request", ref(w.workNs))
		if w.iterations != nil {
			w.p(" (%s)", ref(w.iterations))
		}
	}
	w.p(" through the 4-stage commit pipeline.")
	if w.efficiency != nil {
		w.p(" CPU work efficiency was %s.", ref(w.efficiency))
	}
	if w.idleCores != nil {
		w.p(" When the load stopped, the server used %s.", ref(w.idleCores))
	}
	w.p(" The configurable CPU work makes `/ok` both a health check that exercises the whole pipeline and a benchmark of per-request processing capacity.\n\n")
	ratio := w.book.derive("Throughput relative to the seed", r.Load.RequestsPerSec/SeedRequestsPerSec*100, "%", 1, "load.json requests_per_sec ÷ seed 825,000 req/s")
	seedRPS := w.book.add("Seed throughput", SeedRequestsPerSec, 1, "req/s", 0, seedArtifact, "Summary (~825k requests/second)")
	w.p("**Compared with the seed.** The seed report measured about %s and about %s CPU work efficiency with %s I/O threads. ",
		seedRPS.Ref(), w.book.add("Seed CPU work efficiency", SeedEfficiencyPct, 1, "%", 0, seedArtifact, "Health Check Pipeline (~61%)").Ref(),
		w.book.add("Seed I/O threads", SeedIOThreads, 1, "", 0, seedArtifact, "Throughput (8 I/O threads)").Ref())
	w.p("This run reached %s of the seed's throughput. The main reasons are listed in [Where this run differs from the seed](#where-this-run-differs-from-the-seed); the first is that this machine has %d cores shared by the server", ratio.Ref(), m.Machine.Cores)
	if w.machineBusy != nil && w.harnessBusy != nil && w.machineBusy.Value-w.harnessBusy.Value >= 0.2 {
		w.p(", the load tester and, during this run, other processes")
	} else {
		w.p(" and the load tester")
	}
	w.p(".\n\n")
	return nil
}

func (w *writer) throughput() error {
	r := w.run
	w.p("## Performance Metrics\n\n### Throughput\n\n")
	w.p("- **%s** on `/ok` through the 4-stage commit pipeline (%s requests, %s errors)\n", ref(w.rps),
		w.book.add("Requests completed", float64(r.Load.Requests), 1, "", 0, LoadFile, "requests").Ref(),
		w.book.add("Request errors", float64(r.Load.Errors), 1, "", 0, LoadFile, "errors").Ref())
	if w.ioThreads != nil {
		w.p("- %s I/O threads, one epoll instance each\n", ref(w.ioThreads))
	}
	if nt, ok := r.loadConfig()["network_threads"].(float64); ok {
		w.p("- Load tester used %s network threads\n", w.book.add("Load tester network threads", nt, 1, "", 0, LoadFile, "config.network_threads").Ref())
	}
	if lo, hi, ok := intervalExtremes(r.Load.Intervals); ok {
		w.p("- Per-interval throughput ranged from %s to %s over %d intervals\n",
			w.book.add("Lowest interval throughput", r.Load.Intervals[lo].RequestsPerSec, 1, "req/s", 0, LoadFile, fmt.Sprintf("intervals[%d].requests_per_sec", lo)).Ref(),
			w.book.add("Highest interval throughput", r.Load.Intervals[hi].RequestsPerSec, 1, "req/s", 0, LoadFile, fmt.Sprintf("intervals[%d].requests_per_sec", hi)).Ref(),
			len(r.Load.Intervals))
	}
	if len(r.Load.ErrorsByKind) > 0 {
		kinds := sortedKeys(r.Load.ErrorsByKind)
		var parts []string
		for _, k := range kinds {
			parts = append(parts, fmt.Sprintf("%s: %s", k, w.book.add("Errors: "+k, float64(r.Load.ErrorsByKind[k]), 1, "", 0, LoadFile, "errors_by_kind."+k).Ref()))
		}
		w.p("- Errors by kind: %s\n", strings.Join(parts, ", "))
	}
	if r.Load.ClientCPUCores > 0 {
		w.p("- Load tester CPU: %s on the same machine; client-bound: **%v**\n",
			w.book.add("Load tester CPU", r.Load.ClientCPUCores, 1, "cores", 2, LoadFile, "client_cpu_cores").Ref(), r.Load.ClientBound)
	} else {
		w.p("- Load tester CPU: %s of the machine; client-bound: **%v**\n",
			w.book.add("Load tester CPU fraction", r.Load.ClientCPUFraction, 100, "%", 1, LoadFile, "client_cpu_fraction").Ref(), r.Load.ClientBound)
	}
	if r.Load.Interrupted {
		w.p("- **The load test was interrupted** before its duration ended\n")
	}
	w.p("\n")
	if err := w.image(ThroughputPNG, "Throughput per interval", func(p string) error { return plotThroughput(p, r.Load) }); err != nil {
		return err
	}
	return nil
}

// intervalExtremes returns the indexes of the slowest and fastest intervals.
func intervalExtremes(ivs []loadtester.Interval) (lo, hi int, ok bool) {
	if len(ivs) == 0 {
		return 0, 0, false
	}
	for i, iv := range ivs {
		if iv.RequestsPerSec < ivs[lo].RequestsPerSec {
			lo = i
		}
		if iv.RequestsPerSec > ivs[hi].RequestsPerSec {
			hi = i
		}
	}
	return lo, hi, true
}

// image renders one plot and links it from the report.
func (w *writer) image(name, alt string, draw func(path string) error) error {
	path := filepath.Join(w.imgDir, name)
	if err := draw(path); err != nil {
		return fmt.Errorf("generate report: %w", err)
	}
	w.images = append(w.images, path)
	w.p("![%s](%s)\n\n", alt, filepath.ToSlash(filepath.Join(w.imgRel, name)))
	return nil
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// formatAny prints a config value for a table.
func formatAny(v any) string {
	switch x := v.(type) {
	case []any, map[string]any:
		data, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprintf("`%v`", x)
		}
		return "`" + string(data) + "`"
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return fmt.Sprintf("%d", int64(x))
		}
		return fmt.Sprintf("%g", x)
	case string:
		return "`" + x + "`"
	case nil:
		return "n/a"
	default:
		return fmt.Sprintf("`%v`", x)
	}
}
