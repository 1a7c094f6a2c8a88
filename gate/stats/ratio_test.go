package stats

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestRelativeSpread(t *testing.T) {
	// MAD of {90, 100, 110} around 100 is 10 -> 10%.
	if got := RelativeSpread([]float64{90, 100, 110}); math.Abs(got-0.1) > 1e-12 {
		t.Errorf("RelativeSpread = %v, want 0.1", got)
	}
	// One wild run does not inflate it: MAD of {10, 11, 12, 1000} is 1.
	if got := RelativeSpread([]float64{10, 11, 12, 1000}); math.Abs(got-1/11.5) > 1e-12 {
		t.Errorf("RelativeSpread with an outlier = %v, want %v", got, 1/11.5)
	}
	if !math.IsNaN(RelativeSpread(nil)) {
		t.Error("RelativeSpread(nil) should be NaN")
	}
}

// shuffled returns 1+i/100 for i in 1..n, in a scrambled order: the k-th
// smallest is 1+k/100, so an interval's ends name their order statistics.
func shuffled(n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = 1 + float64(i+1)/100
	}
	rng := rand.New(rand.NewPCG(uint64(n), 3))
	rng.Shuffle(n, func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
	return xs
}

// TestPairedRatioPublishedIntervals checks the distribution-free interval
// of the median against the binomial tables (e.g. Conover, Practical
// Nonparametric Statistics, table A3): [x(k), x(m)] holds the median with
// probability 1 - P(Bin(n, 1/2) < k) - P(Bin(n, 1/2) >= m), and benchmath
// takes the narrowest with at least 95% (at n = 16 the symmetric [x(4),
// x(13)] has 97.9%, the narrower [x(4), x(12)] 95.1%).
func TestPairedRatioPublishedIntervals(t *testing.T) {
	tests := []struct {
		n, k, m    int
		confidence float64
	}{
		{6, 1, 6, 1 - 2.0/64},               // 0.96875
		{10, 2, 9, 1 - 2*11.0/1024},         // 0.97852
		{16, 4, 12, 1 - (697.0+2517)/65536}, // 0.95096
		{20, 6, 15, 1 - 2*21700.0/1048576},  // 0.95861
	}
	for _, tt := range tests {
		a := make([]float64, tt.n)
		for i := range a {
			a[i] = 1000
		}
		b := shuffled(tt.n)
		for i := range b {
			b[i] *= 1000
		}
		ci := PairedRatio(a, b, 0.95)
		wantLo, wantHi := 1+float64(tt.k)/100, 1+float64(tt.m)/100
		if math.Abs(ci.Low-wantLo) > 1e-9 || math.Abs(ci.High-wantHi) > 1e-9 || math.Abs(ci.Confidence-tt.confidence) > 1e-6 {
			t.Errorf("n=%d: [%v, %v] at %v, want [x(%d)=%v, x(%d)=%v] at %v", tt.n, ci.Low, ci.High, ci.Confidence,
				tt.k, wantLo, tt.m, wantHi, tt.confidence)
		}
		if !ci.Paired || ci.Samples != tt.n || ci.Method != MethodPaired || len(ci.Warnings) > 0 {
			t.Errorf("n=%d: %+v", tt.n, ci)
		}
		if !(ci.Low <= ci.Ratio && ci.Ratio <= ci.High) {
			t.Errorf("n=%d: estimate %v outside [%v, %v]", tt.n, ci.Ratio, ci.Low, ci.High)
		}
	}
	// Five rounds cannot give a two-sided 95% interval: it is open at one
	// end (at least), and says why.
	ci := PairedRatio([]float64{1, 1, 1, 1, 1}, []float64{1, 1, 1, 1, 1}, 0.95)
	if !math.IsInf(ci.Low, -1) || len(ci.Warnings) == 0 || !strings.Contains(ci.Warnings[0], "need >= 6 samples") {
		t.Errorf("5 rounds: %+v", ci)
	}
	if ci := PairedRatio(nil, nil, 0.95); !math.IsNaN(ci.Ratio) {
		t.Errorf("no rounds: %+v", ci)
	}
}

// TestPairingCancelsDrift: a machine whose speed swings between rounds
// widens an interval over the runs, but not the one over per-round ratios.
func TestPairingCancelsDrift(t *testing.T) {
	var a, b []float64
	for i := range 16 {
		load := 1 + 0.3*math.Sin(float64(i)) // the machine's speed this round
		a = append(a, 100*load)
		b = append(b, 100*load*(0.98+0.01*float64(i%3)))
	}
	p, u := PairedRatio(a, b, 0.95), UnpairedRatio(a, b, 0.95)
	if pw, uw := p.High-p.Low, u.High-u.Low; pw*10 > uw {
		t.Errorf("paired width %.3f should be far below unpaired %.3f", pw, uw)
	}
	if p.Low > 0.98 || p.High < 1.0 {
		t.Errorf("paired interval [%.3f, %.3f] should hold the per-round ratios 0.98-1.00", p.Low, p.High)
	}
}

