package reports

import "fmt"

// The seed report's own earlier figures: before its connection model
// changed, it claimed 1.0M req/s for the same 740 ns of work, which its
// "Note on historical numbers" explains. Both versions stand beside this
// run's so a reader sees which of the seed's numbers compares with ours.
const (
	SeedEarlierRequestsPerSec   = 1000000
	SeedEarlierTheoreticalMaxNs = 1000 // 1e9 ns ÷ 1,000,000 req/s
	SeedEarlierEfficiencyPct    = 74
	SeedEarlierNetworkThreads   = 12
)

func seedEarlierThroughput() *source {
	return fieldOf("Seed's earlier throughput", SeedEarlierRequestsPerSec, 1, "req/s", 0, seedArtifact,
		"Note on historical numbers (1.0M requests/second, the earlier version of the report)")
}

func seedEarlierTheoreticalMax() *source {
	return fieldOf("Seed's earlier theoretical maximum CPU time per request", SeedEarlierTheoreticalMaxNs, 1, "ns", 0, seedArtifact,
		"the earlier version's Health Check Pipeline (1000ns, 1,000,000,000ns ÷ 1,000,000 req/s)")
}

func seedEarlierEfficiency() *source {
	return fieldOf("Seed's earlier CPU work efficiency", SeedEarlierEfficiencyPct, 1, "%", 0, seedArtifact,
		"the earlier version's Health Check Pipeline (74%, 740ns ÷ 1000ns)")
}

func seedEarlierNetworkThreads() *source {
	return fieldOf("Seed's earlier load tester network threads", SeedEarlierNetworkThreads, 1, "", 0, seedArtifact,
		"the earlier version's Throughput (12 network threads)")
}

// historicalNote puts the seed's two published throughputs (before and
// after its connection model changed) beside this run's, each with the
// host it was measured on, and says which one compares with this server.
func (w *writer) historicalNote() {
	m := w.run.Manifest.Machine
	w.p("### Note on historical numbers\n\n")
	w.p("The seed report published two throughputs for the same 740 ns of work per request. An earlier version claimed %s; ", w.cite(seedEarlierThroughput()))
	w.p("that server passed each connection's exclusive ownership through the pipeline with its request. ")
	w.p("The later one measured %s with the server keeping its connections and the pipeline handing responses back to them: ", w.cite(seedThroughput()))
	w.p("per-request synchronization that costs raw `/ok` throughput and buys streaming endpoints (`/v1/subscribe`) and safe asynchronous responses. ")
	w.p("This server keeps each connection with its event loop and the pipeline hands responses back through the loop's queue, and it serves `/v1/subscribe`: the seed's later model, so its later figure is the one to compare with.\n\n")
	table := w.setupsTable("", "seed, earlier version", "seed, later version")
	row := func(label, earlier, later string, cell func(n *setupNumbers) string) {
		table([]string{label, earlier, later}, cell)
	}
	row("connections", "ownership moves through the pipeline", "kept by the server", func(*setupNumbers) string {
		return "kept by their event loop"
	})
	row("throughput", w.cite(seedEarlierThroughput()), w.cite(seedThroughput()), func(n *setupNumbers) string { return w.cite(nilIf(n.rps)) })
	row("theoretical maximum CPU time per request", w.cite(seedEarlierTheoreticalMax()), w.cite(seedTheoreticalMax()),
		func(n *setupNumbers) string { return w.cite(w.theoreticalMax(n)) })
	row("CPU work efficiency", w.cite(seedEarlierEfficiency()), w.cite(seedEfficiency()), func(n *setupNumbers) string { return w.cite(w.efficiency(n)) })
	row("load tester network threads", w.cite(seedEarlierNetworkThreads()), w.cite(seedNetworkThreads()),
		func(n *setupNumbers) string { return fmt.Sprint(n.view.Setup.LoadThreads) })
	host := fmt.Sprintf("%s, %d cores, %s (`%s` machine)", orNA(m.CPUModel), m.Cores, orNA(m.Kernel), "manifest.json")
	row("host", "not named by the seed", "not named by the seed (8 I/O threads, a core each, and the load tester's own)",
		func(*setupNumbers) string { return host })
	w.p("\nThe seed names no host for either of its figures, and this one is another machine: the rows compare designs and setups, not machines. ")
	w.p("On this machine the seed's figures are out of reach for the reasons listed above; the gate's interleaved A/B, not this table, is how two builds are compared.\n\n")
}
