package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"weaseldb/artifacts"
)

func TestWaitStrategiesFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no run dir", nil, "--run DIR is required"},
		{"short duration", []string{"--run", "x", "--duration", "1"}, "at least 2 s"},
		{"bad strategy", []string{"--run", "x", "--strategies", "Sometimes"}, `unknown strategy "Sometimes"`},
		{"bad cores", []string{"--run", "x", "--cores", "isolated"}, "--cores takes shared and/or dedicated"},
		{"bad simulated set", []string{"--allowed-cpus", "3-1"}, "bad range"},
		{"zero load threads", []string{"--run", "x", "--load-threads", "0"}, "must be ≥ 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(t.Context(), append([]string{"wait-strategies"}, tt.args...), &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestWaitStrategiesPlanSimulated plans against simulated CPU sets: 2 CPUs
// skip every dedicated run with the count needed; 16 CPUs plan them all.
func TestWaitStrategiesPlanSimulated(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), []string{"wait-strategies", "--allowed-cpus", "0-1"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "skip: needs 4 CPUs"); n != 3 {
		t.Errorf("2 CPUs: %d pipeline runs skipped for 4 CPUs, want 3:\n%s", n, out.String())
	}
	if n := strings.Count(out.String(), "skip: needs 7 CPUs"); n != 3 {
		t.Errorf("2 CPUs: %d server runs skipped for 7 CPUs, want 3:\n%s", n, out.String())
	}
	// bench_pipeline's latency family has dedicated cores from 2 CPUs.
	if !strings.Contains(out.String(), "latency family      both       run: dedicated cores, none kept (2 CPUs for 2 threads)") {
		t.Errorf("2 CPUs: the latency family's plan is missing:\n%s", out.String())
	}
	out.Reset()
	if err := run(t.Context(), []string{"wait-strategies", "--allowed-cpus", "0-15"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "skip") || strings.Count(out.String(), "io 10; stages 11 12 13 14; load_tester 15") != 3 {
		t.Errorf("16 CPUs: want every run planned:\n%s", out.String())
	}
}

// TestWaitStrategiesRealBinaries runs one strategy on shared cores with the
// binaries in build/, for 2 s of load: behaviour, not speed.
func TestWaitStrategiesRealBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the end-to-end comparison run")
	}
	build, err := filepath.Abs("../../build")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"weaseldb", "load_tester", "bench_pipeline"} {
		if _, err := os.Stat(filepath.Join(build, b)); err != nil {
			t.Skipf("build/%s missing (run make build): skipping the end-to-end comparison run", b)
		}
	}
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	err = run(t.Context(), []string{"wait-strategies", "--bin", build, "--run", dir, "--strategies", "WaitIfStageEmpty",
		"--duration", "2", "--warmup", "0", "--idle", "1", "--concurrency", "10", "--idle-conns", "10",
		"--rate-fractions", "0.5", "--rate-step-duration", "1", "--latency-samples", "10"}, &out, &errOut)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	var ws artifacts.WaitStrategies
	data, err := os.ReadFile(filepath.Join(dir, artifacts.WaitStrategiesFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &ws); err != nil {
		t.Fatal(err)
	}
	if len(ws.Runs) != 4 {
		t.Fatalf("%d runs, want 4 (pipeline and server, shared and dedicated)", len(ws.Runs))
	}
	for _, r := range ws.Runs {
		switch {
		case r.Status == artifacts.StatusSkipped:
			if r.Cores != artifacts.CoresDedicated || r.CPUsNeeded == 0 {
				t.Errorf("skipped run %+v", r)
			}
		case r.Status != artifacts.StatusMeasured:
			t.Errorf("%s %s %s: %s: %s", r.Bench, r.Strategy, r.Cores, r.Status, r.Reason)
		case r.Throughput == nil || *r.Throughput <= 0 || r.CPUNsPerOp == nil || r.IdleCoreFraction == nil:
			t.Errorf("%s %s: figures missing: %+v", r.Bench, r.Cores, r)
		case r.Bench == artifacts.BenchServer && (r.P99Ns == nil || r.Reason != ""):
			t.Errorf("server run: p99 %v, reason %q", r.P99Ns, r.Reason)
		}
	}
	if !strings.Contains(out.String(), "WaitIfStageEmpty") {
		t.Errorf("no table on stdout:\n%s", out.String())
	}
	for _, r := range ws.Runs {
		if r.Bench == artifacts.BenchServer && r.Status == artifacts.StatusMeasured &&
			(len(r.RateSteps) != 1 || r.RateSteps[0].Fraction != 0.5 || r.RateSteps[0].RateAsked <= 0 || r.RateSteps[0].P99Ns <= 0 || r.RateStepsCPUNsPerRequest == nil) {
			t.Errorf("server run's open-loop step: %+v (%s)", r.RateSteps, r.RateStepsReason)
		}
	}
	// The latency family: WaitIfStageEmpty and the channel, 2 kinds x 2
	// rates x 2 kinds of cores; on 2 or more CPUs none skipped.
	if len(ws.PipelineLatency) != 16 || ws.LatencyArtifact == "" || ws.LatencyClockReadNs <= 0 {
		t.Fatalf("latency: %d rows, artifact %q, clock %v (%s)", len(ws.PipelineLatency), ws.LatencyArtifact, ws.LatencyClockReadNs, ws.LatencyReason)
	}
	for _, l := range ws.PipelineLatency {
		if l.Skipped || l.P50Ns <= 0 || l.Samples <= 0 {
			t.Errorf("latency row %+v", l)
		}
	}
}
