package reports

import (
	"math"
	"testing"
)

func TestRepeatInterval(t *testing.T) {
	vals := func(xs ...float64) []roundValue {
		out := make([]roundValue, len(xs))
		for i, x := range xs {
			out[i] = roundValue{round: &Round{Number: i + 1}, value: x, artifact: "a.json", field: "requests_per_sec"}
		}
		return out
	}
	tests := []struct {
		name   string
		xs     []float64
		lo, hi float64 // 0, 0: no interval
	}{
		{"one round", []float64{100}, 0, 0},
		{"two rounds: s from 2 is no estimate", []float64{100, 104}, 0, 0},
		// mean 100, s √2.5; half width t(4) 2.776445 × √(π/2) × √2.5 × √(2/5) = 3.4797.
		{"five rounds", []float64{100, 102, 98, 101, 99}, 96.5203, 103.4797},
		{"identical rounds: no width", []float64{7, 7, 7}, 7, 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp := spreadOf("x", vals(tc.xs...), 1, "req/s", 0)
			if tc.lo == 0 && tc.hi == 0 {
				if sp.repeatLo != nil || sp.repeatHi != nil {
					t.Fatalf("interval %v–%v, want none", sp.repeatLo.printed(), sp.repeatHi.printed())
				}
				return
			}
			if sp.repeatLo == nil || sp.repeatHi == nil {
				t.Fatal("no interval")
			}
			if got := sp.repeatLo.printed(); math.Abs(got-tc.lo) > 1e-3 {
				t.Errorf("low end %v, want %v", got, tc.lo)
			}
			if got := sp.repeatHi.printed(); math.Abs(got-tc.hi) > 1e-3 {
				t.Errorf("high end %v, want %v", got, tc.hi)
			}
		})
	}
}
