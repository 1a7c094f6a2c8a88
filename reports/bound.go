package reports

import (
	"fmt"

	"weaseldb/artifacts"
)

// saturated is the share of a resource's capacity above which the report
// calls it a bound of a run.
const saturated = 0.9

// bound is a resource that limited one run's throughput, with the figure
// that shows it.
type bound struct {
	what     string  // "the client", "the cores", "the resolve stage", "the I/O loops"
	note     string  // what the figure says, in words
	evidence *source // the figure
}

// bounds applies docs/report.md's rule ("What bounded it") to one round and
// returns every resource at its limit, in the rule's order:
//
//  1. the client: load_tester flagged itself client-bound;
//  2. the cores: the whole machine was busy ≥ 90% of its CPUs;
//  3. the resolve stage: busy ≥ 90% of the measured window (the one serial
//     stage that does the configured work);
//  4. the I/O loops: the server used ≥ 90% of the Ps it runs on. Under a
//     wait strategy that parks (WaitIfStageEmpty) the server runs with
//     GOMAXPROCS = io_threads and every stage runs on the loops' Ps, so a
//     server at its Ps is bound by its loops and the work they start.
//
// The first is the bound the Summary names; the others are printed beside
// it. None: nothing was at its limit (the closed loop's connections set
// the pace), or the run has too little to tell.
func bounds(r *Round, s artifacts.Setup, machineCPUs int) []bound {
	if r == nil || r.Load == nil {
		return nil
	}
	var out []bound
	name := func(what string) string { return fmt.Sprintf("%s: %s, round %d", s.Title, what, r.Number) }
	if r.Load.ClientBound {
		note := "load_tester flagged itself client-bound"
		if r.Load.ClientBoundReason != "" {
			note += ": " + r.Load.ClientBoundReason + ";"
		}
		out = append(out, bound{what: "the client", note: note + " its threads used",
			evidence: fieldOf(name("load tester CPU"), r.Load.ClientCPUFraction, 100, "% of their CPUs", 0, r.LoadName, "client_cpu_fraction")})
	}
	if l := r.Loaded; l != nil && l.MachineBusyCores > 0 {
		cpus := l.MachineCPUs
		if cpus == 0 {
			cpus = machineCPUs
		}
		if cpus > 0 && l.MachineBusyCores >= saturated*float64(cpus) {
			out = append(out, bound{what: "the cores", note: fmt.Sprintf("the machine's %d CPUs were busy", cpus),
				evidence: fieldOf(name("whole machine's busy CPU"), l.MachineBusyCores, 1, "cores", 2, r.LoadedName, r.LoadedPrefix+"machine_busy_cores")})
		}
	}
	if sm := r.Sample; sm != nil && sm.StageBusy != nil {
		if busy := sm.StageBusy["resolve"]; busy >= saturated {
			out = append(out, bound{what: "the resolve stage", note: "it was busy",
				evidence: fieldOf(name("resolve stage busy share"), busy, 100, "% of the window", 0, r.LoadedName, "stage_busy.resolve")})
		}
	}
	if sm := r.Sample; sm != nil && r.Loaded != nil && !artifacts.Spins(s.WaitStrategy) && sm.GOMAXPROCS > 0 &&
		r.Loaded.CoreFraction >= saturated*float64(sm.GOMAXPROCS) {
		out = append(out, bound{what: "the I/O loops", note: fmt.Sprintf("the server, whose %d I/O loop(s) run every stage on its GOMAXPROCS = %d, used", s.IOThreads, sm.GOMAXPROCS),
			evidence: fieldOf(name("server CPU under load"), r.Loaded.CoreFraction, 1, "cores", 2, r.LoadedName, r.LoadedPrefix+"core_fraction")})
	}
	return out
}

// boundWords is what the Summary says when no resource was at its limit.
func boundWords(r *Round) string {
	switch {
	case r == nil:
		return "not measured"
	case r.Sample == nil:
		return "not determined (this run has no server sample: no stage busy time or GOMAXPROCS)"
	}
	return "none of the client, the cores, the resolve stage and the I/O loops was at 90% of its limit (the closed loop's connections set the pace)"
}
