package bench

import (
	"bytes"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"weaseldb/server/metrics"
)

// The waits a run's window records are the difference of two scrapes of
// the server's own histogram, bucket by bucket (+Inf included).
func TestWaitDeltasFromTwoScrapes(t *testing.T) {
	m := metrics.New()
	parse := func() map[string]*dto.Histogram {
		out, err := m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		families, err := parser.TextToMetricFamilies(bytes.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		return readHistograms(families, stageWaitMetric, "stage")
	}
	m.StageWait(1, time.Hour) // before the window: not counted
	before := parse()
	for _, w := range []time.Duration{50, 150, 150, 10 * time.Second} {
		m.StageWait(1, w)
	}
	m.StageWait(2, time.Microsecond)
	deltas := waitDeltas(before, parse())
	resolve := deltas["resolve"]
	if got := resolve.Batches(); got != 4 {
		t.Fatalf("resolve: %d batches in the window, want 4: %+v", got, resolve)
	}
	if resolve.Counts[0] != 1 || resolve.Counts[1] != 2 || resolve.Counts[len(resolve.Counts)-1] != 1 {
		t.Errorf("resolve's buckets %v over %v: want 1 at 100 ns, 2 at 300 ns, 1 above every bound", resolve.Counts, resolve.UpperS)
	}
	if want := 10.00000035; resolve.SumS < want-1e-9 || resolve.SumS > want+1e-9 {
		t.Errorf("resolve's sum %g, want %g", resolve.SumS, want)
	}
	if deltas["persist"].Batches() != 1 || deltas["sequence"].Batches() != 0 {
		t.Errorf("persist %+v, sequence %+v: want 1 and 0 batches", deltas["persist"], deltas["sequence"])
	}
	if waitDeltas(nil, before) != nil {
		t.Error("a scrape without the histogram gave waits")
	}
}

// --stage-waits turns the histogram on in a setup's config, with or
// without a [commit] table already there, and leaves the rest as it was.
func TestWithStageWaits(t *testing.T) {
	for _, doc := range []map[string]any{
		{"server": map[string]any{"io_threads": 1}},
		{"commit": map[string]any{"pipeline_release_threads": 2}},
	} {
		withStageWaits(doc)
		commit, _ := doc["commit"].(map[string]any)
		if commit["pipeline_stage_waits"] != true {
			t.Errorf("%v: pipeline_stage_waits not on", doc)
		}
		if len(doc) == 2 && doc["server"] == nil || len(commit) == 2 && commit["pipeline_release_threads"] != 2 {
			t.Errorf("%v: the rest changed", doc)
		}
	}
}
