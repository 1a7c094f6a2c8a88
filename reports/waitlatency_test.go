package reports

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"weaseldb/artifacts"
	"weaseldb/internal/numfmt"
)

// latencyRun is the recorded run with the comparison's latency parts added
// as a 2-CPU machine writes them: every strategy and the channel on both
// kinds of cores, and open-loop steps for each shared server run. spinP50
// is Never's one-way low-rate p50 on dedicated cores.
func latencyRun(t *testing.T, spinP50 int64) (string, *artifacts.WaitStrategies) {
	t.Helper()
	dir := copyRun(t, recordedRun)
	var ws artifacts.WaitStrategies
	readArtifact(t, recordedRun, artifacts.WaitStrategiesFile, &ws)
	ws.LatencyArtifact, ws.LatencyClockReadNs = "ws_pipeline_latency.json", 26
	base := map[string]int64{"WaitIfStageEmpty": 40_000, "WaitIfUpstreamIdle": 38_000, "Never": 300, "-": 50_000}
	for _, kind := range []string{"one_way", "round_trip"} {
		for _, rate := range []string{"low", "saturation"} {
			for _, s := range append(append([]string{}, artifacts.WaitStrategyNames...), "-") {
				for _, cores := range []string{artifacts.CoresDedicated, artifacts.CoresShared} {
					impl := "pipeline"
					if s == "-" {
						impl = "channel"
					}
					p50 := base[s]
					if cores == artifacts.CoresShared {
						p50 = p50/10 + 200
					}
					if s == "Never" && cores == artifacts.CoresDedicated && kind == "one_way" && rate == "low" {
						p50 = spinP50
					}
					cpu := 50_000.0
					if s == "Never" {
						cpu = 900_000
					}
					ws.PipelineLatency = append(ws.PipelineLatency, artifacts.WaitLatency{Impl: impl, Strategy: s, Cores: cores, Kind: kind, Rate: rate,
						Samples: 300, P50Ns: p50, P99Ns: p50 * 20, P999Ns: p50 * 40, MaxNs: p50 * 50, CPUNsPerItem: cpu})
				}
			}
		}
	}
	ws.RateFractions = []float64{0.25, 0.5}
	for i := range ws.Runs {
		r := &ws.Runs[i]
		if r.Bench != artifacts.BenchServer || r.Status != artifacts.StatusMeasured {
			continue
		}
		p99 := int64(1_000_000 * (i + 1))
		r.RateSteps = []artifacts.WaitRateStep{
			{Fraction: 0.25, RateAsked: 10_000, RateAchieved: 9_990, P50Ns: 200_000, P99Ns: p99, P999Ns: 2 * p99, MaxNs: 3 * p99},
			{Fraction: 0.5, RateAsked: 20_000, RateAchieved: 19_990, P50Ns: 300_000, P99Ns: 2 * p99, P999Ns: 3 * p99, MaxNs: 4 * p99, Unfinished: 2},
		}
		r.RateStepsCPUNsPerRequest = ptrF(30_000)
	}
	writeWaitStrategies(t, dir, &ws)
	return dir, &ws
}

// The latency table's and the open-loop table's rows are the artifact's
// fields, both plots are drawn, and the conclusion is computed from them.
func TestWaitLatencyRendered(t *testing.T) {
	dir, ws := latencyRun(t, 300)
	md, res := render(t, dir)
	rowRE := regexp.MustCompile("^\\| (\\w+) \\| ([\\w-]+) \\| (\\w+) \\| (\\w+) \\| (\\w+) \\| ([^|]+) \\| ([^|]+) \\| ([^|]+) \\| ([^|]+) \\| ([^|]+) \\| `pipeline_latency\\[(\\d+)\\]` \\|$")
	rows := matchingLines(md, rowRE)
	if len(rows) != len(ws.PipelineLatency) {
		t.Fatalf("%d latency rows, artifact has %d", len(rows), len(ws.PipelineLatency))
	}
	for _, m := range rows {
		i, _ := strconv.Atoi(m[11])
		l := ws.PipelineLatency[i]
		if m[1] != l.Impl || m[2] != l.Strategy || m[3] != l.Kind || m[4] != l.Rate || m[5] != l.Cores {
			t.Errorf("pipeline_latency[%d]: row %v", i, m[1:6])
		}
		for j, want := range []float64{float64(l.P50Ns) / 1e3, float64(l.P99Ns) / 1e3, float64(l.P999Ns) / 1e3, float64(l.MaxNs) / 1e3, l.CPUNsPerItem} {
			got, dec, err := numfmt.Parse(m[6+j])
			if err != nil || !closeTo(got, dec, want) {
				t.Errorf("pipeline_latency[%d] column %d: %q, want %v", i, j, m[6+j], want)
			}
		}
	}
	stepRE := regexp.MustCompile("`runs\\[(\\d+)\\]\\.rate_steps\\[(\\d+)\\]` \\|$")
	steps := 0
	for _, r := range ws.Runs {
		steps += len(r.RateSteps)
	}
	if n := len(matchingLines(md, stepRE)); n != steps || n == 0 {
		t.Errorf("%d open-loop rows, artifact has %d", n, steps)
	}
	if !strings.Contains(md, "(not clean: 2 unfinished, 0 dropped)") {
		t.Error("an unclean step is not flagged")
	}
	var imgs []string
	for _, img := range res.Images {
		imgs = append(imgs, filepath.Base(img))
	}
	for _, want := range []string{WaitLatencyPNG, WaitRateLatencyPNG} {
		found := false
		for _, img := range imgs {
			found = found || img == want
		}
		if !found {
			t.Errorf("no %s among %v", want, imgs)
		}
	}
	for _, want := range []string{
		"**Physics check passes**: on dedicated cores the spinning `Never` hands off faster than the parking `WaitIfStageEmpty` (p50 0.300 µs against 40.0 µs",
		"- **Pipeline, one-way hand-off at a low rate, dedicated cores**: `Never` is fastest at p50 (0.300 µs; `WaitIfStageEmpty` 40.0 µs, `WaitIfUpstreamIdle` 38.0 µs) and at p99 too, at a CPU cost of 900,000 ns per item against 50,000 for `WaitIfStageEmpty` (18.0×)",
		"- **Server, open loop, shared cores**: the lowest p99 at the same fraction of each strategy's own capacity:",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("conclusion lacks %q", want)
		}
	}
}

