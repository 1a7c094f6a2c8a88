package gate

import (
	"fmt"
	"math"
	"time"

	"weaseldb/gate/result"
	"weaseldb/gate/stats"
	"weaseldb/gate/verdict"
	istats "weaseldb/internal/stats"
	loadresult "weaseldb/loadtester/result"
)

// The time tier judges the server's CPU per request beside its req/s: over
// load_tester's measured window alone (cpuTrace), per round, paired as the
// req/s are. It sees what req/s cannot when the load tester, not the
// server, sets the pace (a client-bound run): the server then idles
// between requests, its req/s does not move, and its CPU per request does.

// windowCPU is the server's CPU per request and its cores over the
// load's measured window, read from the trace; false when the result or
// the trace cannot place the window.
func windowCPU(tr *cpuTrace, res loadresult.Result) (nsPerRequest, cores float64, ok bool) {
	start, err := time.Parse(time.RFC3339Nano, res.WindowStart)
	if err != nil || res.DurationS <= 0 || res.Requests <= 0 || tr == nil {
		return 0, 0, false
	}
	d := time.Duration(res.DurationS * float64(time.Second))
	used, ok := tr.between(start, start.Add(d))
	if !ok {
		return 0, 0, false
	}
	return float64(used.Nanoseconds()) / float64(res.Requests), used.Seconds() / d.Seconds(), true
}

// judgeCPU pairs the rounds' CPU per request and applies the req/s rule
// (Decide) to their inverse. Fewer than 3 complete pairs: nil.
func judgeCPU(a, b []float64, level float64, p verdict.Policy) *result.CPUJudgement {
	var ea, eb []float64 // requests per CPU second, complete pairs only
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] > 0 && b[i] > 0 && !math.IsNaN(a[i]) && !math.IsNaN(b[i]) {
			ea, eb = append(ea, 1/a[i]), append(eb, 1/b[i])
		}
	}
	if len(ea) < 3 {
		return nil
	}
	j := &result.CPUJudgement{SamplesA: a, SamplesB: b, MedianA: istats.Median(finite(a)), MedianB: istats.Median(finite(b))}
	j.CI = stats.PairedRatio(ea, eb, level)
	j.Decision = verdict.Decide(j.CI, p)
	switch j.Verdict {
	case verdict.Regression:
		j.ReasonCode = verdict.ReasonCPUHigher
		j.Reason = fmt.Sprintf("server CPU per request %.0f ns against %.0f: %s", j.MedianB, j.MedianA, j.Reason)
	default:
		j.Reason = "server CPU per request: " + j.Reason
	}
	return j
}

func finite(xs []float64) []float64 {
	var out []float64
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			out = append(out, x)
		}
	}
	return out
}

// withCPU is the time tier's decision with the CPU judgement beside it: a
// req/s pass with CPU per request past the tolerance (and not by chance)
// is a regression; an undecided CPU judgement never makes a decided
// req/s verdict undecided (it is noisier, and the req/s rule has its own).
func withCPU(d verdict.Decision, cpu *result.CPUJudgement) verdict.Decision {
	if cpu != nil && d.Verdict == verdict.Pass && cpu.Verdict == verdict.Regression {
		return cpu.Decision
	}
	return d
}
