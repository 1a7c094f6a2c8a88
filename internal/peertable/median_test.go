package peertable

import "testing"

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []float64
		want float64
	}{
		{"none", nil, 0},
		{"one", []float64{7}, 7},
		{"odd, unsorted", []float64{3, 1, 2}, 2},
		{"even: mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
		{"outlier does not move it", []float64{100, 101, 5}, 100},
	} {
		if got := Median(c.in); got != c.want {
			t.Errorf("%s: Median(%v) = %v, want %v", c.name, c.in, got, c.want)
		}
	}
}

func TestMedianLeavesInputAlone(t *testing.T) {
	in := []float64{3, 1, 2}
	Median(in)
	if in[0] != 3 || in[1] != 1 || in[2] != 2 {
		t.Errorf("Median sorted its input: %v", in)
	}
}
