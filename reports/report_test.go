package reports

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"weaseldb/loadtester"
	"weaseldb/server/pipeline/pipebench"
)

var update = flag.Bool("update", false, "rewrite testdata/report_run/golden_report.md")

const recordedRun = "../testdata/report_run"

// render generates the report of dir into a temp directory and returns its text.
func render(t *testing.T, dir string) (string, *Result) {
	t.Helper()
	run, err := LoadRun(dir)
	if err != nil {
		t.Fatalf("LoadRun(%s): %v", dir, err)
	}
	out := filepath.Join(t.TempDir(), "threading_performance_report.md")
	res, err := Generate(run, Options{OutPath: out, Command: "report --run RUN --out OUT"})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(data), res
}

func TestGoldenReport(t *testing.T) {
	md, _ := render(t, recordedRun)
	golden := filepath.Join(recordedRun, "golden_report.md")
	if *update {
		if err := os.WriteFile(golden, []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./reports -run TestGoldenReport -update to create it)", err)
	}
	if md != string(want) {
		t.Errorf("report differs from %s; rerun with -update after checking the change:\n%s", golden, firstDiff(string(want), md))
	}
}

// firstDiff shows the first differing line of two texts.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, x, y)
		}
	}
	return "(equal)"
}

func TestReportStructure(t *testing.T) {
	md, _ := render(t, recordedRun)
	headings := []string{
		"## Summary", "## Performance Metrics", "### Throughput", "### Latency", "### Threading Architecture",
		"### Health Check Pipeline (/ok endpoint)", "### CPU Usage When Idle", "### Pipeline micro-benchmarks (bench_pipeline)",
		"### Wait strategies on shared and dedicated cores", "## Where this run differs from the seed",
		"## Test Configuration", "## Sources",
	}
	last := -1
	for _, h := range headings {
		i := strings.Index(md, "\n"+h+"\n")
		if i < 0 {
			t.Errorf("missing heading %q", h)
			continue
		}
		if i < last {
			t.Errorf("heading %q out of order", h)
		}
		last = i
	}
	run, err := LoadRun(recordedRun)
	if err != nil {
		t.Fatal(err)
	}
	for _, phrase := range []string{"Oversubscribed", "825,000 req/s", "Only shared cores were measured", run.Manifest.Machine.CPUModel, "make build"} {
		if !strings.Contains(md, phrase) {
			t.Errorf("report lacks %q", phrase)
		}
	}
}

// sourceRow is one parsed row of the Sources table.
type sourceRow struct {
	id                          int
	name, text, artifact, field string
}

var sourceRowRE = regexp.MustCompile(`^\| (\d+) \| (.*) \| (.*) \| (.*) \| (.*) \|$`)

func parseSources(t *testing.T, md string) []sourceRow {
	t.Helper()
	_, table, ok := strings.Cut(md, "## Sources\n")
	if !ok {
		t.Fatal("no Sources section")
	}
	var rows []sourceRow
	for _, line := range strings.Split(table, "\n") {
		m := sourceRowRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		id, _ := strconv.Atoi(m[1])
		rows = append(rows, sourceRow{id: id, name: m[2], text: m[3], artifact: m[4], field: m[5]})
	}
	if len(rows) == 0 {
		t.Fatal("Sources table has no rows")
	}
	return rows
}

// splitValue splits "1,234.5 req/s" into its number, decimals and unit.
func splitValue(t *testing.T, text string) (float64, int, string) {
	t.Helper()
	num, unit, _ := strings.Cut(text, " ")
	v, dec, err := ParseNumber(num)
	if err != nil {
		t.Fatalf("value %q: %v", text, err)
	}
	return v, dec, unit
}

// closeTo accepts the rounding of a number printed with dec decimals.
func closeTo(got float64, dec int, want float64) bool {
	return math.Abs(got-want) <= 0.5*math.Pow10(-dec)+1e-9*math.Abs(want)
}

// artifactValue recomputes a Sources row's figure from the artifacts alone.
func artifactValue(t *testing.T, dir string, row sourceRow) float64 {
	t.Helper()
	field := strings.Trim(row.field, "`")
	scale := 1.0
	if path, s, ok := strings.Cut(row.field, "` × "); ok {
		field = strings.Trim(path, "`")
		var err error
		if scale, err = strconv.ParseFloat(s, 64); err != nil {
			t.Fatalf("row %d scale %q: %v", row.id, s, err)
		}
	}
	switch {
	case row.artifact == HdrLogFile:
		log, err := ReadHdrLog(filepath.Join(dir, HdrLogFile))
		if err != nil {
			t.Fatal(err)
		}
		switch field {
		case "hdrlog:intervals":
			return float64(len(log.Intervals)) * scale
		case "hdrlog:total_count":
			return float64(log.Total.TotalCount()) * scale
		}
	case strings.HasPrefix(field, "histogram:q="):
		q, err := strconv.ParseFloat(strings.TrimPrefix(field, "histogram:q="), 64)
		if err != nil {
			t.Fatal(err)
		}
		var load loadtester.Result
		readArtifact(t, dir, row.artifact, &load)
		h, err := DecodeHistogram(load.Histogram)
		if err != nil {
			t.Fatal(err)
		}
		return float64(h.ValueAtQuantile(q)) * scale
	default:
		var doc any
		readArtifact(t, dir, row.artifact, &doc)
		v, err := LookupNumber(doc, field)
		if err != nil {
			t.Fatalf("row %d (%s): %v", row.id, row.name, err)
		}
		return v * scale
	}
	t.Fatalf("row %d: unknown field %q of %s", row.id, field, row.artifact)
	return 0
}

