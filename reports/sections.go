package reports

import (
	"fmt"

	"weaseldb/artifacts"
	"weaseldb/internal/numfmt"
)

// architecture shows each setup's threads and how many want a core.
func (w *writer) architecture() error {
	cores := w.machineCPUs()
	w.p("### Threading Architecture\n\n")
	w.p("The server's design (docs/weaseldb.md, \"How a request flows\"), with each setup's thread counts:\n\n")
	w.p("```\n")
	w.p("I/O loops (one epoll instance each; every listener in every loop, EPOLLEXCLUSIVE)\n")
	w.p("  -> one batch push per read batch\n")
	w.p("Commit pipeline (ring of slots, the setup's wait strategy):\n")
	w.p("  Sequence (1) -> Resolve (1, spins ok_resolve_iterations for /ok) -> Persist (1) -> Release (N)\n")
	w.p("  -> response handed back to the connection's owning loop -> writev\n")
	w.p("```\n\n")
	// The connections in all come before the threads they are spread over,
	// each in a column of its own, so no cell reads as a product.
	w.p("| | I/O threads | pipeline threads | wait strategy | connections, in all | load tester network threads | load tester connect threads | cores |\n|---|---|---|---|---|---|---|---|\n")
	for _, n := range w.setups {
		s := n.view.Setup
		w.p("| %s | %d | %d | %s | %s | %d | %d | %s |\n", s.Title, s.IOThreads, 3+s.ReleaseThreads, s.WaitStrategy,
			numfmt.Format(float64(s.Connections), 0), s.LoadThreads, s.ConnectThreads, coresOf(s))
	}
	w.p("\n")
	for _, n := range w.setups {
		s := n.view.Setup
		if busy := threadsWantingACore(s); cores > 0 && busy > cores {
			w.p("- **%s is oversubscribed:** about %d threads that want a core compete for %d cores (`%s` machine.cores); this lowers throughput and inflates tail latency, and its numbers must be read that way.\n", capitalize(s.Title), busy, cores, artifacts.ManifestFile)
		}
		if s.Cores == artifacts.CoresShared && artifacts.Spins(s.WaitStrategy) {
			w.p("- **%s spins on shared cores:** %s keeps a pipeline thread busy while it waits for upstream, taking CPU the I/O loops and the load tester need.\n", capitalize(s.Title), s.WaitStrategy)
		}
	}
	w.p("\n")
	return nil
}

// threadsWantingACore counts the threads that each keep a core busy under
// load: the I/O loops and the load tester's network threads, and the
// pipeline's threads when its wait strategy spins (with one that parks, the
// stages run on the loops' Ps: GOMAXPROCS = io_threads, docs/weaseldb.md).
func threadsWantingACore(s artifacts.Setup) int {
	n := s.IOThreads + s.LoadThreads
	if artifacts.Spins(s.WaitStrategy) {
		n += 3 + s.ReleaseThreads
	}
	return n
}

func coresOf(s artifacts.Setup) string {
	if s.Cores == artifacts.CoresDedicated {
		return "dedicated: " + s.CPUPlan + placementNote(s.Placement, s.PlacementGaveUp, s.IRQWarnings)
	}
	return "shared (nothing pinned)"
}

