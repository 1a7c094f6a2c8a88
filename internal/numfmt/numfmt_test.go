package numfmt

import (
	"math"
	"testing"
)

func TestFormat(t *testing.T) {
	tests := []struct {
		v    float64
		prec int
		want string
	}{
		{0, 0, "0"},
		{999, 0, "999"},
		{1000, 0, "1,000"},
		{825000, 0, "825,000"},
		{1234567.891, 2, "1,234,567.89"},
		{-61234.5, 1, "-61,234.5"},
		{0.004, 2, "0.00"},
		{math.NaN(), 1, "n/a"},
		{math.Inf(1), 0, "n/a"},
	}
	for _, tt := range tests {
		if got := Format(tt.v, tt.prec); got != tt.want {
			t.Errorf("Format(%v, %d) = %q, want %q", tt.v, tt.prec, got, tt.want)
		}
	}
}

func TestParseRoundTrip(t *testing.T) {
	for _, v := range []float64{0, 1, 999.5, 1234567.25, -42000.125, 6.5} {
		for prec := 0; prec <= 3; prec++ {
			text := Format(v, prec)
			got, dec, err := Parse(text)
			if err != nil {
				t.Fatalf("Parse(%q): %v", text, err)
			}
			if dec != prec || math.Abs(got-v) > 0.5*math.Pow10(-prec)+1e-9 {
				t.Errorf("Parse(%q) = %v, %d; want about %v, %d", text, got, dec, v, prec)
			}
		}
	}
	if _, _, err := Parse("12 req/s"); err == nil {
		t.Error("ParseNumber accepted a unit")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"1,234.5", "0", "-1", "n/a", "1e9", ",,,", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, _, err := Parse(s)
		if err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) && math.Abs(v) < 1e15 {
			// What parses must print and parse back to the same value at 6 decimals.
			back, _, err := Parse(Format(v, 6))
			if err != nil || math.Abs(back-v) > 1e-6*math.Max(1, math.Abs(v)) {
				t.Fatalf("round trip of %q: %v, %v", s, back, err)
			}
		}
	})
}

func TestInt(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {-1234567, "-1,234,567"}, {math.MinInt64, "-9,223,372,036,854,775,808"}} {
		if got := Int(tt.n); got != tt.want {
			t.Errorf("Int(%d) = %q, want %q", tt.n, got, tt.want)
		}
		if v, _, err := Parse(Int(tt.n)); err != nil || v != float64(tt.n) {
			t.Errorf("Parse(Int(%d)) = %v, %v", tt.n, v, err)
		}
	}
}

func TestLatency(t *testing.T) {
	for _, tc := range []struct {
		ns   int64
		want string
	}{
		{0, "0ns"},
		{812, "812ns"},
		{999, "999ns"},
		{1000, "1.0µs"},
		{12_345, "12.3µs"},
		{4_510_000, "4.51ms"},
		{999_999_999, "1000.00ms"},
		{2_500_000_000, "2.500s"},
	} {
		if got := Latency(tc.ns); got != tc.want {
			t.Errorf("Latency(%d) = %q, want %q", tc.ns, got, tc.want)
		}
	}
}
