package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"weaseldb/artifacts"
	"weaseldb/internal/affinity"
	"weaseldb/internal/placement"
	"weaseldb/pipebench"
)

// latencyPlan is where the latency family's two hot threads (the producer,
// or ping, and the stage, or pong) run on dedicated cores; the family's
// shared cases pin nothing.
type latencyPlan struct {
	dedicated       bool // false: the dedicated cases are skipped, for skip
	producer, stage int
	why             string // what ran where and what shared what
	skip            string
}

// latencyNeed is the latency family's hot threads: a producer and one stage.
var latencyNeed = placement.Need{Producer: true, StageThreads: []int{1}}

// planLatencyAuto places the two hot threads by placement.PlaceHot: on 2
// CPUs each owns one and the Go runtime's other threads float over both.
func planLatencyAuto(allowed []int) latencyPlan {
	p, err := placement.PlaceHot(allowed, latencyNeed)
	if err != nil {
		return latencyPlan{skip: "--cpus auto: " + err.Error()}
	}
	return latencyPlan{dedicated: true, producer: p.ProducerCPU, stage: p.StageCPUs[0][0], why: p.Why}
}

// planLatencyList takes the producer's and stage 0's CPUs from --cpus.
func planLatencyList(list, allowed []int) latencyPlan {
	if list[0] == list[1] {
		return latencyPlan{skip: fmt.Sprintf("--cpus gives the producer and stage 0 the same CPU (%d): not dedicated", list[0])}
	}
	return latencyPlan{dedicated: true, producer: list[0], stage: list[1],
		why: fmt.Sprintf("from --cpus: producer on %d, stage 0 on %d; the Go runtime's other threads float over %s",
			list[0], list[1], affinity.FormatCPUList(allowed))}
}

// latencyRow is one case on one kind of cores, measured or skipped.
type latencyRow struct {
	c          pipebench.LatencyCase
	cores      string
	skip       string
	plan       string
	gomaxprocs int
	res        pipebench.LatencyResult
}

// runLatency measures the latency family, each case on dedicated cores
// and then on shared ones (interleaved, so a neighbour's burst hits both
// alike), and prints its table.
func runLatency(o options, stdout io.Writer) ([]latencyRow, *artifacts.PipelineClock, error) {
	clock := pipebench.MeasureClock(200_000)
	pc := &artifacts.PipelineClock{Source: clockSource(), Reads: clock.Reads, ReadNs: clock.ReadNs, ResolutionNs: clock.ResolutionNs}
	cases := pipebench.LatencyCases(o.latency)
	if len(cases) == 0 {
		return nil, pc, nil
	}
	c0 := cases[0]
	fmt.Fprintf(stdout, "\n== latency: single items, producer's publish -> stage's pickup (one_way) and a ping-pong round trip over two pipelines (round_trip);\n"+
		"   low = an item every %v (the stage idle between), saturation = back to back; ring %d; %d samples at low rate, %d at saturation (at most %v a case)\n",
		c0.Interval, 1<<c0.LgSlots, c0.Samples, c0.Samples*pipebench.SaturationFactor, c0.MaxDuration)
	fmt.Fprintf(stdout, "   clock: %.1f ns a read (%d back-to-back reads), resolution %d ns, clocksource %s: figures below ~%.0f ns resolve nothing\n",
		pc.ReadNs, pc.Reads, pc.ResolutionNs, orDash(pc.Source), 2*pc.ReadNs)
	fmt.Fprintf(stdout, "%-9s %-19s %-9s %-10s %-10s %7s %9s %9s %9s %9s %12s\n",
		"impl", "strategy", "cores", "kind", "rate", "n", "p50", "p99", "p99.9", "max", "cpu-ns/item")
	base := runtime.GOMAXPROCS(0)
	allowed, _ := affinity.AllowedCPUs()
	sharedPlan := fmt.Sprintf("shared cores: nothing pinned; the producer, the stage and the Go runtime's threads float over %s (GOMAXPROCS %d)",
		affinity.FormatCPUList(allowed), base)
	var rows []latencyRow
	for _, c := range cases {
		for _, cores := range []string{artifacts.CoresDedicated, artifacts.CoresShared} {
			row := latencyRow{c: c, cores: cores, gomaxprocs: base, plan: sharedPlan}
			var hooks pipebench.LatencyHooks
			if cores == artifacts.CoresDedicated {
				row.plan = o.latencyPlan.why
				if !o.latencyPlan.dedicated {
					row.skip = o.latencyPlan.skip
				} else {
					p, s := o.latencyPlan.producer, o.latencyPlan.stage
					hooks = pipebench.LatencyHooks{Pinned: true,
						Driver: func() error { return affinity.PinCurrentThread([]int{p}) },
						Stage:  func() error { return affinity.PinCurrentThread([]int{s}) }}
					row.gomaxprocs = affinity.GOMAXPROCSFor(2, base)
				}
			}
			if row.skip == "" {
				runtime.GOMAXPROCS(row.gomaxprocs)
				res, err := pipebench.MeasureLatency(c, hooks)
				runtime.GOMAXPROCS(base)
				if err != nil {
					return nil, nil, err
				}
				row.res = res
			}
			rows = append(rows, row)
			printLatencyRow(stdout, row)
		}
	}
	fmt.Fprintf(stdout, "dedicated: %s\nshared: %s\n", orDash(firstNonEmpty(o.latencyPlan.why, "skipped: "+o.latencyPlan.skip)), sharedPlan)
	fmt.Fprintf(stdout, "p50..max: one_way the hand-off, round_trip two hand-offs; cpu-ns/item: the process's CPU per item or round trip over the case\n")
	return rows, pc, nil
}

