package reports

import "fmt"

// The sources of a setup's figures. Each is built where it is printed and
// cited by name, so a figure printed twice keeps one number.

// efficiency is the share of the resolve thread's time spent on the
// configured work: CPU work per request ÷ (1e9 ÷ the median req/s).
func (w *writer) efficiency(n *setupNumbers) *source {
	if n.effPct == 0 {
		return nil
	}
	return derived(n.view.Setup.Title+": CPU work efficiency", n.effPct, "%", 1,
		"CPU work per request ÷ theoretical maximum CPU time (1e9 ÷ the median requests_per_sec)")
}

// theoreticalMax is the time the single resolve thread has per request.
func (w *writer) theoreticalMax(n *setupNumbers) *source {
	if n.theoMaxNs == 0 {
		return nil
	}
	return derived(n.view.Setup.Title+": theoretical maximum CPU time per request", n.theoMaxNs, "ns", 0, "1e9 ÷ the median requests_per_sec")
}

// loadedCores is the server's CPU under load in the median round.
func (w *writer) loadedCores(n *setupNumbers) *source {
	r := n.median
	if r == nil || r.Loaded == nil {
		return nil
	}
	return fieldOf(n.view.Setup.Title+": server CPU under load, median round", r.Loaded.CoreFraction, 1, "cores", 2, r.LoadedName, r.LoadedPrefix+"core_fraction")
}

// serverCPUPerRequest is all the server's threads' CPU per request in the median round.
func (w *writer) serverCPUPerRequest(n *setupNumbers) *source {
	r := n.median
	if r == nil || r.Loaded == nil || r.Load.RequestsPerSec <= 0 {
		return nil
	}
	return derived(n.view.Setup.Title+": server CPU per request, median round", r.Loaded.CoreFraction*1e9/r.Load.RequestsPerSec, "ns", 0,
		fmt.Sprintf("%s %score_fraction × 1e9 ÷ %s requests_per_sec", r.LoadedName, r.LoadedPrefix, r.LoadName))
}

// harnessCores is the server's and the load tester's CPU together in the median round.
func (w *writer) harnessCores(n *setupNumbers) *source {
	r := n.median
	if r == nil || r.Loaded == nil || r.Load.ClientCPUCores <= 0 {
		return nil
	}
	return derived(n.view.Setup.Title+": server and load tester CPU together, median round", r.Loaded.CoreFraction+r.Load.ClientCPUCores, "cores", 2,
		fmt.Sprintf("%s %score_fraction + %s client_cpu_cores", r.LoadedName, r.LoadedPrefix, r.LoadName))
}

// machineBusy is the whole machine's busy CPU in the median round.
func (w *writer) machineBusy(n *setupNumbers) *source {
	r := n.median
	if r == nil || r.Loaded == nil || r.Loaded.MachineBusyCores <= 0 {
		return nil
	}
	return fieldOf(n.view.Setup.Title+": whole machine's busy CPU, median round", r.Loaded.MachineBusyCores, 1, "cores", 2, r.LoadedName, r.LoadedPrefix+"machine_busy_cores")
}

// otherCoresResolution is the smallest "other processes" figure the report
// states as CPU used: below it the difference of two separately sampled
// windows is noise.
const otherCoresResolution = 0.05

// otherCores is what other processes used during the median round.
func (w *writer) otherCores(n *setupNumbers) *source {
	r, busy, harness := n.median, w.machineBusy(n), w.harnessCores(n)
	if busy == nil || harness == nil {
		return nil
	}
	return derived(n.view.Setup.Title+": other processes' CPU, median round", busy.value-harness.value, "cores", 2,
		fmt.Sprintf("%s %smachine_busy_cores − (%score_fraction + %s client_cpu_cores)", r.LoadedName, r.LoadedPrefix, r.LoadedPrefix, r.LoadName))
}

// idleCores is the server's CPU when idle (the last round that measured it).
func (w *writer) idleCores(n *setupNumbers) *source {
	for i := len(n.view.Rounds) - 1; i >= 0; i-- {
		if r := n.view.Rounds[i]; r.Idle != nil {
			return fieldOf(fmt.Sprintf("%s: server CPU when idle (round %d)", n.view.Setup.Title, r.Number), r.Idle.CoreFraction, 100, "% of one core", 2, r.IdleName, r.IdlePrefix+"core_fraction")
		}
	}
	return nil
}

// latencyOf is a percentile of the median round ("p50", "p90", "p99", "p999", "max").
func (w *writer) latencyOf(n *setupNumbers, which string) *source {
	r := n.median
	if r == nil {
		return nil
	}
	l := r.Load.Latency
	v := map[string]int64{"p50": l.P50, "p90": l.P90, "p99": l.P99, "p999": l.P999, "max": l.Max}[which]
	u := chooseLatencyUnit(float64(l.P50))
	return fieldOf(fmt.Sprintf("%s: latency %s, median round", n.view.Setup.Title, which), float64(v), u.scale, u.name, u.prec, r.LoadName, "latency_ns."+which)
}
