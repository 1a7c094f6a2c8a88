package pipebench

// The JSON artifact (artifacts.PipelineBench, docs/CONTRACTS.md) of one
// bench_pipeline run.

import (
	"fmt"
	"runtime"
	"slices"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"weaseldb/artifacts"
)

// Report is what one run measured, as Artifact writes it down.
type Report struct {
	Quick   bool
	CPUs    []int // the throughput families' producer, then stage 0, stage 1; empty: not pinned
	Results []Result
	Idle    []IdleResult
	Latency []LatencyRow
	Clock   *artifacts.PipelineClock // the latency family's; nil without it
}

// PipelineClock is the clock's cost as the JSON's clock, with the kernel's
// clocksource (ClockSource; "" where unknown).
func PipelineClock(c ClockCost, source string) *artifacts.PipelineClock {
	return &artifacts.PipelineClock{Source: source, Reads: c.Reads, ReadNs: c.ReadNs, ResolutionNs: c.ResolutionNs}
}

// Artifact is the report as the JSON artifact, with this process's
// GOMAXPROCS, CPU count and Go version. Its cases are the throughput
// results, then the latency rows; cases and idle are never null.
func Artifact(rep Report) (artifacts.PipelineBench, error) {
	out := artifacts.PipelineBench{
		Version:    1,
		Quick:      rep.Quick,
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		NumCPU:     runtime.NumCPU(),
		GoVersion:  runtime.Version(),
		CPUs:       rep.CPUs,
		Cases:      []artifacts.PipelineCase{},
		Idle:       []artifacts.PipelineIdle{},
		Clock:      rep.Clock,
	}
	cores := artifacts.CoresShared
	if len(rep.CPUs) > 0 && len(slices.Compact(slices.Sorted(slices.Values(rep.CPUs)))) == len(rep.CPUs) {
		cores = artifacts.CoresDedicated
	}
	for _, r := range rep.Results {
		out.Cases = append(out.Cases, artifacts.PipelineCase{
			Family: r.Family, Name: r.Name, Impl: string(r.Impl), Strategy: r.StrategyName(),
			Stages: r.Stages, Batch: r.Batch, SpinIters: r.SpinIters,
			NsPerItem: r.NsPerItem, ItemsPerSec: r.ItemsPerSec, CPUNsPerItem: r.CPUNsPerItem,
			NsPerItemMin: r.NsPerItemMin, NsPerItemMax: r.NsPerItemMax, RatioToFirst: r.RatioToFirst,
			Items: r.Items, Runs: r.Runs, SlotCount: 1 << r.LgSlots, Cores: cores,
		})
	}
	for _, row := range rep.Latency {
		c, err := latencyCase(row)
		if err != nil {
			return out, err
		}
		out.Cases = append(out.Cases, c)
	}
	for _, r := range rep.Idle {
		out.Idle = append(out.Idle, artifacts.PipelineIdle{Strategy: r.Strategy.String(), CoreFraction: r.CoreFraction, Seconds: r.Seconds})
	}
	return out, nil
}

// latencyCase is a row as the JSON's case.
func latencyCase(r LatencyRow) (artifacts.PipelineCase, error) {
	c := artifacts.PipelineCase{
		Family: FamilyLatency, Name: r.Case.Name + "/cores=" + r.Cores, Impl: string(r.Case.Impl), Strategy: r.Case.StrategyName(),
		Stages: 1, Batch: 1, SlotCount: 1 << r.Case.LgSlots, Runs: 1,
		Cores: r.Cores, Skipped: r.Skip != "", SkipReason: r.Skip, CPUPlan: r.Plan,
		Kind: string(r.Case.Kind), Rate: string(r.Case.Rate), IntervalNs: r.Case.Interval.Nanoseconds(),
	}
	if c.Skipped {
		return c, nil
	}
	res := r.Result
	c.CaseGOMAXPROCS, c.Truncated, c.Items = r.GOMAXPROCS, res.Truncated, res.Measured
	n := float64(max(res.Measured, 1))
	c.NsPerItem = float64(res.Wall.Nanoseconds()) / n
	c.NsPerItemMin, c.NsPerItemMax = c.NsPerItem, c.NsPerItem
	c.ItemsPerSec = 1e9 / c.NsPerItem
	c.CPUNsPerItem = float64(res.CPU.Nanoseconds()) / n
	enc, err := res.Hist.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return c, fmt.Errorf("%s: encode histogram: %w", c.Name, err)
	}
	h := res.Hist
	c.HandoffLatencyNs = &artifacts.PipelineLatency{
		P50: h.ValueAtQuantile(50), P99: h.ValueAtQuantile(99), P999: h.ValueAtQuantile(99.9), Max: h.Max(),
		Min: h.Min(), Mean: h.Mean(), Count: h.TotalCount(), Histogram: string(enc),
	}
	return c, nil
}
