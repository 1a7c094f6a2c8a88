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
	"slices"
	"strconv"
	"strings"
	"testing"

	"weaseldb/artifacts"
	"weaseldb/internal/numfmt"
	"weaseldb/loadtester/result"
)

var update = flag.Bool("update", false, "rewrite the fixtures' golden_report.md")

// The recorded runs the tests render: a run of the setups in rounds (the
// report's own format) and a single-result run (one load.json, as an older
// script or a merged distributed run leaves).
const (
	setupsRun   = "testdata/setups_run"
	recordedRun = "../testdata/report_run"
)

var fixtures = []string{setupsRun, recordedRun}

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
	goldens := map[string]string{setupsRun: "testdata/setups_golden_report.md", recordedRun: filepath.Join(recordedRun, "golden_report.md")}
	for _, dir := range fixtures {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			md, _ := render(t, dir)
			golden := goldens[dir]
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
		})
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
	headings := []string{
		"## Summary", "## Rounds", "## Calibration", "## Performance Metrics", "#### Throughput", "#### Latency", "### Threading Architecture",
		"### Health Check Pipeline (/ok endpoint)", "### CPU Usage When Idle", "### Pipeline micro-benchmarks (bench_pipeline)",
		"### Wait strategies on shared and dedicated cores", "## Where this run differs from the seed",
		"## Test Configuration", "## Sources",
	}
	for _, dir := range fixtures {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			md, _ := render(t, dir)
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
			run, err := LoadRun(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, phrase := range []string{"is oversubscribed", "825,000 req/s", "Only shared cores were measured", run.Manifest.Machine.CPUModel} {
				if !strings.Contains(md, phrase) {
					t.Errorf("report lacks %q", phrase)
				}
			}
		})
	}
}

// section returns the text of a "## " section of the report, without its heading.
func section(t *testing.T, md, heading string) string {
	t.Helper()
	_, rest, ok := strings.Cut(md, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("no section %q", heading)
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
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
	v, dec, err := numfmt.Parse(num)
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
	case strings.HasSuffix(row.artifact, ".hlog"):
		log, err := ReadHdrLog(filepath.Join(dir, row.artifact))
		if err != nil {
			t.Fatal(err)
		}
		switch field {
		case "hdrlog:intervals":
			return float64(len(log.Intervals)) * scale
		case "hdrlog:total_count":
			return float64(log.Total.TotalCount()) * scale
		}
	case strings.HasPrefix(field, "histogram:q="), strings.HasPrefix(field, "service_histogram:q="):
		which, qText, _ := strings.Cut(field, ":q=")
		q, err := strconv.ParseFloat(qText, 64)
		if err != nil {
			t.Fatal(err)
		}
		var load result.Result
		readArtifact(t, dir, row.artifact, &load)
		encoded := load.Histogram
		if which == "service_histogram" {
			encoded = load.ServiceHistogram
		}
		h, err := DecodeHistogram(encoded)
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

// TestReportNumbersTraceToArtifacts parses every figure back out of the
// markdown and recomputes it from the run's files: a field figure from its
// artifact's field, a derived one from an independent model of the run
// (model_test.go).
func TestReportNumbersTraceToArtifacts(t *testing.T) {
	for _, dir := range fixtures {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			md, _ := render(t, dir)
			checkTraces(t, dir, md)
		})
	}
}

