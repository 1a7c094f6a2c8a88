package reports

import (
	"fmt"
	"slices"
	"strings"

	"weaseldb/artifacts"
	"weaseldb/internal/numfmt"
)

// waitConclusion says, from this run's numbers alone, which strategy wins
// on which axis and at what CPU cost: one line per axis and kind of cores,
// each naming the fields it compared. Nothing is said about an axis this
// run did not measure.
func waitConclusion(ws *artifacts.WaitStrategies) []string {
	var lines []string
	for _, cores := range []string{artifacts.CoresDedicated, artifacts.CoresShared} {
		for _, k := range []struct{ kind, rate, what string }{
			{"one_way", "low", "one-way hand-off at a low rate"},
			{"round_trip", "saturation", "round trip at saturation"},
		} {
			if l := latencyLine(ws, cores, k.kind, k.rate, k.what); l != "" {
				lines = append(lines, l)
			}
		}
	}
	if l := physicsLine(ws); l != "" {
		lines = append(lines, l)
	}
	for _, cores := range []string{artifacts.CoresDedicated, artifacts.CoresShared} {
		lines = append(lines, serverLines(ws, cores)...)
	}
	return lines
}

// pipelineCases are the measured pipeline latency rows of one kind, rate
// and cores, by strategy, with their index.
func pipelineCases(ws *artifacts.WaitStrategies, cores, kind, rate string) map[string]int {
	m := map[string]int{}
	for i, l := range ws.PipelineLatency {
		if l.Impl == "pipeline" && !l.Skipped && l.Cores == cores && l.Kind == kind && l.Rate == rate && l.P50Ns > 0 {
			m[l.Strategy] = i
		}
	}
	return m
}

func latencyLine(ws *artifacts.WaitStrategies, cores, kind, rate, what string) string {
	m := pipelineCases(ws, cores, kind, rate)
	if len(m) < 2 {
		return ""
	}
	strategies := sortedStrategies(m)
	by := func(f func(artifacts.WaitLatency) float64) (best string, rest []string) {
		best = strategies[0]
		for _, s := range strategies[1:] {
			if f(ws.PipelineLatency[m[s]]) < f(ws.PipelineLatency[m[best]]) {
				best = s
			}
		}
		for _, s := range strategies {
			if s != best {
				rest = append(rest, s)
			}
		}
		return best, rest
	}
	p50 := func(l artifacts.WaitLatency) float64 { return float64(l.P50Ns) }
	p99 := func(l artifacts.WaitLatency) float64 { return float64(l.P99Ns) }
	cpu := func(l artifacts.WaitLatency) float64 { return l.CPUNsPerItem }
	b50, rest := by(p50)
	b99, _ := by(p99)
	bcpu, _ := by(cpu)
	lb := ws.PipelineLatency[m[b50]]
	var others []string
	for _, s := range rest {
		others = append(others, fmt.Sprintf("`%s` %s µs", s, usFormat(ws.PipelineLatency[m[s]].P50Ns)))
	}
	line := fmt.Sprintf("- **Pipeline, %s, %s cores**: `%s` is fastest at p50 (%s µs; %s)", what, cores, b50, usFormat(lb.P50Ns), strings.Join(others, ", "))
	if b99 == b50 {
		line += " and at p99 too"
	} else {
		line += fmt.Sprintf("; at p99 `%s` leads (%s µs against %s µs for `%s`)", b99, usFormat(ws.PipelineLatency[m[b99]].P99Ns), usFormat(lb.P99Ns), b50)
	}
	if bcpu == b50 {
		line += fmt.Sprintf(", and it uses the least CPU as well (%s ns per item)", numfmt.Format(lb.CPUNsPerItem, 0))
	} else {
		ratio := lb.CPUNsPerItem / max(ws.PipelineLatency[m[bcpu]].CPUNsPerItem, 1)
		line += fmt.Sprintf(", at a CPU cost of %s ns per item against %s for `%s` (%s×)", numfmt.Format(lb.CPUNsPerItem, 0),
			numfmt.Format(ws.PipelineLatency[m[bcpu]].CPUNsPerItem, 0), bcpu, numfmt.Format(ratio, 1))
	}
	return line + fmt.Sprintf(" (`pipeline_latency[%d]`…).", m[b50])
}