// healthCheck gives each setup's CPU work efficiency and what bounded it.
func (w *writer) healthCheck() error {
	w.p("### Health Check Pipeline (/ok endpoint)\n\n")
	c := w.cal
	for _, n := range w.setups {
		s := n.view.Setup
		w.p("**%s**\n\n", capitalize(s.Title))
		w.p("- **Throughput**: %s\n", w.cite(nilIf(n.rps)))
		w.p("- **Configurable CPU work**: %s", w.cite(w.workSource(s)))
		if s.OkIterations > 0 {
			w.p(" (%d iterations of `ok_resolve_iterations`, timed by `bench_cpu_work`: the measuring thread's CPU time per call, which preemption on a busy machine does not inflate)", s.OkIterations)
		}
		w.p("\n")
		if c.target != nil && n == w.setups[0] {
			w.p("- **Calibration**: %s ns took %s here (the seed's 740 ns took %d iterations on its machine)\n",
				numfmt.Format(orSeed(c.targetNs), 0), w.cite(c.target.median), SeedWorkIterations)
		}
		w.p("- **Theoretical maximum CPU time per request at this throughput**: %s (1,000,000,000 ns ÷ requests/s: the time the single resolve thread has per request; the seed's: %s at %s)\n",
			w.cite(w.theoreticalMax(n)), w.cite(seedTheoreticalMax()), w.cite(seedThroughput()))
		w.p("- **CPU work efficiency**: %s (CPU work ÷ theoretical maximum: the share of the resolve thread's time spent on the configured work; the seed's: %s)\n",
			w.cite(w.efficiency(n)), w.cite(seedEfficiency()))
		if cpu := w.serverCPUPerRequest(n); cpu != nil {
			w.p("- **Server CPU per request, all threads**: %s (%s of CPU while loaded ÷ requests/s)", w.cite(cpu), w.cite(w.loadedCores(n)))
			if work := w.workSource(s); work != nil {
				share := derived(s.Title+": share of server CPU spent on the configured work", work.printed()/cpu.value*100, "%", 1, "CPU work per request ÷ server CPU per request")
				w.p("; the configured work is %s of it", w.cite(share))
			}
			w.p("\n")
		}
		w.boundLine(n)
		w.p("- **CPU usage when idle**: %s\n\n", w.cite(w.idleCores(n)))
	}
	w.p("Pipeline stages: Sequence (versions, request-id dedupe) → Resolve (CPU work) → Persist (response) → Release (send).\n\n")
	return nil
}

func nilIf(sp *spread) *source {
	if sp == nil {
		return nil
	}
	return sp.median
}

// boundLine says what limited a setup's median round and what the cores did.
func (w *writer) boundLine(n *setupNumbers) {
	if n.median == nil {
		return
	}
	w.p("- **What bounded it** (round %d): %s", n.median.Number, w.boundCell(n))
	if busy := w.machineBusy(n); busy != nil && (len(n.bounds) == 0 || n.bounds[0].what != "the cores") {
		w.p("; the whole machine was busy %s of %d cores", w.cite(busy), w.machineCPUs())
	}
	if h := w.harnessCores(n); h != nil {
		w.p("; the server and the load tester together used %s", w.cite(h))
	}
	w.p("\n")
}

func (w *writer) idleCPU() error {
	w.p("### CPU Usage When Idle\n\n")
	measured := false
	for _, n := range w.setups {
		measured = measured || w.idleCores(n) != nil
	}
	if !measured {
		w.p("_Not measured: no run of this report measured the server idle._\n\n")
		return nil
	}
	w.p("The server's CPU time from the kernel's accounting (`/proc/<pid>/stat`, resolution 10 ms), after the load of its setup's last round, 1 s after the load stopped")
	if ss := w.run.Setups; ss != nil {
		w.p(", with %d keep-alive connections open (each served one `GET /ok` first)", ss.IdleConns)
	}
	w.p(".\n\n| setup | window | server CPU | artifact |\n|---|---|---|---|\n")
	for _, n := range w.setups {
		idle := w.idleCores(n)
		if idle == nil {
			w.p("| %s | | not measured | |\n", n.view.Setup.Title)
			continue
		}
		r := w.idleRound(n)
		win := fieldOf(fmt.Sprintf("%s: idle CPU window (round %d)", n.view.Setup.Title, r.Number), r.Idle.WindowS, 1, "s", 1, r.IdleName, r.IdlePrefix+"window_s")
		used := fieldOf(fmt.Sprintf("%s: idle CPU time used (round %d)", n.view.Setup.Title, r.Number), r.Idle.CPUS, 1e3, "ms", 0, r.IdleName, r.IdlePrefix+"cpu_s")
		w.p("| %s | %s | %s (%s in all) | `%s` |\n", n.view.Setup.Title, w.cite(win), w.cite(idle), w.cite(used), r.IdleName)
	}
	w.p("\n")
	for _, n := range w.setups {
		if r := w.idleRound(n); r != nil && r.Idle.CoreFraction > 0.01 {
			w.p("**%s: idle CPU is not zero**: something keeps spinning or polling after the load (wait strategy `%s`).\n\n", capitalize(n.view.Setup.Title), n.view.Setup.WaitStrategy)
		}
	}
	return nil
}

