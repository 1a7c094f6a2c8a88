package gate

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want float64
	}{
		{"odd", []float64{3, 1, 2}, 2},
		{"even", []float64{4, 1, 3, 2}, 2.5},
		{"one", []float64{7}, 7},
		{"outlier does not move it", []float64{10, 11, 12, 1000}, 11.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.in...)
			if got := Median(tt.in); got != tt.want {
				t.Errorf("Median(%v) = %v, want %v", tt.in, got, tt.want)
			}
			for i := range in {
				if in[i] != tt.in[i] {
					t.Fatalf("Median modified its input")
				}
			}
		})
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) should be NaN")
	}
}

func TestQuantileAndSpread(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5}
	for _, tt := range []struct{ q, want float64 }{{0, 1}, {0.5, 3}, {1, 5}, {0.25, 2}, {0.125, 1.5}} {
		if got := Quantile(xs, tt.q); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("Quantile(%v) = %v, want %v", tt.q, got, tt.want)
		}
	}
	// MAD of {90, 100, 110} around 100 is 10 -> 10%.
	if got := RelativeSpread([]float64{90, 100, 110}); math.Abs(got-0.1) > 1e-12 {
		t.Errorf("RelativeSpread = %v, want 0.1", got)
	}
}

func TestExactUCDF(t *testing.T) {
	tests := []struct {
		m, n, u int
		want    float64
	}{
		{3, 3, 0, 1.0 / 20},  // one arrangement of 20 has every B below every A
		{3, 3, 9, 1},         // U never exceeds m*n
		{5, 5, 0, 1.0 / 252}, // C(10,5) = 252
		{5, 5, 1, 2.0 / 252},
		{2, 2, 2, 4.0 / 6}, // U distribution for 2x2: 1,1,2,1,1 over 6
	}
	for _, tt := range tests {
		if got := exactUCDF(tt.m, tt.n, tt.u); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("exactUCDF(%d,%d,%d) = %v, want %v", tt.m, tt.n, tt.u, got, tt.want)
		}
	}
}

func TestMannWhitneyLess(t *testing.T) {
	a := []float64{100, 101, 102, 103, 104}
	slower := []float64{80, 81, 82, 83, 84}
	if r := MannWhitneyLess(a, slower); !r.Exact || r.U != 0 || math.Abs(r.P-1.0/252) > 1e-12 {
		t.Errorf("fully separated: %+v, want U=0 p=1/252 exact", r)
	}
	faster := []float64{120, 121, 122, 123, 124}
	if r := MannWhitneyLess(a, faster); r.P < 0.99 {
		t.Errorf("B faster should not look smaller: p=%v", r.P)
	}
	// Ties: the normal approximation, p near 0.5 for identical samples.
	same := []float64{1, 2, 3, 4, 5}
	if r := MannWhitneyLess(same, same); r.Exact || r.P < 0.4 || r.P > 0.7 {
		t.Errorf("identical samples: %+v, want approximate p near 0.5", r)
	}
	// The approximation agrees with the exact answer on a tie-free case.
	x := []float64{1, 4, 6, 8, 10, 13, 15, 17}
	y := []float64{2, 3, 5, 7, 9, 11, 12, 14}
	exact := MannWhitneyLess(x, y)
	approx := normalUCDF(x, y, exact.U)
	if math.Abs(exact.P-approx) > 0.03 {
		t.Errorf("exact p %v vs normal approximation %v", exact.P, approx)
	}
}

func TestBootstrapRatioIsReproducible(t *testing.T) {
	a := []float64{100, 98, 103, 97, 101, 99}
	b := []float64{90, 88, 93, 91, 87, 92}
	c1 := BootstrapRatio(a, b, true, 2000, 0.95, 42)
	c2 := BootstrapRatio(a, b, true, 2000, 0.95, 42)
	if c1 != c2 {
		t.Fatalf("same seed, different intervals: %+v vs %+v", c1, c2)
	}
	if !(c1.Low <= c1.Ratio && c1.Ratio <= c1.High) {
		t.Errorf("ratio outside its interval: %+v", c1)
	}
	if c1.High >= 1 {
		t.Errorf("a clear 10%% drop should exclude 1: %+v", c1)
	}
	if !c1.Paired {
		t.Error("equal-length samples asked for pairing should be paired")
	}
	if u := BootstrapRatio(a, b[:4], true, 2000, 0.95, 42); u.Paired {
		t.Error("unequal lengths cannot be paired")
	}
}

// TestPairingCancelsDrift: a machine whose speed swings between rounds
// widens the unpaired interval, but the paired one sees through it.
func TestPairingCancelsDrift(t *testing.T) {
	var a, b []float64
	for i := range 10 {
		load := 1 + 0.3*math.Sin(float64(i)) // the machine's speed this round
		a = append(a, 100*load)
		b = append(b, 100*load*(1+0.01*float64(i%2)))
	}
	p := BootstrapRatio(a, b, true, 4000, 0.95, 1)
	u := BootstrapRatio(a, b, false, 4000, 0.95, 1)
	if pw, uw := p.High-p.Low, u.High-u.Low; pw*3 > uw {
		t.Errorf("paired width %.3f should be far below unpaired %.3f", pw, uw)
	}
}

// noisyRound simulates one round on a shared machine: a common drift for
// the round, independent per-run noise, and now and then a run hit by a
// neighbour's burst.
func noisyRounds(rng *rand.Rand, rounds int, slowdown, sigma float64) (a, b []float64) {
	run := func(drift float64) float64 {
		v := 100000 * drift * math.Exp(rng.NormFloat64()*sigma)
		if rng.Float64() < 0.1 {
			v *= 0.7 // a burst from another process
		}
		return v
	}
	for range rounds {
		drift := math.Exp(rng.NormFloat64() * 0.1)
		a = append(a, run(drift))
		b = append(b, run(drift)*(1-slowdown))
	}
	return a, b
}

// TestDefaultsSeparateAAFrom25PercentSlower checks the decision rule with
// the default rounds and tolerance on synthetic samples as noisy as this
// machine's (6% per run, 10% drift per round, 10% of runs hit by a burst):
// A/A passes and a 25% slower B fails, each in at least 19 of 20 cases.
func TestDefaultsSeparateAAFrom25PercentSlower(t *testing.T) {
	d := DefaultOptions()
	policy := Policy{Tolerance: d.Tolerance}
	rng := rand.New(rand.NewPCG(7, 7))
	const cases, resamples = 100, 2000 // fewer resamples than the gate's: this is about the rule
	aaPass, slowFail := 0, 0
	for i := range cases {
		a, b := noisyRounds(rng, d.Rounds, 0, 0.06)
		if Decide(BootstrapRatio(a, b, true, resamples, d.Level, uint64(i)), policy).Verdict == Pass {
			aaPass++
		}
		a, b = noisyRounds(rng, d.Rounds, 0.25, 0.06)
		if Decide(BootstrapRatio(a, b, true, resamples, d.Level, uint64(i)), policy).Verdict == Regression {
			slowFail++
		}
	}
	t.Logf("A/A pass %d/%d, 25%% slower fail %d/%d", aaPass, cases, slowFail, cases)
	if aaPass*20 < cases*19 {
		t.Errorf("A/A passes %d/%d, want >= 95%%", aaPass, cases)
	}
	if slowFail*20 < cases*19 {
		t.Errorf("25%% slower fails %d/%d, want >= 95%%", slowFail, cases)
	}
}
