package loadtester

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"weaseldb/loadtester/result"
)

// Merging the results of two workload runs keeps each kind: counts summed,
// histograms added exactly (a kind's merged histogram holds both inputs'
// values), and the JSON reads back with them; the summary prints a row per
// kind.
func TestMergeKinds(t *testing.T) {
	s := startTestServer(t, "tcp", nil)
	w, err := ParseWorkload([]byte(goodWorkload))
	if err != nil {
		t.Fatal(err)
	}
	var inputs []result.MergeInput
	for i, rate := range []float64{400, 600} {
		cfg := testConfig(s)
		cfg.Workload, cfg.Rate, cfg.Duration = w, rate, 500*time.Millisecond
		cfg.Instance = []string{"a", "b"}[i]
		var buf bytes.Buffer
		if err := result.WriteJSON(&buf, runOK(t, cfg)); err != nil {
			t.Fatal(err)
		}
		r, err := result.ParseResult(buf.Bytes(), cfg.Instance)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, result.MergeInput{Path: cfg.Instance, Result: r})
	}
	merged, text := mergeAndPrint(t, inputs...)
	if len(merged.Kinds) != 3 {
		t.Fatalf("%d kinds merged", len(merged.Kinds))
	}
	for i, k := range merged.Kinds {
		a, b := inputs[0].Result.Kinds[i], inputs[1].Result.Kinds[i]
		if k.Name != a.Name || k.Due != a.Due+b.Due || k.Answered != a.Answered+b.Answered || k.Dropped != a.Dropped+b.Dropped {
			t.Errorf("kind %s: due %d, answered %d; inputs %d+%d, %d+%d", k.Name, k.Due, k.Answered, a.Due, b.Due, a.Answered, b.Answered)
		}
		if got, want := k.Hist().TotalCount(), a.Hist().TotalCount()+b.Hist().TotalCount(); got != want || k.ServiceHist().TotalCount() != a.ServiceHist().TotalCount()+b.ServiceHist().TotalCount() {
			t.Errorf("kind %s: %d latencies merged, inputs hold %d", k.Name, got, want)
		}
		if k.Share != a.Share || k.StatusCodes["200"] != a.StatusCodes["200"]+b.StatusCodes["200"] {
			t.Errorf("kind %s: share %g (input %g), statuses %v", k.Name, k.Share, a.Share, k.StatusCodes)
		}
		if !strings.Contains(text, k.Name+" ") {
			t.Errorf("summary lacks kind %s:\n%s", k.Name, text)
		}
	}
}
