package cpuwork

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// passCost is a cost model whose speed changes from one calibration pass to
// the next (a neighbour on the sibling hyper-thread coming and going): each
// pass of the search makes 4 measurements (the probe, two corrections and
// the final one), so the factor changes every 4 calls.
type passCost struct {
	perIterNs float64
	factors   []float64 // one per pass, the last repeated
	calls     int
}

const measurementsPerPass = 4

func (m *passCost) measure(n int) (Stats, error) {
	pass := min(m.calls/measurementsPerPass, len(m.factors)-1)
	m.calls++
	ns := (20 + m.perIterNs*float64(n)) * m.factors[pass]
	return Stats{Iterations: n, Runs: 1, CallsPerRun: 1, MedianNs: ns, MinNs: ns, MaxNs: ns}, nil
}

func TestCalibrateRepeatsUntilTwoPassesAgree(t *testing.T) {
	// At 0.5 ns per iteration and 20 ns per call, 740 ns is 1440 iterations;
	// at twice the cost (both halves doubled), 700.
	tests := []struct {
		name       string
		factors    []float64
		wantPasses int
		wantMin    int
		wantMax    int
	}{
		{"steady machine: two passes", []float64{1}, 2, 1426, 1454},
		// The seed's trouble: 974, 969, 2230 iterations in a row. Here the
		// second pass runs at half speed, the third agrees with the first.
		{"one slow pass in between", []float64{1, 2, 1}, 3, 1426, 1454},
		{"slow from the second pass on", []float64{1, 2, 2}, 3, 693, 707},
		// 3% apart: within 5%.
		{"small drift", []float64{1, 1.03}, 2, 1380, 1454},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := passCost{perIterNs: 0.5, factors: tc.factors}
			c, err := calibrate(740*time.Nanosecond, m.measure, MaxPasses)
			if err != nil {
				t.Fatal(err)
			}
			if !c.Agreed || len(c.Passes) != tc.wantPasses {
				t.Fatalf("agreed %v after %d passes %+v, want agreement after %d", c.Agreed, len(c.Passes), c.Passes, tc.wantPasses)
			}
			if c.Iterations < tc.wantMin || c.Iterations > tc.wantMax || c.Stats.Iterations != c.Iterations {
				t.Fatalf("iterations %d (stats for %d), want %d..%d", c.Iterations, c.Stats.Iterations, tc.wantMin, tc.wantMax)
			}
			if c.Iterations != c.Passes[len(c.Passes)-1].Iterations {
				t.Errorf("result %d is not the last pass %+v", c.Iterations, c.Passes)
			}
		})
	}
}

func TestCalibrateGivesUpWithTheSpread(t *testing.T) {
	// Every pass 20% slower than the one before: no two within 5%.
	m := passCost{perIterNs: 0.5, factors: []float64{1, 1.2, 1.44, 1.728, 2.0736, 2.48832}}
	c, err := calibrate(740*time.Nanosecond, m.measure, MaxPasses)
	var nae *NotAgreedError
	if !errors.As(err, &nae) {
		t.Fatalf("error %v, want a *NotAgreedError", err)
	}
	if c.Agreed || len(c.Passes) != MaxPasses || len(nae.Passes) != MaxPasses {
		t.Fatalf("agreed %v after %d passes", c.Agreed, len(c.Passes))
	}
	// 1440 down to 555 (the fixed cost slows too): the spread is about 159%.
	if s := c.Spread(); s < 1.5 || s > 1.7 {
		t.Errorf("spread %.2f, want about 1.59", s)
	}
	msg := err.Error()
	for _, want := range []string{"no two of 6 passes agreed within 5%", "iterations 14", "% above the smallest"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	// The count given is the median pass, with its own stats.
	if c.Iterations != c.Stats.Iterations || c.Iterations < 700 || c.Iterations > 1000 {
		t.Errorf("iterations %d (stats %d), want the median pass", c.Iterations, c.Stats.Iterations)
	}
}

func TestCalibrateReportsMeasurementErrors(t *testing.T) {
	calls := 0
	failing := func(n int) (Stats, error) {
		calls++
		if calls > measurementsPerPass {
			return Stats{}, fmt.Errorf("no clock")
		}
		return Stats{Iterations: n, MedianNs: float64(n)}, nil
	}
	if _, err := calibrate(time.Microsecond, failing, MaxPasses); err == nil || !strings.Contains(err.Error(), "no clock") {
		t.Fatalf("error %v, want the measurement's", err)
	}
	m := passCost{perIterNs: 0.5, factors: []float64{1}}
	if _, err := calibrate(0, m.measure, MaxPasses); err == nil {
		t.Fatal("target 0 accepted")
	}
}

func TestAgree(t *testing.T) {
	for _, tc := range []struct {
		a, b int
		want bool
	}{{1000, 1000, true}, {1000, 1050, true}, {1050, 1000, true}, {1000, 1051, false}, {974, 2230, false}, {1, 1, true}} {
		if got := agree(tc.a, tc.b); got != tc.want {
			t.Errorf("agree(%d, %d) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