// checkTraces checks every Sources row of md against the artifacts of dir,
// and that every figure in the prose is cited and every row cited.
func checkTraces(t *testing.T, dir, md string) {
	t.Helper()
	rows := parseSources(t, md)
	m := newRunModel(t, dir)
	// The seed report's figures, as the seed report prints them.
	seed := map[string]float64{"Seed throughput": 825000, "Seed CPU work efficiency": 61, "Seed I/O threads": 8,
		"Seed theoretical maximum CPU time per request": 1212, "Seed CPU work per request": 740, "Seed spin iterations per request": 4000,
		"Seed load per run": 30, "Seed load tester connections, in all": 2000, "Seed load tester network threads": 10,
		"Seed load tester connect threads": 8, "Seed script's connect threads": 2,
		// The seed report's earlier figures, from its note on historical numbers.
		"Seed's earlier throughput": 1000000, "Seed's earlier theoretical maximum CPU time per request": 1000,
		"Seed's earlier CPU work efficiency": 74, "Seed's earlier load tester network threads": 12}
	for _, row := range rows {
		got, dec, _ := splitValue(t, row.text)
		var want float64
		switch row.artifact {
		case "derived":
			want = m.derived(t, row.name)
		case seedArtifact:
			var ok bool
			if want, ok = seed[row.name]; !ok {
				t.Fatalf("seed row %q unknown", row.name)
			}
		default:
			want = artifactValue(t, dir, row)
		}
		if !closeTo(got, dec, want) {
			t.Errorf("figure %d %q: report says %s, artifacts give %v", row.id, row.name, row.text, want)
		}
	}
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
	var pb artifacts.PipelineBench
	readArtifact(t, recordedRun, artifacts.PipelineBenchFile, &pb)
	rowRE := regexp.MustCompile("^\\|.*\\| ([0-9.,]+) \\| ([0-9.,]+) \\| ([0-9.,]+) \\| `cases\\[(\\d+)\\]` \\|$")
	seen := 0
	for _, m := range matchingLines(md, rowRE) {
		i, _ := strconv.Atoi(m[4])
		c := pb.Cases[i]
		for j, want := range []float64{c.NsPerItem, c.ItemsPerSec, c.CPUNsPerItem} {
			got, dec, err := numfmt.Parse(m[j+1])
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
	// A run of setups: 4 plots per setup, the rounds, bench_pipeline's and
	// the wait strategies'; a single result: 4 and the last two.
	for dir, want := range map[string]int{setupsRun: 11, recordedRun: 6} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			md, res := render(t, dir)
			out := filepath.Dir(res.Markdown)
			links := regexp.MustCompile(`!\[[^\]]*\]\(([^)]+\.png)\)`).FindAllStringSubmatch(md, -1)
			if len(links) != want || len(res.Images) != want {
				t.Fatalf("report links %d images and wrote %d, want %d", len(links), len(res.Images), want)
			}
			for _, l := range links {
				checkPNG(t, filepath.Join(out, l[1]), strings.HasSuffix(l[1], WaitStrategiesPNG) || strings.HasSuffix(l[1], WaitCoresPNG))
			}
		})
	}
}

// checkPNG checks that path is a whole PNG of the plot size.
func checkPNG(t *testing.T, path string, wide bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("linked image: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f) // a full decode catches truncated files
	if err != nil {
		t.Fatalf("%s is not a PNG: %v", path, err)
	}
	w, h := PlotPixels(wide)
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Errorf("%s is %dx%d, want %dx%d", path, b.Dx(), b.Dy(), w, h)
	}
}

