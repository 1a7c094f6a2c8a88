package bench

import (
	"strings"
	"testing"

	"weaseldb/artifacts"
	"weaseldb/plan"
)

func TestParseRateFractions(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		err  string
	}{
		{"0.25,0.5,0.75", 3, ""}, {"none", 0, ""}, {"", 0, ""}, {"1", 1, ""},
		{"0", 0, "not a fraction"}, {"1.5", 0, "not a fraction"}, {"x", 0, "not a fraction"},
	} {
		got, err := parseRateFractions(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || len(got) != tc.want {
			t.Errorf("%q: %v, %v", tc.in, got, err)
		}
	}
	o := WaitOptions{Common: Common{Plan: true, IdleS: 1}, DurationS: 5, Concurrency: 1, LoadThreads: 1, IOThreads: 1, Release: 1, RateFractions: "0.5"}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--rate-step-duration") {
		t.Errorf("a zero step duration was accepted: %v", err)
	}
}

// latencyRows keeps the compared strategies and the channel, on the cores
// asked for, with the case's field.
func TestLatencyRows(t *testing.T) {
	h := &artifacts.PipelineLatency{P50: 300, P99: 900, P999: 1000, Max: 2000, Count: 7}
	pb := &artifacts.PipelineBench{Cases: []artifacts.PipelineCase{
		{Family: "wait_strategy", Impl: "pipeline", Strategy: "Never"},
		{Family: "latency", Impl: "pipeline", Strategy: "Never", Cores: "dedicated", Kind: "one_way", Rate: "low", HandoffLatencyNs: h, CPUNsPerItem: 5},
		{Family: "latency", Impl: "pipeline", Strategy: "Never", Cores: "shared", Kind: "one_way", Rate: "low", HandoffLatencyNs: h},
		{Family: "latency", Impl: "pipeline", Strategy: "WaitIfStageEmpty", Cores: "shared", Kind: "one_way", Rate: "low", HandoffLatencyNs: h},
		{Family: "latency", Impl: "channel", Strategy: "-", Cores: "shared", Kind: "one_way", Rate: "low", Skipped: true, SkipReason: "why"},
	}}
	rows := latencyRows(pb, plan.WaitParams{Strategies: []string{"Never"}, Dedicated: true})
	if len(rows) != 3 || rows[0].Field != "cases[1]" || rows[0].P50Ns != 300 || rows[0].Samples != 7 || rows[0].CPUNsPerItem != 5 || !rows[2].Skipped || rows[2].Reason != "why" {
		t.Fatalf("%+v", rows)
	}
	if rows := latencyRows(pb, plan.WaitParams{Strategies: []string{"Never"}}); len(rows) != 2 || rows[0].Cores != "shared" {
		t.Fatalf("shared only: %+v", rows)
	}
}

func TestFormatWaitLatency(t *testing.T) {
	ws := &artifacts.WaitStrategies{
		LatencyArtifact: "ws_pipeline_latency.json", LatencyClockReadNs: 26,
		PipelineLatency: []artifacts.WaitLatency{
			{Impl: "pipeline", Strategy: "Never", Cores: "dedicated", Kind: "one_way", Rate: "low", P50Ns: 274, P99Ns: 6_550_000, P999Ns: 9_810_000, MaxNs: 9_810_000, CPUNsPerItem: 915_830},
			{Impl: "pipeline", Strategy: "Never", Cores: "dedicated", Kind: "round_trip", Rate: "low", Skipped: true, Reason: "needs at least 2 CPUs"},
		},
		Runs: []artifacts.WaitRun{{Bench: artifacts.BenchServer, Strategy: "Never", Cores: "shared", Status: artifacts.StatusMeasured,
			RateSteps:                []artifacts.WaitRateStep{{Fraction: 0.25, RateAsked: 12096, RateAchieved: 12090, P50Ns: 406_530, P99Ns: 31_110_000, P999Ns: 45_250_000, Unfinished: 3}},
			RateStepsCPUNsPerRequest: ptr(67_580)}},
	}
	out := FormatWaitLatency(ws)
	for _, want := range []string{"one clock read 26.0ns", "274.0ns", "6.55ms", "915.83µs", "skipped: needs at least 2 CPUs",
		"12,096", "406.53µs", "67.58µs", "NOT CLEAN: 3 unfinished"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if FormatWaitLatency(&artifacts.WaitStrategies{}) != "" {
		t.Error("nothing measured should print nothing")
	}
}
