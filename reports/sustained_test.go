package reports

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"weaseldb/artifacts"
	"weaseldb/internal/jsonfile"
)

// A recorded sustained run renders its section: each setup's windows
// tabled (rate, GC, RSS), its first and last rate cited, a failed run with
// its reason, and one plot of three panels; a run without the artifact says
// how to get one.
func TestSustainedSection(t *testing.T) {
	dir := copyRun(t, setupsRun)
	sus := artifacts.Sustained{Version: artifacts.SustainedVersion, SustainS: 20, WarmupS: 1, WindowS: 5, Runs: []artifacts.SustainedRun{
		{Setup: artifacts.SetupSeed, Status: artifacts.StatusFailed, Reason: "weaseldb did not say it was ready"},
		{Setup: artifacts.SetupFitted, Status: artifacts.StatusMeasured, Load: "rounds/fitted-sustained.load.json", Windows: []artifacts.SustainedWindow{
			{StartS: 0, EndS: 5, Requests: 1_000_000, GCCount: 12, GCPauseS: 0.0024, GCPauseMaxS: 0.00031, RSSBytes: 40 << 20},
			{StartS: 5, EndS: 10, Requests: 950_000, GCCount: 11, GCPauseS: 0.0021, GCPauseMaxS: 0.00029, RSSBytes: 41 << 20},
			{StartS: 10, EndS: 15, Requests: 900_000, GCCount: 10, GCPauseS: 0.0020, GCPauseMaxS: 0.00028, RSSBytes: 42 << 20},
			{StartS: 15, EndS: 20, Requests: 800_000, GCCount: 9, GCPauseS: 0.0018, GCPauseMaxS: 0.00027, RSSBytes: 43 << 20},
		}},
	}}
	if err := jsonfile.WriteFile(filepath.Join(dir, artifacts.SustainedFile), sus); err != nil {
		t.Fatal(err)
	}
	md, res := render(t, dir)
	_, section, ok := strings.Cut(md, "## Sustained run\n")
	if !ok {
		t.Fatal("no Sustained run section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	for _, want := range []string{
		"for 20 s without a break", "every 5 s", "`go_gc_duration_seconds`", "VmRSS",
		"**failed**: weaseldb did not say it was ready (`runs[0]`)",
		"First window 200,000 req/s<sup>", "last 160,000 req/s<sup>", "(-20.0%)", "42 collections",
		"| 1 | 0–5 | 200,000 | 12 | 2.400 | 310 | 40.0 |",
		"| 4 | 15–20 | 160,000 | 9 | 1.800 | 270 | 43.0 |",
		"![Sustained run: requests/s, GC pause and RSS per window](img/" + SustainedPNG + ")",
	} {
		if !strings.Contains(section, want) {
			t.Errorf("section lacks %q:\n%s", want, section)
		}
	}
	var plotPath string
	for _, p := range res.Images {
		if filepath.Base(p) == SustainedPNG {
			plotPath = p
		}
	}
	f, err := os.Open(plotPath)
	if err != nil {
		t.Fatalf("sustained plot: %v (images %v)", err, res.Images)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if wantW, wantH := PlotPixels(true); err != nil || img.Bounds().Dx() != wantW || img.Bounds().Dy() != wantH {
		t.Errorf("plot %v, %v; want %dx%d", img.Bounds(), err, wantW, wantH)
	}

	plain, _ := render(t, setupsRun)
	if !strings.Contains(plain, "## Sustained run\n\n_Not run: no sustained.json in the run. `make report` stays short; `SUSTAIN=120 scripts/reproduce_threading_report.sh`") {
		t.Error("a run without sustained.json does not say how to get one")
	}
}