// copyRun copies a recorded run (and its rounds/) into a temp dir, leaving
// out some files (by their path in the run directory).
func copyRun(t *testing.T, src string, skip ...string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if slices.Contains(skip, filepath.ToSlash(rel)) {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// editJSON rewrites one JSON artifact of a run directory through edit.
func editJSON(t *testing.T, dir, name string, edit func(doc map[string]any)) {
	t.Helper()
	var doc map[string]any
	readArtifact(t, dir, name, &doc)
	edit(doc)
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestOptionalArtifactsMissing(t *testing.T) {
	dir := copyRun(t, recordedRun, artifacts.CPUWorkFile, artifacts.CPUWorkTargetFile, artifacts.ServerCPULoaded, artifacts.ServerCPUIdle, artifacts.PipelineBenchFile, artifacts.HdrLogFile, artifacts.WaitStrategiesFile)
	md, res := render(t, dir)
	for _, want := range []string{"_Not measured: no run of this report measured the server idle._", "Not measured: `bench_pipeline.json` is not in this run",
		"No HdrHistogram interval log", "**CPU work efficiency**: not measured", "The spin work was not timed in this run"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if len(res.Images) != 3 {
		t.Errorf("wrote %d images, want 3 (throughput, spectrum, histogram)", len(res.Images))
	}
	checkTraces(t, dir, md)
}

func TestFailedStepsAreFlagged(t *testing.T) {
	dir := copyRun(t, recordedRun)
	editJSON(t, dir, artifacts.ManifestFile, func(m map[string]any) {
		for _, step := range m["steps"].([]any) {
			if step := step.(map[string]any); step["name"] == "bench_pipeline" {
				step["exit_code"] = 124.0
			}
		}
	})
	md, _ := render(t, dir)
	if !strings.Contains(md, "**Warning: steps of this run failed:** `bench_pipeline` (exit 124)") {
		t.Error("failed step not flagged at the top of the report")
	}
}

// TestLoadRunErrors: without the manifest, or without both setups.json and
// load.json, there is nothing to report, and LoadRun fails naming the file.
func TestLoadRunErrors(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		skip    []string
		corrupt string
		wantErr string
	}{
		{"no manifest", recordedRun, []string{artifacts.ManifestFile}, "", "manifest.json"},
		{"no load result", recordedRun, []string{artifacts.LoadFile}, "", "load.json"},
		{"corrupt load result", recordedRun, nil, artifacts.LoadFile, "decode artifact load.json"},
		{"corrupt setups.json", setupsRun, nil, artifacts.SetupsFile, "decode artifact setups.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyRun(t, tt.src, tt.skip...)
			if tt.corrupt != "" {
				corruptFile(t, dir, tt.corrupt)
			}
			_, err := LoadRun(dir)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("LoadRun error = %v, want one naming %q", err, tt.wantErr)
			}
		})
	}
}

// TestDamagedArtifactCostsOnlyItsOwnFigures: any other artifact that is
// missing when setups.json names it, or exists and cannot be read, is
// named at the top of the report and in Run.Unreadable, and only what it
// held is left out: its round (or calibration) is marked unreadable and the
// setup's figures come from the other rounds, every one still traced.
func TestDamagedArtifactCostsOnlyItsOwnFigures(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		skip    []string
		corrupt string
		want    []string // in the markdown
	}{
		{"a round's load result missing", setupsRun, []string{"rounds/seed-r2.load.json"}, "",
			[]string{"**The seed's setup, round 2 cannot be read** and is left out", "| seed | **unreadable**: read artifact rounds/seed-r2.load.json"}},
		{"a round's sample corrupt", setupsRun, nil, "rounds/fitted-r1.sample.json",
			[]string{"**Fitted setup, round 1 cannot be read**", "decode artifact rounds/fitted-r1.sample.json"}},
		{"a round's hdr log corrupt", setupsRun, nil, "rounds/fitted-r3.load.hlog",
			[]string{"**Fitted setup, round 3 cannot be read**", "fitted-r3.load.hlog"}},
		{"a calibration corrupt", setupsRun, nil, "rounds/r2.cpu_work_target.json",
			[]string{"**The calibration of round 2 cannot be read** (what could be read is used): decode artifact rounds/r2.cpu_work_target.json"}},
		{"the wait-strategy comparison corrupt", setupsRun, nil, artifacts.WaitStrategiesFile,
			[]string{"decode artifact wait_strategies.json"}},
		{"a single run's calibration corrupt", recordedRun, nil, artifacts.CPUWorkFile,
			[]string{"decode artifact cpu_work.json"}},
		{"a single run's hdr log corrupt", recordedRun, nil, artifacts.HdrLogFile,
			[]string{"load.hlog"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyRun(t, tt.src, tt.skip...)
			if tt.corrupt != "" {
				corruptFile(t, dir, tt.corrupt)
			}
			run, err := LoadRun(dir)
			if err != nil {
				t.Fatalf("LoadRun: %v (a damaged artifact must cost only its own figures)", err)
			}
			if len(run.Unreadable) != 1 {
				t.Fatalf("Unreadable = %q, want the one damaged artifact", run.Unreadable)
			}
			out := filepath.Join(t.TempDir(), "r.md")
			if _, err := Generate(run, Options{OutPath: out}); err != nil {
				t.Fatalf("Generate: %v", err)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			md := string(data)
			if !strings.Contains(md, "> **Warning: artifacts of this run could not be read**, and what they held is left out of this report: "+run.Unreadable[0]) {
				t.Errorf("the damaged artifact is not named at the top of the report")
			}
			for _, want := range tt.want {
				if !strings.Contains(md, want) {
					t.Errorf("report lacks %q", want)
				}
			}
			checkTraces(t, dir, md)
		})
	}
}

func corruptFile(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("{not json\nnot hdr\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGenerateBadHistogram(t *testing.T) {
	run, err := LoadRun(recordedRun)
	if err != nil {
		t.Fatal(err)
	}
	run.Views[0].Rounds[0].Load.Histogram = "not base64!"
	out := filepath.Join(t.TempDir(), "r.md")
	if _, err := Generate(run, Options{OutPath: out}); err != nil {
		t.Fatalf("Generate with a bad histogram: %v", err)
	}
	data, _ := os.ReadFile(out)
	if !bytes.Contains(data, []byte("No latency plots")) {
		t.Error("report does not say why the latency plots are missing")
	}
}
