package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"weaseldb/loadtester/result"
)

// A stage that is all warm-up says so (never a row of zeros), and one that
// is partly warm-up says how much of it was measured.
func TestWarmupStagesSayWarmup(t *testing.T) {
	rec := startRecorder(t, false)
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	var out, errOut bytes.Buffer
	if code := run([]string{"--url", rec.url + "/ok", "--stages", "0.4:0,0.4:50,0.4:50", "--warmup", "0.6", "--concurrency", "2", "--quiet", "--json", jsonPath}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	res, err := result.ReadResult(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stages) != 3 || res.Stages[0].Unmeasured != "warm-up" {
		t.Fatalf("stages %+v: want the first unmeasured, warm-up", res.Stages)
	}
	var rows []string
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, "→") {
			rows = append(rows, line)
		}
	}
	if len(rows) != 3 || !strings.Contains(rows[0], "warm-up") || !strings.Contains(rows[1], "measured 0.2") || strings.Contains(rows[2], "measured") {
		t.Errorf("rows:\n%s\nwant the first warm-up, the second measured 0.2 s of it, the third whole", strings.Join(rows, "\n"))
	}
}
