package loadtester

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"weaseldb/loadtester/result"
)

// modelServer stands in for Run: a server whose corrected p99 is 200 µs up
// to knee req/s and 5 ms past it, answering every due request.
func modelServer(knee float64) func(context.Context, Config) (*result.Result, error) {
	return func(_ context.Context, cfg Config) (*result.Result, error) {
		dur := cfg.Duration.Seconds()
		due := int64(cfg.Rate * dur)
		p99 := int64(200 * time.Microsecond)
		if cfg.Rate > knee {
			p99 = int64(5 * time.Millisecond)
		}
		l := result.Latency{P50: p99 / 4, P90: p99 / 2, P99: p99, P999: 2 * p99, Max: 3 * p99}
		return &result.Result{Version: result.ResultVersion, Target: cfg.TargetURL(), RateAsked: cfg.Rate, DurationS: dur,
			RequestsPerSec: float64(due) / dur, Due: due, Answered: due, Requests: due, Latency: l,
			ServiceLatency: &l, Config: cfg.resultRecord()}, nil
	}
}

// --find-rate over a server whose latency rises past a known rate: the
// search, judging each step against p99<=1ms, finds that rate within one
// step of its precision, every step has its row, and the document reads
// back as written.
func TestFindRateStepsAgainstAModelServer(t *testing.T) {
	for _, knee := range []float64{3000, 41_000, 250_000} {
		cfg := DefaultConfig()
		cfg.Duration = 2 * time.Second
		objs, err := result.ParseObjectives("p99=1ms")
		if err != nil {
			t.Fatal(err)
		}
		sr := &StepRunner{Config: cfg, Objectives: objs, run: modelServer(knee)}
		spec := result.DefaultSearchSpec()
		spec.Start, spec.MaxSteps = 1000, 100
		out, err := FindRateSteps(context.Background(), sr, spec)
		if err != nil {
			t.Fatal(err)
		}
		s := out.Search
		if !(s.LastPass <= knee && s.FirstFail > knee && s.FirstFail/s.LastPass-1 <= spec.Precision) || !s.Confirmed {
			t.Errorf("knee %g: bracket [%g, %g], confirmed %v: want the knee inside a bracket of at most %g",
				knee, s.LastPass, s.FirstFail, s.Confirmed, spec.Precision)
		}
		if len(out.Steps) != len(s.Trials) {
			t.Fatalf("%d steps for %d trials", len(out.Steps), len(s.Trials))
		}
		for i, st := range out.Steps {
			if st.N != i+1 || st.RateAsked != s.Trials[i].Rate || st.Pass == nil || *st.Pass != s.Trials[i].Pass {
				t.Errorf("step %d: %+v does not match trial %+v", i+1, st, s.Trials[i])
			}
			if !*st.Pass && !strings.Contains(strings.Join(st.FailReasons, ";"), "p99 5.00ms > 1.00ms") {
				t.Errorf("step %d failed for %v: want the p99 named", i+1, st.FailReasons)
			}
		}
		path := filepath.Join(t.TempDir(), "steps.json")
		var buf bytes.Buffer
		if err := result.WriteSteps(&buf, out); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		back, err := result.ReadSteps(path)
		if err != nil {
			t.Fatal(err)
		}
		if back.Kind != result.StepsKind || back.Search.Rate != s.Rate || len(back.Steps) != len(out.Steps) || back.Steps[0].Result.Due != out.Steps[0].Due {
			t.Errorf("read back: kind %q, rate %g, %d steps", back.Kind, back.Search.Rate, len(back.Steps))
		}
		if _, err := result.ReadResult(path); err == nil || !strings.Contains(err.Error(), "ReadSteps") {
			t.Errorf("ReadResult of a steps document: %v, want a refusal naming ReadSteps", err)
		}
	}
}

func TestRateStepsSpec(t *testing.T) {
	tests := []struct {
		in      string
		want    []float64
		wantErr bool
	}{
		{"10000,20000,40000", []float64{10000, 20000, 40000}, false},
		{"10000x2x4", []float64{10000, 20000, 40000, 80000}, false},
		{"1000x1.5x3", []float64{1000, 1500, 2250}, false},
		{"500", []float64{500}, false},
		{"10000x2", nil, true},
		{"10000x2x0", nil, true},
		{"1,-2", nil, true},
		{"fast", nil, true},
	}
	for _, tt := range tests {
		got, err := RateStepsSpec(tt.in)
		if (err != nil) != tt.wantErr || len(got) != len(tt.want) {
			t.Errorf("%q: %v, %v", tt.in, got, err)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%q: %v, want %v", tt.in, got, tt.want)
			}
		}
	}
}

// Rate steps against the test server: each step runs its own open loop
// with a warm-up, and accounts for every due request (due = the schedule's
// share of the window, = answered + failed + unfinished + dropped, no
// accounting warning), with an HDR log per step.
func TestRunStepsAccounting(t *testing.T) {
	s := startTestServer(t, "tcp", nil)
	cfg := testConfig(s)
	cfg.Duration, cfg.Warmup, cfg.StatsInterval = 500*time.Millisecond, 200*time.Millisecond, 250*time.Millisecond
	cfg.NetworkThreads, cfg.Concurrency = 2, 8
	dir := t.TempDir()
	var logs []*result.HDRLog
	var files []*os.File
	sr := &StepRunner{Config: cfg,
		Before: func(n int, rate float64, c *Config) {
			f, err := os.Create(filepath.Join(dir, "step.hlog"+string(rune('0'+n))))
			if err != nil {
				t.Fatal(err)
			}
			files, logs = append(files, f), append(logs, result.NewHDRLog(f))
			c.OnInterval = logs[n-1].Interval
		},
		After: func(n int, st *result.Step) error {
			defer files[n-1].Close()
			return logs[n-1].Finish(st.Result)
		}}
	out, err := RunSteps(context.Background(), sr, []float64{200, 400})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Steps) != 2 || out.Interrupted {
		t.Fatalf("%d steps, interrupted %v", len(out.Steps), out.Interrupted)
	}
	for _, st := range out.Steps {
		res := st.Result
		want := int64(st.RateAsked * cfg.Duration.Seconds())
		if st.Due != want || st.Due != st.Answered+st.Failed+st.Unfinished+st.Dropped || res.Warmup == nil || res.Warmup.Due == 0 {
			t.Errorf("step %d at %g/s: due %d (want %d) = %d + %d + %d + %d, warm-up %+v",
				st.N, st.RateAsked, st.Due, want, st.Answered, st.Failed, st.Unfinished, st.Dropped, res.Warmup)
		}
		for _, w := range res.Warnings {
			if strings.Contains(w, "accounting mismatch") {
				t.Errorf("step %d: %s", st.N, w)
			}
		}
		if st.Pass != nil {
			t.Errorf("step %d judged without an objective", st.N)
		}
	}
}
