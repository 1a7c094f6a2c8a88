package result

import (
	"os"
	"testing"
)

// FuzzReadResult: any bytes give a result or an error, never a panic, and
// whatever reads merges without one.
func FuzzReadResult(f *testing.F) {
	for _, p := range []string{"../testdata/report_run/load.json"} {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"version":2,"window_start":"2026-12-01T10:00:00Z","histogram":"HISTFAAAAB"}`))
	f.Add([]byte(`{"version":2,"window_start":"2026-12-01T10:00:00Z","intervals":[{"t_s":1,"requests":1,"histogram":"x"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseResult(data, "fuzz.json")
		if err != nil {
			return
		}
		Merge([]MergeInput{{Path: "a.json", Result: r}, {Path: "b.json", Result: r}})
	})
}
