package reports

import (
	"testing"

	"weaseldb/artifacts"
)

// Rounds' waits add up stage by stage; a stage whose rounds disagree on
// the buckets is left out rather than mixed; a round without a sample
// adds nothing.
func TestMergedStageWaits(t *testing.T) {
	a := artifacts.StageWait{UpperS: []float64{1e-6, 1e-5}, Counts: []uint64{1, 2, 0}, SumS: 1e-5}
	other := artifacts.StageWait{UpperS: []float64{1e-6, 3e-6}, Counts: []uint64{1, 0, 0}}
	rounds := []*Round{
		{Sample: &artifacts.ServerSample{StageWait: map[string]artifacts.StageWait{"resolve": a, "persist": a}}},
		{},
		{Sample: &artifacts.ServerSample{StageWait: map[string]artifacts.StageWait{"resolve": a, "persist": other}}},
	}
	got := mergedStageWaits(rounds)
	if r := got["resolve"]; r.Batches() != 6 || r.SumS != 2e-5 {
		t.Errorf("resolve merged to %+v, want 6 batches summing 2e-5 s", r)
	}
	if _, ok := got["persist"]; ok {
		t.Errorf("persist's rounds have different buckets, yet merged: %+v", got["persist"])
	}
	if a.Counts[1] != 2 {
		t.Errorf("merging changed a round's counts: %v", a.Counts)
	}
}

func TestFmtWait(t *testing.T) {
	for _, tc := range []struct {
		s    float64
		want string
	}{{0, "0 ns"}, {250e-9, "250 ns"}, {1.5e-6, "1.5 µs"}, {2.25e-3, "2.25 ms"}, {3, "3.00 s"}} {
		if got := fmtWait(tc.s); got != tc.want {
			t.Errorf("fmtWait(%g) = %q, want %q", tc.s, got, tc.want)
		}
	}
}
