package pipebench

import (
	"bytes"
	"testing"
	"time"

	"weaseldb/artifacts"
	"weaseldb/server/pipeline"
)

// The throughput table, byte for byte: a family's first case gets the
// title and the columns, the next only its row.
func TestCaseTable(t *testing.T) {
	cases := FamilyCases([]string{FamilyBatch})
	var b bytes.Buffer
	table := NewCaseTable(&b)
	for i, c := range cases[:2] {
		table.Begin(c)
		table.Row(Result{Case: c, Runs: 3, NsPerItem: 50.74 + float64(i), NsPerItemMin: 50.7, NsPerItemMax: 60.25,
			ItemsPerSec: 19721054.4, CPUNsPerItem: 50.61, RatioToFirst: 1 - 0.08*float64(i)})
	}
	want := "\n== batch: 1 stage, no spin work (the hand-off cost), ring 1024, 1000000 items per run\n" +
		"impl             strategy             batch  spin     ns/item   spread(min-max)        items/s  cpu-ns/item    ratio\n" +
		"pipeline         WaitIfStageEmpty         1     0        50.7         50.7-60.2       19721054         50.6    1.00x\n" +
		"channel          -                        1     0        51.7         50.7-60.2       19721054         50.6    0.92x\n"
	if b.String() != want {
		t.Fatalf("got\n%q\nwant\n%q", b.String(), want)
	}
}

func TestFamilyTitle(t *testing.T) {
	for _, tc := range []struct {
		family, want string
	}{
		{FamilySingleStage, "== single_stage: 1 stage, 100 spin iterations per item, pushes of 1, ring 1024, 100000 items per run"},
		{FamilyBatch, "== batch: 1 stage, no spin work (the hand-off cost), ring 1024, 1000000 items per run"},
		{FamilyBatchSpin, "== batch_spin: 1 stage, 100 spin iterations per item, ring 1024, 100000 items per run"},
		{FamilyWaitStrategy, "== wait_strategy: 2 stages, batch 4, 10 spin iterations per item per stage, ring 256, 50000 items per run"},
	} {
		if got := familyTitle(FamilyCases([]string{tc.family})[0]); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.family, got, tc.want)
		}
	}
}

func TestIdleTableAndLegend(t *testing.T) {
	var b bytes.Buffer
	WriteIdleHeader(&b, 500*time.Millisecond)
	WriteIdleRow(&b, IdleResult{Strategy: pipeline.WaitIfUpstreamIdle, Seconds: 0.5, CoreFraction: 0.00123})
	WriteIdleRow(&b, IdleResult{Strategy: pipeline.Never, Seconds: 0.5, CoreFraction: 1.5})
	WriteCaseLegend(&b, 1049*time.Millisecond)
	want := "\nidle CPU: the wait_strategy pipeline (2 stages) idle for 500ms after a run; process CPU over wall time\n" +
		"strategy               % of one core\n" +
		"WaitIfUpstreamIdle            0.123%\n" +
		"Never                       150.000%\n" +
		"\nns/item: median wall time per item over the runs; spread: fastest and slowest run;\n" +
		"cpu-ns/item: the process's user+system CPU per item (getrusage), producer and stages together;\n" +
		"ratio: items/s over the family's first case. Took 1.0s.\n"
	if b.String() != want {
		t.Fatalf("got\n%q\nwant\n%q", b.String(), want)
	}
}

// The latency table, byte for byte: the header with the clock, a measured
// row (percentiles, CPU per item, the time limit's mark), a skipped row,
// and the legend (a dash where nothing says where the cases ran).
func TestLatencyTable(t *testing.T) {
	cases := LatencyCases(LatencyParams{Samples: 20})
	h := NewLatencyHistogram()
	for _, v := range []int64{900, 900, 1500} {
		_ = h.RecordValue(v)
	}
	var b bytes.Buffer
	WriteLatencyHeader(&b, cases[0], &artifacts.PipelineClock{Reads: 200000, ReadNs: 27.46, ResolutionNs: 20})
	WriteLatencyRow(&b, LatencyRow{Case: cases[2], Cores: artifacts.CoresShared,
		Result: LatencyResult{Hist: h, Measured: 3, CPU: 30 * time.Microsecond, Truncated: true}})
	WriteLatencyRow(&b, LatencyRow{Case: cases[3], Cores: artifacts.CoresDedicated, Skip: "not pinned"})
	WriteLatencyLegend(&b, LatencyPlan{}, "shared cores: nothing pinned")
	want := "\n== latency: single items, producer's publish -> stage's pickup (one_way) and a ping-pong round trip over two pipelines (round_trip);\n" +
		"   low = an item every 200µs (the stage idle between), saturation = back to back; ring 256; 20 samples at low rate, 800 at saturation (at most 500ms a case)\n" +
		"   clock: 27.5 ns a read (200000 back-to-back reads), resolution 20 ns, clocksource -: figures below ~55 ns resolve nothing\n" +
		"impl      strategy            cores     kind       rate             n       p50       p99     p99.9       max  cpu-ns/item\n" +
		"pipeline  Never               shared    one_way    low              3     900ns     1.5µs     1.5µs     1.5µs        10000 (time limit)\n" +
		"channel   -                   dedicated one_way    low        skipped: not pinned\n" +
		"dedicated: skipped: \nshared: shared cores: nothing pinned\n" +
		"p50..max: one_way the hand-off, round_trip two hand-offs; cpu-ns/item: the process's CPU per item or round trip over the case\n"
	if b.String() != want {
		t.Fatalf("got\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	WriteLatencyLegend(&b, LatencyPlan{Dedicated: true, Why: "producer on 0, stage 0 on 1"}, "s")
	if want := "dedicated: producer on 0, stage 0 on 1\nshared: s\n"; b.String()[:len(want)] != want {
		t.Fatalf("got %q", b.String())
	}
}
