package reports

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func cpuRange(lo, hi int) []int {
	var c []int
	for i := lo; i <= hi; i++ {
		c = append(c, i)
	}
	return c
}

var fullPlan = WaitPlanParams{PipelineStages: 2, IOThreads: 1, ReleaseThreads: 1, LoadThreads: 1, Dedicated: true}

func TestPlanWaitStrategies(t *testing.T) {
	tests := []struct {
		name             string
		allowed          []int
		params           WaitPlanParams
		pipelineSkipped  bool
		serverSkipped    bool
		wantNeedPipeline int
		wantNeedServer   int
		wantReason       string
	}{
		{"2 CPUs: every dedicated run skipped", cpuRange(0, 1), fullPlan, true, true, 4, 7, "this process may use 2 (0-1)"},
		{"4 CPUs: pipeline fits, server does not", cpuRange(0, 3), fullPlan, false, true, 4, 7, "needs 7 CPUs (6 dedicated + 1 for the rest)"},
		{"7 CPUs: both fit exactly", cpuRange(0, 6), fullPlan, false, false, 4, 7, ""},
		{"16 CPUs: both planned", cpuRange(0, 15), fullPlan, false, false, 4, 7, ""},
		{"a sparse cpuset", []int{2, 5, 9, 11, 12, 40, 41, 63}, fullPlan, false, false, 4, 7, ""},
		{"2 io loops, 2 release threads, 2 load threads: 10 needed", cpuRange(0, 8),
			WaitPlanParams{PipelineStages: 2, IOThreads: 2, ReleaseThreads: 2, LoadThreads: 2, Dedicated: true}, false, true, 4, 10, "may use 9 (0-8)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := PlanWaitStrategies(tt.allowed, tt.params)
			if len(runs) != 12 {
				t.Fatalf("planned %d runs, want 12 (2 benches × 2 kinds of cores × 3 strategies)", len(runs))
			}
			for _, r := range runs {
				if r.Cores == CoresShared {
					if r.Status != StatusMeasured || r.CPUPlan != "" {
						t.Errorf("shared run %+v: want planned to run, unpinned", r.WaitRun)
					}
					continue
				}
				skipped, need := tt.serverSkipped, tt.wantNeedServer
				if r.Bench == BenchPipeline {
					skipped, need = tt.pipelineSkipped, tt.wantNeedPipeline
				}
				if r.CPUsNeeded != need {
					t.Errorf("%s %s: needs %d CPUs, want %d", r.Bench, r.Strategy, r.CPUsNeeded, need)
				}
				if skipped {
					if r.Status != StatusSkipped || !strings.Contains(r.Reason, "needs "+strconv.Itoa(need)+" CPUs") || !strings.Contains(r.Reason, tt.wantReason) {
						t.Errorf("%s %s: status %q reason %q, want skipped naming %d CPUs and %q", r.Bench, r.Strategy, r.Status, r.Reason, need, tt.wantReason)
					}
					continue
				}
				if r.Status != StatusMeasured {
					t.Fatalf("%s %s: %s (%s), want planned", r.Bench, r.Strategy, r.Status, r.Reason)
				}
				checkAssignment(t, r, tt.allowed, tt.params)
			}
		})
	}
}

// checkAssignment checks that a dedicated run's threads each got a distinct
// allowed CPU, and that one allowed CPU is left for the rest.
func checkAssignment(t *testing.T, r PlannedRun, allowed []int, p WaitPlanParams) {
	t.Helper()
	var used []int
	if r.Bench == BenchPipeline {
		used = append([]int{r.ProducerCPU}, r.StageCPUs...)
		if len(r.StageCPUs) != p.PipelineStages {
			t.Errorf("pipeline stages got %v, want %d CPUs", r.StageCPUs, p.PipelineStages)
		}
		if got, want := r.PipelineCPUsFlag(), strconv.Itoa(r.ProducerCPU)+","+joinInts(r.StageCPUs, ","); got != want {
			t.Errorf("--cpus %q does not list producer then stages", got)
		}
	} else {
		used = append(used, r.IOCPUs...)
		if len(r.IOCPUs) != p.IOThreads || len(r.LoadCPUs) != p.LoadThreads || len(r.PipelineCPUs) != 4 || len(r.PipelineCPUs[3]) != p.ReleaseThreads {
			t.Errorf("server plan io %v stages %v load %v does not match %+v", r.IOCPUs, r.PipelineCPUs, r.LoadCPUs, p)
		}
		for _, s := range r.PipelineCPUs {
			used = append(used, s...)
		}
		used = append(used, r.LoadCPUs...)
	}
	seen := map[int]bool{}
	for _, c := range used {
		if seen[c] || !slices.Contains(allowed, c) {
			t.Errorf("CPU %d used twice or not allowed (plan %s, allowed %v)", c, r.CPUPlan, allowed)
		}
		seen[c] = true
	}
	if len(allowed)-len(used) < 1 {
		t.Errorf("plan %s leaves no CPU for the rest of %v", r.CPUPlan, allowed)
	}
	if r.CPUPlan == "" {
		t.Error("dedicated run has no CPU plan text")
	}
}

