package reports

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"weaseldb/artifacts"
)

// A run in a virtual machine renders as a functional check: what ran, on
// which CPUs, completed and clean, every check; no figure of speed and no
// plot.
func TestGenerateFunctional(t *testing.T) {
	r, err := LoadRun(manycoreRun)
	if err != nil {
		t.Fatal(err)
	}
	if !r.IsFunctional() {
		t.Fatal("the recorded manycore run is not seen as virtual")
	}
	out := filepath.Join(t.TempDir(), "m.md")
	res, cs, err := GenerateFunctional(r, Options{OutPath: out})
	if err != nil {
		t.Fatal(err)
	}
	if !cs.Passed || res.Markdown != out || len(res.Images) != 0 {
		t.Fatalf("checks %s, result %+v", cs.Summary, res)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	md := string(data)
	for _, want := range []string{
		"# Many CPUs: a functional check, not a performance measurement",
		"**emulated** (QEMU TCG", "on a host with 2 CPUs",
		"| guest steal time |",
		"## Verdict: **every check passed**",
		"from checks.json",
		// what ran where, as read back
		"| server | Never | dedicated | measured | io 2; stages 4 6 8 10; load_tester 12,14 | ok | 1 of 1 (ok) | 6 (ok) |",
		"CPU 4 (sequence): thread",
		"CPU 2 (I/O loop 0): thread",
		"producer 10; stages 12,14",
		"the seed's setup",
		// the dedicated throughput setup, named as functional, never as speed
		"The dedicated-core throughput setup (fitted setup: io 2; stages 4 6 8 10; load_tester 12,14) ran here as a functional check",
		"connections each loop accepted: loop 0:",
		"## What this does not show",
		"| source revision | not recorded", // the recorded run predates the manifest's source
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	// No figure of speed: no rate, no latency, no CPU per request, no plot.
	for _, banned := range []*regexp.Regexp{
		regexp.MustCompile(`req/s|items/s|requests_per_sec|items_per_sec`),
		regexp.MustCompile(`\bp(50|90|99)\b`),
		regexp.MustCompile(`\d ?(µs|ms|ns)\b`),
		regexp.MustCompile(`\bns/request|CPU/op|CPU per request`),
		regexp.MustCompile(`!\[`),
	} {
		if m := banned.FindString(md); m != "" {
			t.Errorf("the functional report prints %q, a figure of speed (%v)", m, banned)
		}
	}
}

// The performance report refuses a virtual machine's run: its numbers must
// not appear beside real cores' as if they were measurements.
func TestGenerateRefusesAVirtualRun(t *testing.T) {
	r, err := LoadRun(manycoreRun)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Generate(r, Options{OutPath: filepath.Join(t.TempDir(), "r.md")})
	if err == nil || !strings.Contains(err.Error(), "functional check") {
		t.Fatalf("Generate of a virtual run: %v, want a refusal", err)
	}
}

// Without checks.json (a run cut short before `report check`), the report
// checks the artifacts itself and says so; a failed check leads the report.
func TestGenerateFunctionalComputesMissingChecks(t *testing.T) {
	dir := copyRun(t, manycoreRun, artifacts.ChecksFile)
	editJSON(t, dir, "ws_server_WaitIfStageEmpty_dedicated.load.json", func(d map[string]any) { d["dropped"] = 2 })
	r, err := LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, cs, err := GenerateFunctional(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Markdown != filepath.Join(dir, FunctionalReportFile) {
		t.Errorf("written to %s, want the run directory's %s", res.Markdown, FunctionalReportFile)
	}
	if cs.Passed || cs.Failed != 1 {
		t.Fatalf("%s", cs.Summary)
	}
	data, _ := os.ReadFile(res.Markdown)
	md := string(data)
	for _, want := range []string{"computed by `report --run`", "**1 of ", "checks failed**",
		"- wait-strategies server WaitIfStageEmpty dedicated, accounting: due", "**0 failed, 0 unfinished, 2 dropped**"} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}
