package result

import (
	"strings"
	"testing"
)

func TestParseObjectives(t *testing.T) {
	tests := []struct {
		in      string
		want    []Objective
		wantErr string
	}{
		{"p99=1ms", []Objective{{Percentile: "p99", LimitNs: 1e6}}, ""},
		{"p50=200us, P999=5ms,max=1s", []Objective{{Percentile: "p50", LimitNs: 2e5}, {Percentile: "p99.9", LimitNs: 5e6}, {Percentile: "max", LimitNs: 1e9}}, ""},
		{"p99.9=2ms", []Objective{{Percentile: "p99.9", LimitNs: 2e6}}, ""},
		{"p95=1ms", nil, "p50, p90, p99, p99.9, max"},
		{"p99", nil, "PERCENTILE=DURATION"},
		{"p99=fast", nil, "positive duration"},
		{"p99=-1ms", nil, "positive duration"},
	}
	for _, tt := range tests {
		got, err := ParseObjectives(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: err %v, want one naming %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || len(got) != len(tt.want) {
			t.Fatalf("%q: %v, %v", tt.in, got, err)
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%q: %+v, want %+v", tt.in, got[i], tt.want[i])
			}
		}
	}
}

// Judge passes a step only when every objective holds and every due
// request was answered at the rate asked, by a client that kept up.
func TestJudge(t *testing.T) {
	objs, err := ParseObjectives("p99=1ms,p99.9=5ms")
	if err != nil {
		t.Fatal(err)
	}
	good := Result{RateAsked: 1000, RequestsPerSec: 1000, Answered: 1000, Latency: Latency{P99: 900_000, P999: 4_000_000}}
	tests := []struct {
		name string
		edit func(*Result)
		want string // "" passes
	}{
		{"meets", func(*Result) {}, ""},
		{"p99 over", func(r *Result) { r.Latency.P99 = 1_200_000 }, "p99 1.20ms > 1.00ms"},
		{"p99.9 over", func(r *Result) { r.Latency.P999 = 6_000_000 }, "p99.9 6.00ms > 5.00ms"},
		{"unfinished", func(r *Result) { r.Unfinished = 3 }, "3 unfinished"},
		{"dropped", func(r *Result) { r.Dropped = 2 }, "2 dropped"},
		{"failed", func(r *Result) { r.Failed = 1 }, "1 failed"},
		{"rate short by 2.5%", func(r *Result) { r.RequestsPerSec = 975 }, "2.5% under the 1000/s asked"},
		{"rate short by 1.5% passes", func(r *Result) { r.RequestsPerSec = 985 }, ""},
		{"client-bound alone passes (its lateness is in the latency)", func(r *Result) { r.ClientBound = true }, ""},
		{"interrupted", func(r *Result) { r.Interrupted = true }, "interrupted"},
		{"nothing answered", func(r *Result) { r.Answered, r.Failed, r.Latency = 0, 1000, Latency{} }, "nothing to judge"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := good
			tt.edit(&r)
			pass, reasons := Judge(&r, objs)
			if pass != (tt.want == "") || (tt.want != "" && !strings.Contains(strings.Join(reasons, "; "), tt.want)) {
				t.Errorf("pass %v, reasons %q; want %q", pass, reasons, tt.want)
			}
		})
	}
}

// The steps table shows the failed requests and their p99 when a step had
// any (a dash where none of them got a response), and leaves the columns
// out when no step failed.
func TestPrintStepsFailedColumns(t *testing.T) {
	p99 := Latency{P99: 2_500_000}
	cases := []struct {
		name  string
		steps []Step
		want  []string // substrings of the output, in order
		not   []string
	}{
		{"none failed", []Step{{N: 1, RateAsked: 100, RateAchieved: 100}}, []string{"dropped  cpu/req"}, []string{"fail p99"}},
		{"a check refused some", []Step{{N: 1, RateAsked: 100}, {N: 2, RateAsked: 200, Failed: 7, FailedLatency: &p99}},
			[]string{"failed  fail p99", "0         -", "7    2.50ms"}, nil},
		{"failed without a response", []Step{{N: 1, RateAsked: 100, Failed: 3}}, []string{"3         -"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			PrintSteps(&b, &StepsResult{Target: "t", Steps: c.steps})
			out, rest := b.String(), b.String()
			for _, w := range c.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("no %q (in order) in\n%s", w, out)
				}
				rest = rest[i+len(w):]
			}
			for _, n := range c.not {
				if strings.Contains(out, n) {
					t.Errorf("%q in\n%s", n, out)
				}
			}
		})
	}
}
