package loadtester

import (
	"path/filepath"
	"strings"
	"testing"
	"weaseldb/loadtester/result"
)

func TestStepLogPath(t *testing.T) {
	for _, tt := range []struct {
		path string
		n    int
		want string
	}{
		{"run.hlog", 3, "run.step3.hlog"},
		{"dir/knee.hlog", 1, "dir/knee.step1.hlog"},
		{"nolog", 2, "nolog.step2"},
		{"a.b/c", 4, "a.b/c.step4"},
	} {
		if got := StepLogPath(tt.path, tt.n); got != tt.want {
			t.Errorf("StepLogPath(%q, %d) = %q, want %q", tt.path, tt.n, got, tt.want)
		}
	}
}

// An output that cannot be written says which one, by the flag that asked
// for it, and never panics on a result with nothing in it.
func TestOutputWritersNameTheirFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no", "such", "dir", "out")
	res := &result.Result{}
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"json", WriteJSONFile(missing, res), "write --json: "},
		{"hdr log", WriteHDRLogFile(missing, res), "--hdr-log: "},
		{"vegeta of an instance run without it", MergeVegetaFiles(missing, []result.MergeInput{{Path: "a.json", Result: res}}), "--vegeta: a.json was run without --vegeta"},
	} {
		if tt.err == nil || !strings.HasPrefix(tt.err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to start %q", tt.name, tt.err, tt.want)
		}
	}
}
