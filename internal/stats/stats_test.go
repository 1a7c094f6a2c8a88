package stats

import (
	"math"
	"slices"
	"testing"
)

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want float64
	}{
		{"one", []float64{7}, 7},
		{"odd, sorted", []float64{1, 2, 9}, 2},
		{"odd, unsorted", []float64{9, 1, 2}, 2},
		{"even: the mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
		{"even, sorted", []float64{1, 2, 3, 10}, 2.5},
		{"ties", []float64{5, 5, 5, 1}, 5},
		{"negative", []float64{-3, -1, -2}, -2},
		{"infinite", []float64{math.Inf(1), 1, 2}, 2},
	}
	for _, tt := range tests {
		in := slices.Clone(tt.in)
		if got := Median(in); got != tt.want {
			t.Errorf("%s: Median(%v) = %v, want %v", tt.name, tt.in, got, tt.want)
		}
		if !slices.Equal(in, tt.in) {
			t.Errorf("%s: the input was modified: %v", tt.name, in)
		}
	}
	if !math.IsNaN(Median(nil)) || !math.IsNaN(Median([]float64{})) {
		t.Error("the median of nothing must be NaN")
	}
}

// The callers' figures are unchanged: the mean of the middle two is
// computed as (a+b)/2, as bench_cpu_work, bench_pipeline and the report
// always did, not as a+(b-a)/2.
func TestMedianOfTheMiddleTwo(t *testing.T) {
	a, b := 0.1, 0.7
	if got := Median([]float64{a, b}); got != (a+b)/2 {
		t.Errorf("Median(%v, %v) = %v, want %v", a, b, got, (a+b)/2)
	}
}
