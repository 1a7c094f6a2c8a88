package reports

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"weaseldb/loadtester/result"
)

// The historical note puts the seed's two throughputs (1.0M before its
// connection model changed, 825k after) beside each setup's median
// throughput, which it reads from the run's own load results, and names
// the hosts: the seed's as unnamed, this run's from its manifest.
func TestHistoricalNote(t *testing.T) {
	md, res := render(t, setupsRun)
	_, note, ok := strings.Cut(md, "### Note on historical numbers\n")
	if !ok {
		t.Fatal("the report has no historical note")
	}
	note, _, _ = strings.Cut(note, "\n## ")
	run, err := LoadRun(setupsRun)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1,000,000 req/s", "825,000 req/s", "1,000 ns", "1,212 ns", "74 %", "61 %",
		"| host | not named by the seed |", run.Manifest.Machine.CPUModel, run.Manifest.Machine.Kernel}
	// Each setup's median throughput, as its median round's load result
	// holds it, is cited in the note by the same source as in the summary.
	for _, f := range res.Figures {
		if !strings.HasSuffix(f.Field, "requests_per_sec") || !strings.Contains(f.Name, "throughput, median") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(setupsRun, f.Artifact))
		if err != nil {
			t.Fatal(err)
		}
		var lr result.Result
		if err := json.Unmarshal(b, &lr); err != nil {
			t.Fatalf("%s: %v", f.Artifact, err)
		}
		if lr.RequestsPerSec != f.Value {
			t.Errorf("%s: figure %v, artifact %v", f.Name, f.Value, lr.RequestsPerSec)
		}
		want = append(want, f.Ref())
	}
	if len(want) != 9+2 {
		t.Fatalf("found %d setup throughputs, want 2", len(want)-9)
	}
	for _, w := range want {
		if !strings.Contains(note, w) {
			t.Errorf("the note lacks %q:\n%s", w, note)
		}
	}
}