// idleRound is the last round of a setup that measured idle CPU.
func (w *writer) idleRound(n *setupNumbers) *Round {
	for i := len(n.view.Rounds) - 1; i >= 0; i-- {
		if r := n.view.Rounds[i]; r.Idle != nil {
			return r
		}
	}
	return nil
}

func (w *writer) pipelineBench() error {
	w.p("### Pipeline micro-benchmarks (bench_pipeline)\n\n")
	pb := w.run.Pipeline
	if pb == nil {
		w.p("_Not measured: `%s` is not in this run._\n\n", artifacts.PipelineBenchFile)
		return nil
	}
	w.p("Every row is one case of `%s`; the Field column names it, and the numbers are that case's fields.\n\n", artifacts.PipelineBenchFile)
	w.p("| family | case | strategy | stages | batch | spin iters | ns/item | items/s | CPU ns/item | field |\n")
	w.p("|---|---|---|---|---|---|---|---|---|---|\n")
	for i, c := range pb.Cases {
		w.p("| %s | %s | %s | %d | %d | %d | %s | %s | %s | `cases[%d]` |\n", c.Family, caseLabel(c), c.Strategy, c.Stages, c.Batch, c.SpinIters,
			numfmt.Format(c.NsPerItem, 1), numfmt.Format(c.ItemsPerSec, 0), numfmt.Format(c.CPUNsPerItem, 1), i)
	}
	w.p("\n")
	if len(pb.Idle) > 0 {
		w.p("Idle CPU of a pipeline with nothing to do, per strategy (`%s` `idle`):\n\n| strategy | idle CPU | field |\n|---|---|---|\n", artifacts.PipelineBenchFile)
		for i, s := range pb.Idle {
			w.p("| %s | %s%% of one core | `idle[%d]` |\n", s.Strategy, numfmt.Format(s.CoreFraction*100, 2), i)
		}
		w.p("\n")
	}
	if idx := waitStrategyCases(pb); len(idx) > 0 {
		return w.image(WaitStrategiesPNG, "Wait strategy comparison", func(p string) error { return plotWaitStrategies(p, pb, idx) })
	}
	w.p("_No wait-strategy family in `%s`: no comparison plot._\n\n", artifacts.PipelineBenchFile)
	return nil
}