func TestPlanSharedOnly(t *testing.T) {
	runs := PlanWaitStrategies(cpuRange(0, 1), WaitPlanParams{Strategies: []string{"Never"}, PipelineStages: 2, IOThreads: 1, ReleaseThreads: 1, LoadThreads: 1})
	if len(runs) != 2 {
		t.Fatalf("planned %d runs, want 2 (pipeline and server, shared, Never)", len(runs))
	}
	for _, r := range runs {
		if r.Cores != CoresShared || r.Strategy != "Never" || r.Status != StatusMeasured {
			t.Errorf("unexpected run %+v", r.WaitRun)
		}
	}
}

func TestFormatWaitTable(t *testing.T) {
	ws := &WaitStrategies{Runs: []WaitRun{
		{Bench: BenchServer, Strategy: "Never", Cores: CoresShared, Status: StatusMeasured, Unit: "req/s",
			Throughput: ptrF(51234.4), P50Ns: ptrF(1500), P99Ns: ptrF(2.5e6), CPUNsPerOp: ptrF(812), IdleCoreFraction: ptrF(0.9712)},
		{Bench: BenchServer, Strategy: "Never", Cores: CoresDedicated, Status: StatusSkipped, Reason: "needs 7 CPUs (6 dedicated + 1 for the rest), this process may use 2 (0-1)"},
	}}
	out := FormatWaitTable(ws)
	for _, want := range []string{"51,234 req/s", "1.50µs", "2.50ms", "812.0ns", "97.12%", "skipped: needs 7 CPUs"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n"); n != 3 {
		t.Errorf("table has %d lines, want header + 2", n)
	}
	if line := strings.Split(out, "\n")[1]; !regexp.MustCompile(` - +97\.12%$`).MatchString(line) {
		t.Errorf("client CPU not measured should print -: %q", line)
	}
}

func ptrF(v float64) *float64 { return &v }

// TestWaitStrategiesTablesMatchArtifact parses every row of the section's two
// tables back and compares it with the recorded wait_strategies.json.
func TestWaitStrategiesTablesMatchArtifact(t *testing.T) {
	md, _ := render(t, recordedRun)
	var ws WaitStrategies
	readArtifact(t, recordedRun, WaitStrategiesFile, &ws)
	rowRE := regexp.MustCompile("^\\| (\\w+) \\| ([^|]+) \\| (.*) \\| `runs\\[(\\d+)\\]` \\|$")
	seen := 0
	for _, m := range matchingLines(md, rowRE) {
		i, _ := strconv.Atoi(m[4])
		r := ws.Runs[i]
		if r.Strategy != m[1] || !strings.HasPrefix(m[2], r.Cores) {
			t.Errorf("runs[%d]: row names %s/%s, artifact %s/%s", i, m[1], m[2], r.Strategy, r.Cores)
		}
		want := []*float64{r.Throughput, scaled(r.P50Ns, 1e-3), scaled(r.P99Ns, 1e-3), r.CPUNsPerOp, r.ClientCPUNsPerRequest, scaled(r.IdleCoreFraction, 100)}
		if r.Bench == BenchPipeline {
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
			got, dec, err := ParseNumber(cells[j])
			if err != nil || !closeTo(got, dec, *w) {
				t.Errorf("runs[%d] column %d: report %q, artifact %v (%v)", i, j, cells[j], *w, err)
			}
		}
		seen++
	}
	if want := len(ws.measuredRuns(BenchServer)) + len(ws.measuredRuns(BenchPipeline)); seen != want || seen == 0 {
		t.Errorf("report shows %d measured runs, artifact has %d", seen, want)
	}
	for i, r := range ws.Runs {
		if r.Status != StatusMeasured && !strings.Contains(md, r.Reason+" (`runs["+strconv.Itoa(i)+"]`)") {
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
	var ws WaitStrategies
	readArtifact(t, recordedRun, WaitStrategiesFile, &ws)
	for i, r := range ws.Runs {
		if r.Cores == CoresDedicated && r.Bench == BenchServer {
			r.Status, r.Reason, r.CPUPlan = StatusMeasured, "", "io 10; stages 11 12 13 14; load_tester 15"
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
	md, _ := render(t, copyRun(t, recordedRun, WaitStrategiesFile))
	if !strings.Contains(md, "_Not run: this run has no `wait_strategies.json`") {
		t.Error("report does not say the comparison was not run")
	}
}

// A server run with unfinished or dropped requests is flagged under the
// table and in the plain-text table.
func TestWaitStrategiesUncleanRunFlagged(t *testing.T) {
	dir := copyRun(t, recordedRun)
	var ws WaitStrategies
	readArtifact(t, dir, WaitStrategiesFile, &ws)
	for i := range ws.Runs {
		if r := &ws.Runs[i]; r.Bench == BenchServer && r.Strategy == "Never" && r.Status == StatusMeasured {
			r.Unfinished, r.Dropped = 12, 3
		}
	}
	writeWaitStrategies(t, dir, &ws)
	md, _ := render(t, dir)
	if !strings.Contains(md, "**Never on shared cores is not a clean sample**: 12 requests were unfinished and 3 dropped") {
		t.Error("the report does not flag the unclean run")
	}
	if !strings.Contains(FormatWaitTable(&ws), "NOT CLEAN: 12 unfinished, 3 dropped") {
		t.Errorf("the table does not flag it:\n%s", FormatWaitTable(&ws))
	}
}

// writeWaitStrategies replaces a run directory's wait_strategies.json.
func writeWaitStrategies(t *testing.T, dir string, ws *WaitStrategies) {
	t.Helper()
	data, err := json.Marshal(ws)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, WaitStrategiesFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
