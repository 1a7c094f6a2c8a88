package pipebench

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"weaseldb/artifacts"
	"weaseldb/server/pipeline"
)

// The throughput cases are "dedicated" only where --cpus gave every hot
// thread a CPU of its own; cases and idle are [] rather than null.
func TestArtifactCores(t *testing.T) {
	c := FamilyCases([]string{FamilyBatch})[0]
	for _, tc := range []struct {
		name string
		cpus []int
		want string
	}{
		{"not pinned", nil, artifacts.CoresShared},
		{"a CPU each", []int{0, 1}, artifacts.CoresDedicated},
		{"a CPU repeated", []int{1, 1, 0}, artifacts.CoresShared},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Artifact(Report{Quick: true, CPUs: tc.cpus, Results: []Result{{Case: c, Runs: 3, NsPerItem: 2, ItemsPerSec: 5e8, RatioToFirst: 1}}})
			if err != nil {
				t.Fatal(err)
			}
			if len(a.Cases) != 1 || a.Cases[0].Cores != tc.want {
				t.Fatalf("cases %+v, want cores %s", a.Cases, tc.want)
			}
			got := a.Cases[0]
			if got.Family != FamilyBatch || got.Name != c.Name || got.Impl != "pipeline" || got.Strategy != "WaitIfStageEmpty" ||
				got.SlotCount != 1<<c.LgSlots || got.Items != c.Items || got.Runs != 3 || got.NsPerItem != 2 {
				t.Fatalf("case %+v", got)
			}
			if !a.Quick || a.Version != 1 || a.GOMAXPROCS != runtime.GOMAXPROCS(0) || a.GoVersion != runtime.Version() {
				t.Fatalf("artifact %+v", a)
			}
		})
	}
	a, err := Artifact(Report{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(data); !strings.Contains(s, `"cases":[]`) || !strings.Contains(s, `"idle":[]`) {
		t.Fatalf("empty report: %s", s)
	}
}

// A latency row becomes a case named with its cores: skipped with the
// reason and no figures, or with per-item figures and the histogram,
// encoded so that it decodes to the same values.
func TestArtifactLatency(t *testing.T) {
	cases := LatencyCases(LatencyParams{})
	h := NewLatencyHistogram()
	for _, v := range []int64{500, 700, 900, 1100} {
		_ = h.RecordValue(v)
	}
	clock := PipelineClock(ClockCost{Reads: 10, ReadNs: 25, ResolutionNs: 20}, "tsc")
	a, err := Artifact(Report{Clock: clock, Latency: []LatencyRow{
		{Case: cases[0], Cores: artifacts.CoresDedicated, Skip: "not pinned"},
		{Case: cases[0], Cores: artifacts.CoresShared, Plan: "shared cores", GOMAXPROCS: 2,
			Result: LatencyResult{Hist: h, Measured: 4, Wall: 4 * time.Millisecond, CPU: 2 * time.Millisecond, Truncated: true}},
	}, Idle: []IdleResult{{Strategy: pipeline.Never, Seconds: 0.5, CoreFraction: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if *a.Clock != (artifacts.PipelineClock{Source: "tsc", Reads: 10, ReadNs: 25, ResolutionNs: 20}) {
		t.Fatalf("clock %+v", a.Clock)
	}
	if len(a.Cases) != 2 || len(a.Idle) != 1 || a.Idle[0] != (artifacts.PipelineIdle{Strategy: "Never", CoreFraction: 1, Seconds: 0.5}) {
		t.Fatalf("cases %d, idle %+v", len(a.Cases), a.Idle)
	}
	skipped, shared := a.Cases[0], a.Cases[1]
	if !skipped.Skipped || skipped.SkipReason != "not pinned" || skipped.HandoffLatencyNs != nil || skipped.NsPerItem != 0 ||
		skipped.Name != cases[0].Name+"/cores=dedicated" || skipped.Family != FamilyLatency {
		t.Fatalf("skipped case %+v", skipped)
	}
	if shared.Skipped || shared.Name != cases[0].Name+"/cores=shared" || shared.CPUPlan != "shared cores" || shared.CaseGOMAXPROCS != 2 ||
		!shared.Truncated || shared.Items != 4 || shared.NsPerItem != 1e6 || shared.CPUNsPerItem != 5e5 || shared.ItemsPerSec != 1e3 ||
		shared.Kind != string(KindOneWay) || shared.Rate != string(RateLow) || shared.IntervalNs != DefaultLatencyInterval.Nanoseconds() {
		t.Fatalf("shared case %+v", shared)
	}
	l := shared.HandoffLatencyNs
	if l == nil || l.Count != 4 || l.P50 != h.ValueAtQuantile(50) || l.Max != h.Max() || l.Min != h.Min() {
		t.Fatalf("latency %+v", l)
	}
	dec, err := hdrhistogram.Decode([]byte(l.Histogram))
	if err != nil {
		t.Fatal(err)
	}
	if dec.TotalCount() != 4 || dec.Max() != h.Max() {
		t.Fatalf("decoded %d values, max %d", dec.TotalCount(), dec.Max())
	}
}
