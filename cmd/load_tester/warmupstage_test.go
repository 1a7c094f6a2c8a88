package main

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"weaseldb/loadtester/result"
)

// A stage that is all warm-up says so (never a row of zeros), and one that
// is partly warm-up says how much of it was measured. The stages run on
// the schedule's clock, which starts with the first connection, and the
// window on the run's, which starts before it: on a loaded machine the
// connection can come up tens of ms late (60 under two CIs at once), and
// the stages' measured parts shift by as much. So the second stage is
// measured 0.4 s and the lag, the third 0.4 s less the lag, together the
// window's 0.8 s, whatever the lag up to 0.4 s.
func TestWarmupStagesSayWarmup(t *testing.T) {
	rec := startRecorder(t, false)
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	var out, errOut bytes.Buffer
	if code := run([]string{"--url", rec.url + "/ok", "--stages", "0.4:0,0.8:50,0.4:50", "--warmup", "0.8", "--concurrency", "2", "--quiet", "--json", jsonPath}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	res, err := result.ReadResult(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stages) != 3 || res.Stages[0].Unmeasured != "warm-up" {
		t.Fatalf("stages %+v: want the first unmeasured, warm-up", res.Stages)
	}
	second, third := res.Stages[1].MeasuredS, res.Stages[2].MeasuredS
	if second < 0.4 || second >= 0.8 || math.Abs(second+third-0.8) > 0.01 {
		t.Errorf("measured %.3f s of the second stage and %.3f s of the third: want 0.4 s and the lag, and the window's 0.8 s together", second, third)
	}
	var rows []string
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, "→") {
			rows = append(rows, line)
		}
	}
	if len(rows) != 3 || !strings.Contains(rows[0], "warm-up") || !strings.Contains(rows[1], fmt.Sprintf("measured %.2fs of it", second)) || strings.Contains(rows[2], "warm-up") {
		t.Errorf("rows:\n%s\nwant the first warm-up, the second measured %.2f s of it, the third measured", strings.Join(rows, "\n"), second)
	}
}
