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

	"weaseldb/artifacts"
	"weaseldb/loadtester/result"
)

// The seed report's published figures (the seed's threading performance report):
// the C++ server on a larger machine, 8 I/O threads, a load tester of 2000
// connections in all over 10 network threads and 8 connect threads. The
// seed's own reproduce_threading_report.sh runs that load tester with 2
// connect threads (SeedScriptConnectThreads), not the 8 its report lists.
const (
	SeedRequestsPerSec       = 825000
	SeedEfficiencyPct        = 61
	SeedTheoreticalMaxNs     = 1212 // 1e9 ns ÷ 825,000 req/s, as the seed rounds it
	SeedWorkNs               = 740
	SeedWorkIterations       = 4000
	SeedIOThreads            = 8
	SeedNetworkThreads       = 10
	SeedConnectThreads       = 8
	SeedScriptConnectThreads = 2
	SeedConnections          = 2000
	SeedRequestsPerConn      = 500
	SeedRunSeconds           = 30
	seedArtifact             = "seed report"
	seedReportReference      = "the seed's threading performance report (reproduce_threading_report.sh where the field names it)"
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
	if run.IsFunctional() {
		// Its CPUs were virtual: no figure of speed from it may appear in
		// a performance report. GenerateFunctional renders it.
		return nil, errors.New("generate report: the run's CPUs were virtual (manifest.json virtual): it is a functional check, rendered by GenerateFunctional")
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
	cited   map[string]*Figure // sources printed so far, by name
	out     strings.Builder
	imgRel  string
	imgDir  string
	images  []string
	command string

	setups []*setupNumbers // one per setup, in setups.json's order
	cal    *calNumbers
}

func (w *writer) p(format string, args ...any) { fmt.Fprintf(&w.out, format, args...) }

func (w *writer) render() error {
	w.collect()
	sections := []func() error{
		w.header, w.summary, w.roundsSection, w.calibrationSection, w.performance, w.architecture, w.dedicatedSection,
		w.healthCheck, w.idleCPU, w.pipelineBench, w.waitStrategiesSection, w.rateCurveSection, w.stageWaitSection, w.sustainedSection, w.seedComparison,
		w.testConfiguration, w.sources,
	}
	for _, s := range sections {
		if err := s(); err != nil {
			return err
		}
	}
	return nil
}

// cite prints a source as a numbered figure: its text and its source
// number. The first print numbers it; later prints of the same source (by
// name) reuse that number. A nil source is "not measured".
func (w *writer) cite(s *source) string {
	if s == nil {
		return "not measured"
	}
	if w.cited == nil {
		w.cited = map[string]*Figure{}
	}
	f, ok := w.cited[s.name]
	if !ok {
		var nf Figure
		if s.formula != "" {
			nf = w.book.derive(s.name, s.value, s.unit, s.prec, s.formula)
		} else {
			nf = w.book.add(s.name, s.value, s.scale, s.unit, s.prec, s.artifact, s.field)
		}
		f = &nf
		w.cited[s.name] = f
	}
	return f.Ref()
}

// machineCPUs is how many CPUs the machine has, from the manifest.
func (w *writer) machineCPUs() int { return w.run.Manifest.Machine.Cores }

// collect computes every setup's numbers and the calibration's.
func (w *writer) collect() {
	w.cal = collectCalibration(w.run.Calibrations)
	for _, v := range w.run.Views {
		w.setups = append(w.setups, collectSetup(v, w.workNs(v.Setup), w.machineCPUs()))
	}
}

// workNs is the CPU work of one /ok request of a setup: the median timed
// cost, scaled when the server spins another count than was timed (the cost
// is linear). 0 when not measured.
func (w *writer) workNs(s artifacts.Setup) float64 {
	c := w.cal
	if c.timed == nil {
		return 0
	}
	ns := c.timed.median.printed()
	if s.OkIterations > 0 && c.timedIters > 0 && s.OkIterations != c.timedIters {
		ns = ns / float64(c.timedIters) * float64(s.OkIterations)
	}
	return ns
}

// workSource is workNs as a printable source.
func (w *writer) workSource(s artifacts.Setup) *source {
	c := w.cal
	if c.timed == nil {
		return nil
	}
	if s.OkIterations > 0 && c.timedIters > 0 && s.OkIterations != c.timedIters {
		return derived(fmt.Sprintf("CPU work per /ok request (scaled to %d iterations)", s.OkIterations), w.workNs(s), "ns", 0,
			fmt.Sprintf("the timed median ÷ %d iterations × ok_resolve_iterations %d", c.timedIters, s.OkIterations))
	}
	return c.timed.median
}

// intervalExtremes returns the indexes of the slowest and fastest intervals.
func intervalExtremes(ivs []result.Interval) (lo, hi int, ok bool) {
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