func readArtifact(t *testing.T, dir, name string, dst any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatalf("row names artifact %s: %v", name, err)
	}
	if err := json.Unmarshal(data, dst); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// derivedValue recomputes a derived figure from the artifacts, independently
// of the generator's code.
func derivedValue(t *testing.T, dir string, row sourceRow) float64 {
	t.Helper()
	var load loadtester.Result
	var work CPUWork
	var loaded CPUSample
	readArtifact(t, dir, LoadFile, &load)
	readArtifact(t, dir, CPUWorkFile, &work)
	readArtifact(t, dir, ServerCPULoaded, &loaded)
	perRequest := loaded.CoreFraction * 1e9 / load.RequestsPerSec
	workNs := work.NsPerCallMedian
	switch row.name {
	case "Theoretical maximum CPU time per request":
		return 1e9 / load.RequestsPerSec
	case "CPU work efficiency":
		return workNs * load.RequestsPerSec / 1e9 * 100
	case "Server CPU per request":
		return perRequest
	case "Throughput relative to the seed":
		return load.RequestsPerSec / SeedRequestsPerSec * 100
	case "Server and load tester CPU together":
		return loaded.CoreFraction + load.ClientCPUCores
	case "Cost per iteration, timed run":
		return workNs / float64(work.Iterations)
	case "Cost per iteration, calibration":
		var target CPUWork
		readArtifact(t, dir, CPUWorkTargetFile, &target)
		return target.NsPerCallMedian / float64(target.Iterations)
	case "Other processes' CPU under load":
		return loaded.MachineBusyCores - loaded.CoreFraction - load.ClientCPUCores
	case "Share of server CPU spent on the configured work":
		return workNs / perRequest * 100
	}
	t.Fatalf("derived row %d %q has no independent check", row.id, row.name)
	return 0
}

// TestReportNumbersTraceToArtifacts parses every figure back out of the
// markdown and recomputes it from the run's files.
func TestReportNumbersTraceToArtifacts(t *testing.T) {
	md, _ := render(t, recordedRun)
	rows := parseSources(t, md)
	seed := map[string]float64{"Seed throughput": 825000, "Seed CPU work efficiency": 61, "Seed I/O threads": 8}
	for _, row := range rows {
		got, dec, _ := splitValue(t, row.text)
		var want float64
		switch row.artifact {
		case "derived":
			want = derivedValue(t, recordedRun, row)
		case seedArtifact:
			var ok bool
			if want, ok = seed[row.name]; !ok {
				t.Fatalf("seed row %q unknown", row.name)
			}
		default:
			want = artifactValue(t, recordedRun, row)
		}
		if !closeTo(got, dec, want) {
			t.Errorf("figure %d %q: report says %s, artifact gives %v", row.id, row.name, row.text, want)
		}
	}
	// Every figure in the prose carries its source number, and that row prints
	// the same text; every row is cited.
	body, _, _ := strings.Cut(md, "## Sources\n")
	cited := map[int]bool{}
	refRE := regexp.MustCompile(`([-0-9.,]+(?: [^<|*()]+?)?)<sup>\[(\d+)\]</sup>`)
	for _, m := range refRE.FindAllStringSubmatch(body, -1) {
		id, _ := strconv.Atoi(m[2])
		if id < 1 || id > len(rows) {
			t.Errorf("citation [%d] has no Sources row", id)
			continue
		}
		cited[id] = true
		if !strings.HasSuffix(m[1], rows[id-1].text) {
			t.Errorf("citation [%d] prints %q, Sources row says %q", id, m[1], rows[id-1].text)
		}
	}
	for _, row := range rows {
		if !cited[row.id] {
			t.Errorf("Sources row %d %q is never cited", row.id, row.name)
		}
	}
}

// matchingLines returns the submatches of every line of md that re matches.
func matchingLines(md string, re *regexp.Regexp) [][]string {
	var out [][]string
	for _, line := range strings.Split(md, "\n") {
		if m := re.FindStringSubmatch(line); m != nil {
			out = append(out, m)
		}
	}
	return out
}