func printLatencyRow(w io.Writer, r latencyRow) {
	head := fmt.Sprintf("%-9s %-19s %-9s %-10s %-10s", r.c.Impl, r.c.StrategyName(), r.cores, r.c.Kind, r.c.Rate)
	if r.skip != "" {
		fmt.Fprintf(w, "%s skipped: %s\n", head, r.skip)
		return
	}
	h := r.res.Hist
	trunc := ""
	if r.res.Truncated {
		trunc = " (time limit)"
	}
	fmt.Fprintf(w, "%s %7d %9s %9s %9s %9s %12.0f%s\n", head, r.res.Measured,
		fmtNs(h.ValueAtQuantile(50)), fmtNs(h.ValueAtQuantile(99)), fmtNs(h.ValueAtQuantile(99.9)), fmtNs(h.Max()),
		float64(r.res.CPU.Nanoseconds())/float64(max(r.res.Measured, 1)), trunc)
}

// fmtNs prints a latency compactly: 812ns, 12.3µs, 4.51ms.
func fmtNs(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", ns)
	case d < time.Millisecond:
		return fmt.Sprintf("%.1fµs", float64(ns)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.2fms", float64(ns)/1e6)
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// latencyCase is a row as the JSON's case.
func latencyCase(r latencyRow) (artifacts.PipelineCase, error) {
	c := artifacts.PipelineCase{
		Family: pipebench.FamilyLatency, Name: r.c.Name + "/cores=" + r.cores, Impl: string(r.c.Impl), Strategy: r.c.StrategyName(),
		Stages: 1, Batch: 1, SlotCount: 1 << r.c.LgSlots, Runs: 1,
		Cores: r.cores, Skipped: r.skip != "", SkipReason: r.skip, CPUPlan: r.plan,
		Kind: string(r.c.Kind), Rate: string(r.c.Rate), IntervalNs: r.c.Interval.Nanoseconds(),
	}
	if c.Skipped {
		return c, nil
	}
	res := r.res
	c.CaseGOMAXPROCS, c.Truncated, c.Items = r.gomaxprocs, res.Truncated, res.Measured
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

// clockSource is the kernel's clocksource ("tsc", "kvm-clock"), or "".
func clockSource() string {
	b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