// physicsLine checks what physics says a correct measurement shows: on
// dedicated cores a spinning strategy (Never) hands an item off faster
// than one that parks (WaitIfStageEmpty), which pays a wake-up.
func physicsLine(ws *artifacts.WaitStrategies) string {
	m := pipelineCases(ws, artifacts.CoresDedicated, "one_way", "low")
	spin, okS := m["Never"]
	park, okP := m["WaitIfStageEmpty"]
	if !okS || !okP {
		return ""
	}
	s, p := ws.PipelineLatency[spin], ws.PipelineLatency[park]
	if s.P50Ns < p.P50Ns {
		return fmt.Sprintf("- **Physics check passes**: on dedicated cores the spinning `Never` hands off faster than the parking `WaitIfStageEmpty` (p50 %s µs against %s µs: a parked thread costs a wake-up) (`pipeline_latency[%d]`, `[%d]`).",
			usFormat(s.P50Ns), usFormat(p.P50Ns), spin, park)
	}
	return fmt.Sprintf("- **Physics check fails**: on dedicated cores the spinning `Never` did not hand off faster than the parking `WaitIfStageEmpty` (p50 %s µs against %s µs) (`pipeline_latency[%d]`, `[%d]`): the spinner was not running when the item came (a busy machine's other processes on its CPU, or a cgroup quota); docs/bench_pipeline.md says how to check.",
		usFormat(s.P50Ns), usFormat(p.P50Ns), spin, park)
}

// serverLines names the server's winners on one kind of cores: req/s and
// CPU per request closed-loop, idle CPU, and p99 at the open-loop rates.
func serverLines(ws *artifacts.WaitStrategies, cores string) []string {
	var idx []int
	for _, i := range measuredRuns(ws, artifacts.BenchServer) {
		if ws.Runs[i].Cores == cores {
			idx = append(idx, i)
		}
	}
	if len(idx) < 2 {
		return nil
	}
	best := func(f func(artifacts.WaitRun) *float64, higher bool) (int, bool) {
		b := -1
		for _, i := range idx {
			v := f(ws.Runs[i])
			if v == nil {
				continue
			}
			if b < 0 || (higher && *v > *f(ws.Runs[b])) || (!higher && *v < *f(ws.Runs[b])) {
				b = i
			}
		}
		return b, b >= 0
	}
	var lines []string
	rps, ok1 := best(func(r artifacts.WaitRun) *float64 { return r.Throughput }, true)
	cpu, ok2 := best(func(r artifacts.WaitRun) *float64 { return r.CPUNsPerOp }, false)
	idle, ok3 := best(func(r artifacts.WaitRun) *float64 { return r.IdleCoreFraction }, false)
	if ok1 && ok2 {
		r, c := ws.Runs[rps], ws.Runs[cpu]
		line := fmt.Sprintf("- **Server, closed loop, %s cores**: `%s` serves the most (%s req/s, %s ns of server CPU per request)",
			cores, r.Strategy, numfmt.Format(*r.Throughput, 0), optNumber(r.CPUNsPerOp, 1, 0))
		if cpu == rps {
			line += " and is also the cheapest per request"
		} else {
			line += fmt.Sprintf("; `%s` is the cheapest per request (%s ns)", c.Strategy, numfmt.Format(*c.CPUNsPerOp, 0))
		}
		if ok3 {
			line += fmt.Sprintf("; idle, `%s` uses the least CPU (%s%% of one core)", ws.Runs[idle].Strategy, numfmt.Format(*ws.Runs[idle].IdleCoreFraction*100, 2))
		}
		cite := fmt.Sprintf(" (`runs[%d]`, `runs[%d]`).", rps, cpu)
		if cpu == rps {
			cite = fmt.Sprintf(" (`runs[%d]`).", rps)
		}
		lines = append(lines, line+cite)
	}
	// Open loop: the lowest p99 at each fraction.
	wins := map[string]int{}
	steps := 0
	for k := 0; ; k++ {
		b, n := -1, 0
		for _, i := range idx {
			if rs := ws.Runs[i].RateSteps; k < len(rs) {
				n++
				if b < 0 || rs[k].P99Ns < ws.Runs[b].RateSteps[k].P99Ns {
					b = i
				}
			}
		}
		if n < 2 {
			break
		}
		wins[ws.Runs[b].Strategy]++
		steps++
	}
	if steps > 0 {
		names := sortedStrategies(wins)
		parts := make([]string, len(names))
		for i, s := range names {
			parts[i] = fmt.Sprintf("`%s` at %d", s, wins[s])
		}
		lines = append(lines, fmt.Sprintf("- **Server, open loop, %s cores**: the lowest p99 at the same fraction of each strategy's own capacity: %s of %d rates (`runs[i].rate_steps`).",
			cores, strings.Join(parts, ", "), steps))
	}
	return lines
}

// sortedStrategies is m's keys in WaitStrategyNames order.
func sortedStrategies[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if d := strategyOrder(a) - strategyOrder(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return keys
}
