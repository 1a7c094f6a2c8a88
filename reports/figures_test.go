package reports

import (
	"encoding/json"
	"math"
	"testing"
)

func TestFormatNumber(t *testing.T) {
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
		if got := FormatNumber(tt.v, tt.prec); got != tt.want {
			t.Errorf("FormatNumber(%v, %d) = %q, want %q", tt.v, tt.prec, got, tt.want)
		}
	}
}

func TestParseNumberRoundTrip(t *testing.T) {
	for _, v := range []float64{0, 1, 999.5, 1234567.25, -42000.125, 6.5} {
		for prec := 0; prec <= 3; prec++ {
			text := FormatNumber(v, prec)
			got, dec, err := ParseNumber(text)
			if err != nil {
				t.Fatalf("ParseNumber(%q): %v", text, err)
			}
			if dec != prec || math.Abs(got-v) > 0.5*math.Pow10(-prec)+1e-9 {
				t.Errorf("ParseNumber(%q) = %v, %d; want about %v, %d", text, got, dec, v, prec)
			}
		}
	}
	if _, _, err := ParseNumber("12 req/s"); err == nil {
		t.Error("ParseNumber accepted a unit")
	}
}

func TestLookupField(t *testing.T) {
	var doc any
	if err := json.Unmarshal([]byte(`{"a": {"b": [1, {"c": 2.5}, [7, 8]]}, "ok": true, "s": "x"}`), &doc); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path    string
		want    float64
		wantErr bool
	}{
		{"a.b[0]", 1, false},
		{"a.b[1].c", 2.5, false},
		{"a.b[2][1]", 8, false},
		{"ok", 1, false},
		{"s", 0, true},
		{"a.x", 0, true},
		{"a.b[3]", 0, true},
		{"a.b[-1]", 0, true},
		{"a.b[x]", 0, true},
		{"a.b[1", 0, true},
		{"ok.deeper", 0, true},
	}
	for _, tt := range tests {
		got, err := LookupNumber(doc, tt.path)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("LookupNumber(%q) = %v, %v; want %v, error %v", tt.path, got, err, tt.want, tt.wantErr)
		}
	}
}

func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"1,234.5", "0", "-1", "n/a", "1e9", ",,,", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, _, err := ParseNumber(s)
		if err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) && math.Abs(v) < 1e15 {
			// What parses must print and parse back to the same value at 6 decimals.
			back, _, err := ParseNumber(FormatNumber(v, 6))
			if err != nil || math.Abs(back-v) > 1e-6*math.Max(1, math.Abs(v)) {
				t.Fatalf("round trip of %q: %v, %v", s, back, err)
			}
		}
	})
}

func FuzzLookupField(f *testing.F) {
	f.Add(`{"a": {"b": [1, {"c": 2}]}}`, "a.b[1].c")
	f.Add(`[1, 2]`, "[1]")
	f.Add(`{"x": 1}`, "x[0][")
	f.Fuzz(func(t *testing.T, doc, path string) {
		var v any
		if json.Unmarshal([]byte(doc), &v) != nil {
			return
		}
		_, _ = LookupField(v, path) // must not panic
		_, _ = LookupNumber(v, path)
	})
}