func TestUnpairedRatio(t *testing.T) {
	a := shuffled(10) // 1.01 ... 1.10
	b := shuffled(10)
	for i := range b {
		b[i] *= 0.9
	}
	ci := UnpairedRatio(a, b, 0.95)
	// Each median's interval at √0.95 = 97.47%: [x(2), x(9)] (97.85%).
	lo, hi := 0.9*1.02/1.09, 0.9*1.09/1.02
	if math.Abs(ci.Ratio-0.9) > 1e-9 || math.Abs(ci.Low-lo) > 1e-9 || math.Abs(ci.High-hi) > 1e-9 {
		t.Errorf("got %.4f [%.4f, %.4f], want 0.9 [%.4f, %.4f]", ci.Ratio, ci.Low, ci.High, lo, hi)
	}
	if want := (1 - 2*11.0/1024) * (1 - 2*11.0/1024); math.Abs(ci.Confidence-want) > 1e-9 || ci.Paired || ci.Method != MethodUnpaired {
		t.Errorf("confidence %v (want %v), %+v", ci.Confidence, want, ci)
	}
	if ci := UnpairedRatio([]float64{1, 2}, []float64{1, 2}, 0.95); !math.IsInf(ci.Low, -1) || !math.IsInf(ci.High, 1) {
		t.Errorf("too few samples: %+v", ci)
	}
}

// TestCompareRuns checks benchmath's U test against the exact published
// value: two fully separated samples of 5 have p = 2/C(10,5) = 2/252.
func TestCompareRuns(t *testing.T) {
	a := []float64{100, 101, 102, 103, 104}
	b := []float64{80, 81, 82, 83, 84}
	if r := CompareRuns(a, b); math.Abs(r.P-2.0/252) > 1e-9 || r.N1 != 5 || r.N2 != 5 || r.Alpha != 0.05 {
		t.Errorf("separated: %+v, want p = %v", r, 2.0/252)
	}
	if r := CompareRuns(a, a); r.P < 0.9 {
		t.Errorf("identical samples: p = %v", r.P)
	}
	if r := CompareRuns(nil, a); !math.IsNaN(r.P) {
		t.Errorf("no A: %+v", r)
	}
	if got := CompareRuns(a, b).String(); got != "p=0.00794 (n=5+5)" {
		t.Errorf("String() = %q", got)
	}
}

// aaRounds draws the per-side req/s of one A/A gate run of n rounds on a
// shared machine: every server process has a speed of its own (sd process),
// each round a drift both sides share (sd drift), each run its own noise
// (sd run), and one run in 20 is hit by a neighbour's burst. fresh: a new
// pair of processes every round (the default); else one pair for all.
func aaRounds(rng *rand.Rand, n int, process, drift, run float64, fresh bool) (a, b []float64) {
	speedA, speedB := math.Exp(rng.NormFloat64()*process), math.Exp(rng.NormFloat64()*process)
	one := func(speed, d float64) float64 {
		v := 100000 * speed * d * math.Exp(rng.NormFloat64()*run)
		if rng.Float64() < 0.05 {
			v *= 0.7
		}
		return v
	}
	for range n {
		if fresh {
			speedA, speedB = math.Exp(rng.NormFloat64()*process), math.Exp(rng.NormFloat64()*process)
		}
		d := math.Exp(rng.NormFloat64() * drift)
		a = append(a, one(speedA, d))
		b = append(b, one(speedB, d))
	}
	return a, b
}

// TestIntervalCoversTheNoiseBetweenProcesses is the bar on the
// interval: over A/A runs, about 95% of the 95% intervals hold 1.0, even
// when server processes differ in speed. It also shows why the rounds use
// fresh processes: with one pair kept for the whole run, the same interval
// misses 1.0 far more often (the pair's own difference is a bias no number
// of rounds averages out).
func TestIntervalCoversTheNoiseBetweenProcesses(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const trials = 2000
	covered := map[bool]int{}
	for _, fresh := range []bool{true, false} {
		for range trials {
			a, b := aaRounds(rng, 16, 0.08, 0.10, 0.03, fresh)
			ci := PairedRatio(a, b, 0.95)
			if ci.Low <= 1 && 1 <= ci.High {
				covered[fresh]++
			}
		}
	}
	fresh, kept := float64(covered[true])/trials, float64(covered[false])/trials
	t.Logf("A/A coverage of 1.0: fresh processes %.3f, kept processes %.3f", fresh, kept)
	if fresh < 0.94 {
		t.Errorf("fresh processes: %.3f of 95%% intervals hold 1.0, want about 0.95 or more", fresh)
	}
	if kept > 0.8 {
		t.Errorf("kept processes: coverage %.3f; the model's process noise should defeat a within-pair interval", kept)
	}
}
