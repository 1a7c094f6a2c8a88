package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"weaseldb/artifacts"
	"weaseldb/internal/placement"
	"weaseldb/internal/procstat"
	"weaseldb/loadtester/result"
	"weaseldb/plan"
)

// The comparison's latency parts: bench_pipeline's latency family (hand-off
// latency per strategy, dedicated and shared cores), and each server run
// loaded again open-loop at fractions of its own closed-loop req/s, so the
// strategies' latencies are compared at the same relative load.

// DefaultRateFractions are the open-loop rates of each server run, as
// fractions of that run's closed-loop req/s.
const DefaultRateFractions = "0.25,0.5,0.75"

// rateStepWarmupS is each open-loop step's warm-up.
const rateStepWarmupS = 0.5

// parseRateFractions reads --rate-fractions: a comma-separated list of
// fractions in (0, 1], or "none" (no open-loop steps).
func parseRateFractions(s string) ([]float64, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return nil, nil
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v <= 0 || v > 1 {
			return nil, fmt.Errorf("wait-strategies: --rate-fractions: %q is not a fraction in (0, 1]", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// latencyNeed is bench_pipeline's latency family's hot threads.
var latencyNeed = placement.Need{Producer: true, StageThreads: []int{1}}

// latencyPlanLine is the plan's line for bench_pipeline's latency run.
func latencyPlanLine(allowed []int, dedicated bool) string {
	if !dedicated {
		return "  pipeline  latency family      shared     run (dedicated cores not asked for)\n"
	}
	p, err := placement.PlaceHot(allowed, latencyNeed)
	if err != nil {
		return "  pipeline  latency family      dedicated  skip: " + err.Error() + "; shared: run\n"
	}
	return "  pipeline  latency family      both       run: " + p.Why + "\n"
}

// pipelineLatency runs bench_pipeline's latency family once (it measures
// every case on dedicated cores, --cpus auto, and on shared ones) and
// records its cases of the compared strategies in ws.PipelineLatency.
func (r *waitRunner) pipelineLatency(p plan.WaitParams) {
	name := "ws_pipeline_latency"
	args := []string{"--families", "latency", "--json", r.t.Path(name + ".json")}
	if p.Dedicated {
		args = append(args, "--cpus", "auto")
	} else {
		r.ws.LatencyReason = "dedicated cores not asked for (--cores)"
	}
	if r.o.LatencySamples > 0 {
		args = append(args, "--latency-samples", fmt.Sprint(r.o.LatencySamples))
	}
	err := r.t.command(2*time.Minute, name, nil, nil, "bench_pipeline", args...)
	var pb artifacts.PipelineBench
	if err == nil {
		err = r.t.ReadJSON(name+".json", &pb)
	}
	if err != nil {
		r.ws.LatencyReason = strings.TrimPrefix(r.ws.LatencyReason+"; failed: "+err.Error(), "; ")
		r.t.Logf("bench_pipeline latency: %v", err)
		return
	}
	r.ws.LatencyArtifact = name + ".json"
	if pb.Clock != nil {
		r.ws.LatencyClockReadNs = pb.Clock.ReadNs
	}
	r.ws.PipelineLatency = latencyRows(&pb, p)
}

// latencyRows picks the latency cases of the compared strategies (and the
// channel baseline), on the kinds of cores asked for.
func latencyRows(pb *artifacts.PipelineBench, p plan.WaitParams) []artifacts.WaitLatency {
	strategies := p.Strategies
	if len(strategies) == 0 {
		strategies = artifacts.WaitStrategyNames
	}
	var rows []artifacts.WaitLatency
	for i, c := range pb.Cases {
		if c.Family != "latency" || (c.Cores == artifacts.CoresDedicated && !p.Dedicated) {
			continue
		}
		if c.Impl == "pipeline" && !slices.Contains(strategies, c.Strategy) {
			continue
		}
		row := artifacts.WaitLatency{Impl: c.Impl, Strategy: c.Strategy, Cores: c.Cores, Kind: c.Kind, Rate: c.Rate,
			Skipped: c.Skipped, Reason: c.SkipReason, CPUPlan: c.CPUPlan, Field: fmt.Sprintf("cases[%d]", i)}
		if h := c.HandoffLatencyNs; h != nil && !c.Skipped {
			row.Samples, row.P50Ns, row.P99Ns, row.P999Ns, row.MaxNs = h.Count, h.P50, h.P99, h.P999, h.Max
			row.CPUNsPerItem = c.CPUNsPerItem
		}
		rows = append(rows, row)
	}
	return rows
}

// rateSteps loads a measured server run open-loop at r.fractions of its
// closed-loop req/s (load_tester --rate-steps) and records each step's
// latency, and the server's CPU over all of them per answered request. A
// failure is recorded in RateStepsReason; the closed-loop figures stand.
func (r *waitRunner) rateSteps(run artifacts.WaitRun, p plan.PlannedRun, pid int, socket, name string) artifacts.WaitRun {
	if len(r.fractions) == 0 || run.Throughput == nil || *run.Throughput <= 0 {
		return run
	}
	rates := make([]string, len(r.fractions))
	for i, f := range r.fractions {
		rates[i] = strconv.FormatFloat(max(1, f**run.Throughput), 'f', 0, 64)
	}
	file := name + ".steps.json"
	args := []string{"--unix-socket", socket, "--path", "/ok", "--concurrency", fmt.Sprint(r.o.Concurrency),
		"--network-threads", fmt.Sprint(r.o.LoadThreads), "--rate-steps", strings.Join(rates, ","),
		"--warmup", fmt.Sprint(rateStepWarmupS), "--duration", fmt.Sprint(r.o.RateStepS),
		"--quiet", "--max-errors", "1000000000", "--json", r.t.Path(file)}
	args = append(args, r.o.slowMachineArgs()...)
	timeout := time.Duration(len(rates))*(seconds(rateStepWarmupS+r.o.RateStepS+r.o.DrainS)+10*time.Second) + 30*time.Second
	cpu0, err0 := procstat.PidCPU(pid)
	err := r.t.command(timeout, name+".steps", p.LoadCPUs, nil, "load_tester", args...)
	cpu1, err1 := procstat.PidCPU(pid)
	var sr *result.StepsResult
	if err == nil {
		sr, err = result.ReadSteps(r.t.Path(file))
	}
	if err != nil {
		run.RateStepsReason = err.Error()
		r.t.Logf("%s: open-loop steps: %v", name, err)
		return run
	}
	run.RateStepsArtifact = file
	var answered int64
	for i, st := range sr.Steps {
		step := artifacts.WaitRateStep{RateAsked: st.RateAsked, RateAchieved: st.RateAchieved,
			P50Ns: st.Latency.P50, P99Ns: st.Latency.P99, P999Ns: st.Latency.P999, MaxNs: st.Latency.Max,
			Unfinished: st.Unfinished, Dropped: st.Dropped, Errors: st.Errors, ClientBound: st.ClientBound}
		if i < len(r.fractions) {
			step.Fraction = r.fractions[i]
		}
		run.RateSteps = append(run.RateSteps, step)
		answered += st.Answered
	}
	if err0 == nil && err1 == nil && answered > 0 {
		run.RateStepsCPUNsPerRequest = ptr(float64((cpu1 - cpu0).Nanoseconds()) / float64(answered))
	}
	if len(sr.Steps) < len(r.fractions) {
		run.RateStepsReason = fmt.Sprintf("%d of %d steps ran", len(sr.Steps), len(r.fractions))
	}
	return run
}
