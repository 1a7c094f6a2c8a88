package reports

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"weaseldb/artifacts"
	"weaseldb/internal/numfmt"
)

func ptrF(v float64) *float64 { return &v }

// TestWaitStrategiesTablesMatchArtifact parses every row of the section's two
// tables back and compares it with the recorded wait_strategies.json.
func TestWaitStrategiesTablesMatchArtifact(t *testing.T) {
	md, _ := render(t, recordedRun)
	var ws artifacts.WaitStrategies
	readArtifact(t, recordedRun, artifacts.WaitStrategiesFile, &ws)
	rowRE := regexp.MustCompile("^\\| (\\w+) \\| ([^|]+) \\| (.*) \\| `runs\\[(\\d+)\\]` \\|$")
	seen := 0
	for _, m := range matchingLines(md, rowRE) {
		i, _ := strconv.Atoi(m[4])
		r := ws.Runs[i]
		if r.Strategy != m[1] || !strings.HasPrefix(m[2], r.Cores) {
			t.Errorf("runs[%d]: row names %s/%s, artifact %s/%s", i, m[1], m[2], r.Strategy, r.Cores)
		}
		want := []*float64{r.Throughput, scaled(r.P50Ns, 1e-3), scaled(r.P99Ns, 1e-3), r.CPUNsPerOp, r.ClientCPUNsPerRequest, scaled(r.IdleCoreFraction, 100)}
		if r.Bench == artifacts.BenchPipeline {
			want = []*float64{r.Throughput, r.CPUNsPerOp, scaled(r.IdleCoreFraction, 100)}
		}
		cells := strings.Split(m[3], " | ")
		for j, w := range want {
			if w == nil {
				if cells[j] != "not measured" {
					t.Errorf("runs[%d] column %d: %q, want not measured", i, j, cells[j])
				}
				continue
			}
			got, dec, err := numfmt.Parse(cells[j])
			if err != nil || !closeTo(got, dec, *w) {
				t.Errorf("runs[%d] column %d: report %q, artifact %v (%v)", i, j, cells[j], *w, err)
			}
		}
		seen++
	}
	if want := len(measuredRuns(&ws, artifacts.BenchServer)) + len(measuredRuns(&ws, artifacts.BenchPipeline)); seen != want || seen == 0 {
		t.Errorf("report shows %d measured runs, artifact has %d", seen, want)
	}
	for i, r := range ws.Runs {
		if r.Status != artifacts.StatusMeasured && !strings.Contains(md, r.Reason+" (`runs["+strconv.Itoa(i)+"]`)") {
			t.Errorf("runs[%d] (%s) not listed with its reason", i, r.Status)
		}
	}
}

func scaled(v *float64, s float64) *float64 {
	if v == nil {
		return nil
	}
	return ptrF(*v * s)
}

// TestWaitStrategiesDedicatedRendered renders a run with dedicated rows too
// (as a machine with enough CPUs writes it): both kinds of cores in the
// table and the plot, and no "only shared cores" caveat.
func TestWaitStrategiesDedicatedRendered(t *testing.T) {
	dir := copyRun(t, recordedRun)
	var ws artifacts.WaitStrategies
	readArtifact(t, recordedRun, artifacts.WaitStrategiesFile, &ws)
	for i, r := range ws.Runs {
		if r.Cores == artifacts.CoresDedicated && r.Bench == artifacts.BenchServer {
			r.Status, r.Reason, r.CPUPlan = artifacts.StatusMeasured, "", "io 10; stages 11 12 13 14; load_tester 15"
			r.Unit, r.Throughput, r.P50Ns, r.P99Ns = "req/s", ptrF(200000+float64(i)), ptrF(400000), ptrF(900000)
			r.CPUNsPerOp, r.IdleCoreFraction = ptrF(7000), ptrF(0.001)
			ws.Runs[i] = r
		}
	}
	writeWaitStrategies(t, dir, &ws)
	md, res := render(t, dir)
	_, section, _ := strings.Cut(md, "### Wait strategies on shared and dedicated cores\n")
	section, _, _ = strings.Cut(section, "\n## ")
	if !strings.Contains(section, "| Never | dedicated (io 10; stages 11 12 13 14; load_tester 15) | 200,011 |") {
		t.Errorf("dedicated server row missing:\n%s", section)
	}
	if strings.Contains(section, "Only shared cores were measured") {
		t.Error("caveat about shared cores printed although dedicated runs were measured")
	}
	found := false
	for _, img := range res.Images {
		found = found || filepath.Base(img) == WaitCoresPNG
	}
	if !found {
		t.Errorf("no %s among %v", WaitCoresPNG, res.Images)
	}
}

func TestWaitStrategiesNotRun(t *testing.T) {
	md, _ := render(t, copyRun(t, recordedRun, artifacts.WaitStrategiesFile))
	if !strings.Contains(md, "_Not run: this run has no `wait_strategies.json`") {
		t.Error("report does not say the comparison was not run")
	}
}

// A server run with unfinished or dropped requests is flagged under the
// table (bench's plain-text table flags it too: TestFormatWaitTableUnclean).
func TestWaitStrategiesUncleanRunFlagged(t *testing.T) {
	dir := copyRun(t, recordedRun)
	var ws artifacts.WaitStrategies
	readArtifact(t, dir, artifacts.WaitStrategiesFile, &ws)
	for i := range ws.Runs {
		if r := &ws.Runs[i]; r.Bench == artifacts.BenchServer && r.Strategy == "Never" && r.Status == artifacts.StatusMeasured {
			r.Unfinished, r.Dropped = 12, 3
		}
	}
	writeWaitStrategies(t, dir, &ws)
	md, _ := render(t, dir)
	if !strings.Contains(md, "**Never on shared cores is not a clean sample**: 12 requests were unfinished and 3 dropped") {
		t.Error("the report does not flag the unclean run")
	}
}

// writeWaitStrategies replaces a run directory's wait_strategies.json.
func writeWaitStrategies(t *testing.T, dir string, ws *artifacts.WaitStrategies) {
	t.Helper()
	data, err := json.Marshal(ws)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, artifacts.WaitStrategiesFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
