package artifacts

import (
	"math"
	"testing"
)

func TestStageWaitQuantile(t *testing.T) {
	upper := []float64{1e-6, 1e-5, 1e-4}
	cases := []struct {
		name   string
		counts []uint64
		q      float64
		want   float64
		ok     bool
	}{
		{"nothing recorded", []uint64{0, 0, 0, 0}, 0.5, 0, false},
		{"the first bucket interpolates from 0", []uint64{4, 0, 0, 0}, 0.5, 0.5e-6, true},
		{"within the second bucket", []uint64{2, 2, 0, 0}, 0.75, 1e-6 + 9e-6*0.5, true},
		{"p99 in the last bounded bucket", []uint64{98, 0, 2, 0}, 0.99, 1e-5 + 9e-5*0.5, true},
		{"above every bound is the last bound", []uint64{0, 0, 0, 3}, 0.99, 1e-4, true},
		{"counts of the wrong length", []uint64{1, 1}, 0.5, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := StageWait{UpperS: upper, Counts: tc.counts}.Quantile(tc.q)
			if ok != tc.ok || math.Abs(got-tc.want) > 1e-15 {
				t.Errorf("Quantile(%g) = %g, %v; want %g, %v", tc.q, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestStageWaitAdd(t *testing.T) {
	var sum StageWait
	a := StageWait{UpperS: []float64{1, 2}, Counts: []uint64{1, 2, 3}, SumS: 4}
	for range 2 {
		if !sum.Add(a) {
			t.Fatal("Add refused the same buckets")
		}
	}
	if sum.Batches() != 12 || sum.SumS != 8 || a.Counts[0] != 1 {
		t.Errorf("sum %+v (a %+v): want 12 batches summing 8 s, a unchanged", sum, a)
	}
	if sum.Add(StageWait{UpperS: []float64{1, 3}, Counts: []uint64{1, 1, 1}}) {
		t.Error("Add took different buckets")
	}
}
