package result

import (
	"strings"
	"testing"
)

func TestParseThreshold(t *testing.T) {
	tests := []struct {
		expr    string
		want    Threshold
		wantErr string
	}{
		{"p99<5ms", Threshold{Expr: "p99<5ms", Metric: "p99", Op: "<", Limit: 5e6}, ""},
		{" p99.9 <= 20ms ", Threshold{Expr: "p99.9<=20ms", Metric: "p99.9", Op: "<=", Limit: 20e6}, ""},
		{"P999<1s", Threshold{Expr: "P999<1s", Metric: "p99.9", Op: "<", Limit: 1e9}, ""},
		{"max<=500us", Threshold{Expr: "max<=500us", Metric: "max", Op: "<=", Limit: 500e3}, ""},
		{"p50<1.5µs", Threshold{Expr: "p50<1.5µs", Metric: "p50", Op: "<", Limit: 1500}, ""},
		{"mean<2ms", Threshold{Expr: "mean<2ms", Metric: "mean", Op: "<", Limit: 2e6}, ""},
		{"errors<0.1%", Threshold{Expr: "errors<0.1%", Metric: "errors", Op: "<", Limit: 0.1, Percent: true}, ""},
		{"errors<=10", Threshold{Expr: "errors<=10", Metric: "errors", Op: "<=", Limit: 10}, ""},
		{"rps>10000", Threshold{Expr: "rps>10000", Metric: "rps", Op: ">", Limit: 10000}, ""},
		{"rps>=1e4", Threshold{Expr: "rps>=1e4", Metric: "rps", Op: ">=", Limit: 10000}, ""},
		{"p99", Threshold{}, "no metric and comparison"},
		{"<5ms", Threshold{}, "no metric and comparison"},
		{"p98<5ms", Threshold{}, `unknown metric "p98"`},
		{"p99<", Threshold{}, "no limit"},
		{"p99<<5ms", Threshold{}, "one comparison only"},
		{"p99<=>5ms", Threshold{}, "one comparison only"},
		{"p99<5", Threshold{}, "positive duration"},
		{"p99<-5ms", Threshold{}, "positive duration"},
		{"errors<x%", Threshold{}, "count"},
		{"errors<101%", Threshold{}, "count"},
		{"errors<-1", Threshold{}, "count"},
		{"rps>fast", Threshold{}, "requests per second"},
		{"rps>NaN", Threshold{}, "requests per second"},
		{"rps>1%", Threshold{}, "requests per second"},
	}
	for _, tt := range tests {
		got, err := ParseThreshold(tt.expr)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), tt.expr) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%q: err %v, want one line naming it with %q", tt.expr, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%q: got %+v, %v; want %+v", tt.expr, got, err, tt.want)
		}
	}
}

func TestJudgeThresholds(t *testing.T) {
	res := &Result{Latency: Latency{P50: 1e6, P90: 2e6, P99: 4e6, P999: 8e6, Max: 20e6, Mean: 1.5e6},
		RequestsPerSec: 12000, Due: 1000, Requests: 990, Errors: 6, Failed: 4, Unfinished: 3, Dropped: 1}
	tests := []struct {
		expr     string
		measured float64
		pass     bool
	}{
		{"p50<2ms", 1e6, true},
		{"p90<2ms", 2e6, false},
		{"p90<=2ms", 2e6, true},
		{"p99<5ms", 4e6, true},
		{"p99.9<5ms", 8e6, false},
		{"max<10ms", 20e6, false},
		{"mean<1ms", 1.5e6, false},
		{"errors<1%", 1, false}, // (6 + 3 + 1) / 1000
		{"errors<=1%", 1, true},
		{"errors<=10", 10, true},
		{"errors<10", 10, false},
		{"rps>10000", 12000, true},
		{"rps>=20000", 12000, false},
	}
	var all []Threshold
	for _, tt := range tests {
		th, err := ParseThreshold(tt.expr)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, th)
		rs, pass := JudgeThresholds(res, []Threshold{th})
		if len(rs) != 1 || rs[0].Measured != tt.measured || rs[0].Pass != tt.pass || pass != tt.pass {
			t.Errorf("%s: got %+v pass %v, want measured %g pass %v", tt.expr, rs, pass, tt.measured, tt.pass)
		}
	}
	rs, pass := JudgeThresholds(res, all)
	res.Thresholds = rs
	if pass || res.ThresholdsPass() || !strings.Contains(res.CrossedThresholds(), "p90<2ms (measured 2.00ms)") {
		t.Errorf("all together: pass %v, crossed %q", pass, res.CrossedThresholds())
	}
	var b strings.Builder
	PrintThresholds(&b, rs)
	if !strings.Contains(b.String(), "threshold") || !strings.Contains(b.String(), "errors<1%") || strings.Count(b.String(), "FAIL") != 7 {
		t.Errorf("table:\n%s", b.String())
	}
	if _, pass := JudgeThresholds(&Result{}, nil); !pass {
		t.Error("no thresholds must pass")
	}
	if rs, _ := JudgeThresholds(&Result{}, all[7:8]); rs[0].Measured != 0 || !rs[0].Pass {
		t.Errorf("nothing due, nothing failed: errors %% %v", rs[0])
	}
}

// FuzzParseThreshold: any input is parsed or refused in one line naming it,
// never a panic; what parses parses again from its Expr to the same.
func FuzzParseThreshold(f *testing.F) {
	for _, s := range []string{"p99<5ms", "errors<0.1%", "rps>10000", "p99.9 <= 1s", "max>=1h", "errors<=3", "<", "p99<<"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := ParseThreshold(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") && !strings.Contains(s, "\n") {
				t.Fatalf("%q: error of more than one line: %v", s, err)
			}
			return
		}
		again, err := ParseThreshold(th.Expr)
		if err != nil || again != th {
			t.Fatalf("%q parsed to %+v, its Expr to %+v (%v)", s, th, again, err)
		}
	})
}
