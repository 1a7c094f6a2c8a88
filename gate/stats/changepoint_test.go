package stats

import (
	"math/rand/v2"
	"testing"
)

func noiseSeries(rng *rand.Rand, n int, level, sd float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = level + sd*rng.NormFloat64()
	}
	return out
}

// Planted steps are found where they were planted, with their size.
func TestChangePointsFindsPlantedSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name   string
		series []float64
		want   []int     // indices of the steps
		change []float64 // their relative size, roughly
	}{
		{"one 1% step in 0.2% noise", append(noiseSeries(rng, 30, 100, 0.2), noiseSeries(rng, 30, 101, 0.2)...), []int{30}, []float64{0.01}},
		{"up then down", append(append(noiseSeries(rng, 20, 100, 0.2), noiseSeries(rng, 20, 103, 0.2)...), noiseSeries(rng, 20, 100.5, 0.2)...),
			[]int{20, 40}, []float64{0.03, -0.025}},
		{"a 0.5% step late in a long series", append(noiseSeries(rng, 80, 7500, 5), noiseSeries(rng, 8, 7537, 5)...), []int{80}, []float64{0.005}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ChangePoints(tt.series, ChangePointOptions{})
			if len(got) != len(tt.want) {
				t.Fatalf("found %+v, want steps at %v", got, tt.want)
			}
			for i, cp := range got {
				if d := cp.Index - tt.want[i]; d < -1 || d > 1 {
					t.Errorf("step %d at %d, want %d±1", i, cp.Index, tt.want[i])
				}
				if d := cp.Change - tt.change[i]; d < -0.004 || d > 0.004 {
					t.Errorf("step %d: change %+.4f, want about %+.4f", i, cp.Change, tt.change[i])
				}
				if cp.PValue > 0.01 {
					t.Errorf("step %d: p %.3f", i, cp.PValue)
				}
			}
		})
	}
}

// On pure noise a step is reported about as often as the test's level
// says (0.01): at most 5 of 200 series here, whatever their distribution.
func TestChangePointsOnNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	falseSteps := 0
	for i := range 200 {
		series := noiseSeries(rng, 40, 1000, 1)
		if i%2 == 1 { // heavy tails: an occasional outlier
			for j := range series {
				if rng.IntN(10) == 0 {
					series[j] += 5 * rng.NormFloat64()
				}
			}
		}
		if len(ChangePoints(series, ChangePointOptions{Permutations: 99})) > 0 {
			falseSteps++
		}
	}
	t.Logf("%d of 200 noise series showed a step", falseSteps)
	if falseSteps > 5 {
		t.Errorf("%d of 200 series of pure noise showed a step, want about 2 (alpha 0.01)", falseSteps)
	}
}

// Short and constant series have no step, and the answer is the same on
// every call (the permutations are seeded by the data).
func TestChangePointsEdges(t *testing.T) {
	if got := ChangePoints([]float64{1, 2, 3}, ChangePointOptions{}); len(got) != 0 {
		t.Errorf("a 3-point series: %+v", got)
	}
	if got := ChangePoints([]float64{5, 5, 5, 5, 5, 5, 5, 5}, ChangePointOptions{}); len(got) != 0 {
		t.Errorf("a constant series: %+v", got)
	}
	s := append(noiseSeries(rand.New(rand.NewPCG(9, 9)), 15, 10, 0.1), noiseSeries(rand.New(rand.NewPCG(8, 8)), 15, 10.3, 0.1)...)
	a, b := ChangePoints(s, ChangePointOptions{}), ChangePoints(s, ChangePointOptions{})
	if len(a) != len(b) || len(a) > 0 && a[0] != b[0] {
		t.Errorf("two calls disagree: %+v and %+v", a, b)
	}
}
