package gate

import (
	"math"
	"testing"
	"time"

	"weaseldb/gate/verdict"
)

// The trace reads a window's CPU between its samples, linearly, and says
// when the window is not covered.
func TestCPUTraceBetween(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tr := &cpuTrace{points: []cpuPoint{{t0, 0}, {t0.Add(10 * time.Millisecond), 10 * time.Millisecond},
		{t0.Add(20 * time.Millisecond), 10 * time.Millisecond}, {t0.Add(30 * time.Millisecond), 30 * time.Millisecond}}}
	tests := []struct {
		name string
		a, b time.Duration
		want time.Duration
		ok   bool
	}{
		{"whole", 0, 30 * time.Millisecond, 30 * time.Millisecond, true},
		{"inside one span", 2 * time.Millisecond, 7 * time.Millisecond, 5 * time.Millisecond, true},
		{"across an idle span", 5 * time.Millisecond, 25 * time.Millisecond, 15 * time.Millisecond, true},
		{"before the first sample", -time.Millisecond, 5 * time.Millisecond, 0, false},
		{"after the last", 5 * time.Millisecond, 31 * time.Millisecond, 0, false},
		{"backwards", 20 * time.Millisecond, 10 * time.Millisecond, 0, false},
	}
	for _, tt := range tests {
		got, ok := tr.between(t0.Add(tt.a), t0.Add(tt.b))
		if ok != tt.ok || got != tt.want {
			t.Errorf("%s: %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

// A live trace samples until stopped, and its last sample is taken at stop.
func TestCPUTraceSamples(t *testing.T) {
	var n time.Duration
	clock := time.Unix(0, 0)
	tr := startCPUTrace(func() (time.Duration, error) { n += time.Millisecond; return n, nil },
		func() time.Time { clock = clock.Add(time.Millisecond); return clock })
	time.Sleep(20 * time.Millisecond)
	tr.stop()
	if len(tr.points) < 2 {
		t.Fatalf("%d samples", len(tr.points))
	}
	last := tr.points[len(tr.points)-1]
	if got, ok := tr.between(tr.points[0].at, last.at); !ok || got != last.cpu-tr.points[0].cpu {
		t.Errorf("whole trace %v, %v", got, ok)
	}
}

// CPU per request is judged by the req/s rule on its inverse: a B whose
// requests cost 10% more CPU, round after round, is a regression even when
// its req/s passed; a noisy or missing judgement never overrides req/s.
func TestJudgeCPU(t *testing.T) {
	base := []float64{1000, 1010, 990, 1005, 995, 1000, 1002, 998, 1001, 999}
	scaled := func(f float64) []float64 {
		out := make([]float64, len(base))
		for i, v := range base {
			out[i] = v * f
		}
		return out
	}
	p := verdict.Policy{Tolerance: 0.05}
	pass := verdict.Decision{Verdict: verdict.Pass, ReasonCode: verdict.ReasonWithinTolerance}
	if j := judgeCPU(base, scaled(1.0), 0.95, p); j == nil || j.Verdict != verdict.Pass || withCPU(pass, j).Verdict != verdict.Pass {
		t.Fatalf("A/A: %+v", j)
	}
	j := judgeCPU(base, scaled(1.10), 0.95, p)
	if j == nil || j.Verdict != verdict.Regression || j.ReasonCode != verdict.ReasonCPUHigher {
		t.Fatalf("B 10%% dearer: %+v", j)
	}
	if d := withCPU(pass, j); d.Verdict != verdict.Regression || d.ReasonCode != verdict.ReasonCPUHigher {
		t.Errorf("a req/s pass with a CPU regression: %+v", d)
	}
	slower := verdict.Decision{Verdict: verdict.Regression, ReasonCode: verdict.ReasonSlower}
	if d := withCPU(slower, j); d.ReasonCode != verdict.ReasonSlower {
		t.Errorf("a req/s regression keeps its own reason: %+v", d)
	}
	if j := judgeCPU([]float64{1, math.NaN()}, []float64{1, 2}, 0.95, p); j != nil {
		t.Errorf("fewer than 3 pairs judged: %+v", j)
	}
	if d := withCPU(pass, nil); d != pass {
		t.Errorf("no CPU judgement changed the decision: %+v", d)
	}
}