func (w *writer) seedComparison() error {
	m := w.run.Manifest
	w.p("## Where this run differs from the seed\n\n")
	table := w.setupsTable("", "seed")
	row := func(label, seed string, cell func(n *setupNumbers) string) { table([]string{label, seed}, cell) }
	// The seed's column cites the seed report like every other figure.
	row("throughput", w.cite(seedThroughput()), func(n *setupNumbers) string { return w.cite(nilIf(n.rps)) })
	row("theoretical maximum CPU time per request", w.cite(seedTheoreticalMax()), func(n *setupNumbers) string { return w.cite(w.theoreticalMax(n)) })
	row("CPU work efficiency", w.cite(seedEfficiency()), func(n *setupNumbers) string { return w.cite(w.efficiency(n)) })
	row("CPU work per request", fmt.Sprintf("%s (%s iterations)", w.cite(seedWork()), w.cite(seedWorkIterations())),
		func(n *setupNumbers) string { return w.cite(w.workSource(n.view.Setup)) })
	row("I/O threads", w.cite(seedIOThreads()), func(n *setupNumbers) string { return fmt.Sprint(n.view.Setup.IOThreads) })
	// One row per number: "10 network threads, 2000 connections" was read
	// as 2000 connections per thread.
	row("load tester: connections, in all", w.cite(seedConnections()), func(n *setupNumbers) string {
		return numfmt.Format(float64(n.view.Setup.Connections), 0)
	})
	row("load tester: network threads", w.cite(seedNetworkThreads()), func(n *setupNumbers) string { return fmt.Sprint(n.view.Setup.LoadThreads) })
	row("load tester: connect threads", w.cite(seedConnectThreads()), func(n *setupNumbers) string { return fmt.Sprint(n.view.Setup.ConnectThreads) })
	// The engine moves the client's CPU per request (docs/load_tester.md,
	// "The default engine"), so a reader comparing runs needs to see it.
	row("load tester: I/O engine", "not stated", func(n *setupNumbers) string { return loadEngine(n.median) })
	row("load per run", w.cite(seedRunSeconds()), func(n *setupNumbers) string {
		if r := n.median; r != nil {
			return w.cite(fieldOf(fmt.Sprintf("%s: load duration, round %d", n.view.Setup.Title, r.Number), r.Load.DurationS, 1, "s", 1, r.LoadName, "duration_s"))
		}
		return "not measured"
	})
	row("cores", "not stated (a larger machine)", func(*setupNumbers) string { return fmt.Sprint(m.Machine.Cores) })
	w.p("\n")
	w.p("Why the numbers differ:\n\n")
	w.p("1. **Cores.** This machine has %d cores for the server and the load tester together; the seed's %d I/O threads assume a core each, and its load tester another machine's worth of CPU.", m.Machine.Cores, SeedIOThreads)
	for _, n := range w.setups {
		if h := w.harnessCores(n); h != nil {
			w.p(" With %s, the server and the load tester used %s.", n.view.Setup.Title, w.cite(h))
		}
	}
	w.p("\n")
	w.p("2. **The client shares the machine.** Every load-tester thread takes CPU from the cores the server runs on; a setup whose load tester flagged itself client-bound measured a lower bound of the server's capacity.\n")
	w.p("3. **Calibration.** The seed's 740 ns was 4000 iterations on its CPU; here 4000 iterations cost %s", w.cite(w.workSource(w.setups[0].view.Setup)))
	if w.cal.target != nil {
		w.p(" and 740 ns is %s", w.cite(w.cal.target.median))
	}
	w.p(". Efficiency uses the cost measured here.\n")
	w.p("4. **Implementation.** This is the Go server (epoll loops through golang.org/x/sys, a generic ring pipeline); the seed is C++. This run does not isolate that factor.\n")
	w.p("5. **Shared machine.** ")
	for _, n := range w.setups {
		if other := w.otherCores(n); other != nil {
			if other.value < otherCoresResolution {
				// The machine's busy CPU and the harness's CPU come from
				// two windows a few milliseconds apart, so their difference
				// is only meaningful above that resolution; a small or
				// negative value means "nothing measurable", not less than zero.
				w.p("During %s's median round other processes used no measurable CPU (the machine's busy CPU minus the harness's was %s, within the resolution of the two measurements). ", n.view.Setup.Title, w.cite(other))
				continue
			}
			w.p("During %s's median round other processes used about %s. ", n.view.Setup.Title, w.cite(other))
		}
	}
	w.p("The rounds and the per-interval throughput plots show how steady the machine was. ")
	// A setup's interval for another run assumes the machine keeps the
	// steadiness it showed over this run's rounds; a shared machine's host
	// can slow it for minutes, which no single run sees (docs/report.md
	// measured up to 8% between runs against ±2% within).
	w.p("Each range above is the spread of this run's rounds, and each interval for another run assumes the machine stays as steady as it was over them: on a shared machine runs minutes apart can differ by more (docs/report.md, \"How steady this machine is\"; scripts/machine_drift.sh measures it), so compare the setups within one report, and builds with the gate's interleaved A/B, not reports by their absolute req/s.\n\n")
	w.historicalNote()
	return nil
}

// loadEngine names the engine a round's load tester ran on, and why it
// fell back where io_uring was refused; results from before the load
// tester recorded it say so.
func loadEngine(r *Round) string {
	switch {
	case r == nil || r.Load == nil:
		return "not measured"
	case r.Load.IOBackend == "":
		return "not recorded"
	case r.Load.IOBackendFallback != "":
		return fmt.Sprintf("`%s` (io_uring refused: %s)", r.Load.IOBackend, r.Load.IOBackendFallback)
	}
	return "`" + r.Load.IOBackend + "`"
}