// Where the spinner is not faster on dedicated cores, the conclusion says
// the physics check failed, and why that can be.
func TestWaitLatencyPhysicsCheckFails(t *testing.T) {
	dir, _ := latencyRun(t, 90_000)
	md, _ := render(t, dir)
	if !strings.Contains(md, "**Physics check fails**: on dedicated cores the spinning `Never` did not hand off faster than the parking `WaitIfStageEmpty` (p50 90.0 µs against 40.0 µs)") {
		t.Error("the failed physics check is not reported")
	}
}

// A run without the latency parts renders as before: no latency table, no
// extra plot.
func TestWaitLatencyAbsent(t *testing.T) {
	md, res := render(t, recordedRun)
	if strings.Contains(md, "latency family**") || strings.Contains(md, "fixed open-loop rates**") {
		t.Error("latency parts rendered without data")
	}
	for _, img := range res.Images {
		if b := filepath.Base(img); b == WaitLatencyPNG || b == WaitRateLatencyPNG {
			t.Errorf("plot %s drawn without data", b)
		}
	}
}

// A functional (virtual machine's) report says the latency parts ran and
// on what, and shows none of their figures.
func TestWaitLatencyFunctional(t *testing.T) {
	dir := copyRun(t, manycoreRun)
	var ws artifacts.WaitStrategies
	readArtifact(t, dir, artifacts.WaitStrategiesFile, &ws)
	ws.LatencyArtifact = "ws_pipeline_latency.json"
	plan := "dedicated cores: 2 threads on a CPU each (14-15), 0-13 kept for the rest"
	ws.PipelineLatency = []artifacts.WaitLatency{
		{Impl: "pipeline", Strategy: "Never", Cores: "dedicated", Kind: "one_way", Rate: "low", P50Ns: 123_456, CPUPlan: plan},
		{Impl: "pipeline", Strategy: "Never", Cores: "shared", Kind: "one_way", Rate: "low", P50Ns: 123_456},
		{Impl: "channel", Strategy: "-", Cores: "shared", Kind: "one_way", Rate: "low", Skipped: true, Reason: "a reason"},
	}
	ws.RateFractions = []float64{0.5}
	for i := range ws.Runs {
		if r := &ws.Runs[i]; r.Bench == artifacts.BenchServer && r.Status == artifacts.StatusMeasured {
			r.RateSteps = []artifacts.WaitRateStep{{Fraction: 0.5, RateAsked: 100, RateAchieved: 100, P50Ns: 1}}
		}
	}
	writeWaitStrategies(t, dir, &ws)
	r, err := LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := GenerateFunctional(r, Options{OutPath: filepath.Join(t.TempDir(), "m.md")})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(res.Markdown)
	if err != nil {
		t.Fatal(err)
	}
	md := string(data)
	for _, want := range []string{"1 cases measured on dedicated cores and 1 on shared ones, 1 skipped (a reason)", "Dedicated placement: " + plan,
		"1 open-loop steps ran at 0.50 of its closed-loop rate, 1 answered every request in time"} {
		if !strings.Contains(md, want) {
			t.Errorf("lacks %q", want)
		}
	}
	// The figure in any of the forms a report prints it (123.5µs, 123,456
	// ns, 0.123 ms): a bare "123" also matches a commit hash the report
	// now names as its source revision.
	for _, figure := range []string{"123.5", "123,456", "123456", "0.123"} {
		if strings.Contains(md, figure) {
			t.Errorf("a latency figure (%s) is shown in a functional report", figure)
		}
	}
}