// TestPipelineTableMatchesArtifact checks every bench_pipeline row of the report.
func TestPipelineTableMatchesArtifact(t *testing.T) {
	md, _ := render(t, recordedRun)
	var pb pipebench.JSONOutput
	readArtifact(t, recordedRun, PipelineBenchFile, &pb)
	rowRE := regexp.MustCompile("^\\|.*\\| ([0-9.,]+) \\| ([0-9.,]+) \\| ([0-9.,]+) \\| `cases\\[(\\d+)\\]` \\|$")
	seen := 0
	for _, m := range matchingLines(md, rowRE) {
		i, _ := strconv.Atoi(m[4])
		c := pb.Cases[i]
		for j, want := range []float64{c.NsPerItem, c.ItemsPerSec, c.CPUNsPerItem} {
			got, dec, err := ParseNumber(m[j+1])
			if err != nil {
				t.Fatal(err)
			}
			if !closeTo(got, dec, want) {
				t.Errorf("cases[%d] column %d: report %s, artifact %v", i, j, m[j+1], want)
			}
		}
		seen++
	}
	if seen != len(pb.Cases) {
		t.Errorf("report shows %d bench_pipeline cases, artifact has %d", seen, len(pb.Cases))
	}
}

func TestReportImages(t *testing.T) {
	md, res := render(t, recordedRun)
	dir := filepath.Dir(res.Markdown)
	links := regexp.MustCompile(`!\[[^\]]*\]\(([^)]+\.png)\)`).FindAllStringSubmatch(md, -1)
	if len(links) != 6 {
		t.Fatalf("report links %d images, want 6", len(links))
	}
	for _, l := range links {
		f, err := os.Open(filepath.Join(dir, l[1]))
		if err != nil {
			t.Fatalf("linked image: %v", err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s is not a PNG: %v", l[1], err)
		}
		w, h := PlotPixels(strings.HasSuffix(l[1], WaitStrategiesPNG) || strings.HasSuffix(l[1], WaitCoresPNG))
		if cfg.Width != w || cfg.Height != h {
			t.Errorf("%s is %dx%d, want %dx%d", l[1], cfg.Width, cfg.Height, w, h)
		}
		// A full decode catches truncated files.
		f, _ = os.Open(filepath.Join(dir, l[1]))
		if _, err := png.Decode(f); err != nil {
			t.Errorf("%s does not decode: %v", l[1], err)
		}
		f.Close()
	}
}

// copyRun copies the recorded run into a temp dir, leaving out some files.
func copyRun(t *testing.T, skip ...string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(recordedRun)
	if err != nil {
		t.Fatal(err)
	}
next:
	for _, e := range entries {
		for _, s := range skip {
			if e.Name() == s {
				continue next
			}
		}
		data, err := os.ReadFile(filepath.Join(recordedRun, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func TestOptionalArtifactsMissing(t *testing.T) {
	dir := copyRun(t, CPUWorkFile, CPUWorkTargetFile, ServerCPULoaded, ServerCPUIdle, PipelineBenchFile, HdrLogFile, WaitStrategiesFile)
	md, res := render(t, dir)
	for _, want := range []string{"Not measured: neither", "Not measured: `bench_pipeline.json` is not in this run", "No HdrHistogram interval log", "**CPU work efficiency**: not measured"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if len(res.Images) != 3 {
		t.Errorf("wrote %d images, want 3 (throughput, spectrum, histogram)", len(res.Images))
	}
}

func TestFailedStepsAreFlagged(t *testing.T) {
	dir := copyRun(t, ManifestFile)
	var m map[string]any
	readArtifact(t, recordedRun, ManifestFile, &m)
	for _, step := range m["steps"].([]any) {
		if step := step.(map[string]any); step["name"] == "bench_pipeline" {
			step["exit_code"] = 124.0
		}
	}
	data, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	md, _ := render(t, dir)
	if !strings.Contains(md, "**Warning: steps of this run failed:** `bench_pipeline` (exit 124)") {
		t.Error("failed step not flagged at the top of the report")
	}
}

func TestLoadRunErrors(t *testing.T) {
	tests := []struct {
		name    string
		skip    []string
		corrupt string
		wantErr string
	}{
		{"no manifest", []string{ManifestFile}, "", "manifest.json"},
		{"no load result", []string{LoadFile}, "", "load.json"},
		{"corrupt optional artifact", nil, CPUWorkFile, "decode artifact cpu_work.json"},
		{"corrupt hdr log", nil, HdrLogFile, "load.hlog"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyRun(t, tt.skip...)
			if tt.corrupt != "" {
				if err := os.WriteFile(filepath.Join(dir, tt.corrupt), []byte("{not json\nnot hdr\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := LoadRun(dir)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("LoadRun error = %v, want one naming %q", err, tt.wantErr)
			}
		})
	}
}

func TestGenerateBadHistogram(t *testing.T) {
	run, err := LoadRun(recordedRun)
	if err != nil {
		t.Fatal(err)
	}
	run.Load.Histogram = "not base64!"
	out := filepath.Join(t.TempDir(), "r.md")
	if _, err := Generate(run, Options{OutPath: out}); err != nil {
		t.Fatalf("Generate with a bad histogram: %v", err)
	}
	data, _ := os.ReadFile(out)
	if !bytes.Contains(data, []byte("No latency plots")) {
		t.Error("report does not say why the latency plots are missing")
	}
}
