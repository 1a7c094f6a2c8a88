package reports

import "fmt"

// The seed report's figures as sources (artifact "seed report"). Each is
// built by one function so that every print of a figure carries the same
// name, and with it the same source number. The field says where in the
// seed the number stands, quoting its words where they are short.

func seedThroughput() *source {
	return fieldOf("Seed throughput", SeedRequestsPerSec, 1, "req/s", 0, seedArtifact, "Summary (~825k requests/second)")
}

func seedEfficiency() *source {
	return fieldOf("Seed CPU work efficiency", SeedEfficiencyPct, 1, "%", 0, seedArtifact, "Health Check Pipeline (~61%)")
}

// seedTheoreticalMax is the seed's 1e9 ns ÷ 825,000 req/s, which it rounds
// to 1212 ns: the resolve thread's time per request at its throughput.
func seedTheoreticalMax() *source {
	return fieldOf("Seed theoretical maximum CPU time per request", SeedTheoreticalMaxNs, 1, "ns", 0, seedArtifact,
		"Health Check Pipeline (~1212ns, 1,000,000,000ns ÷ 825,000 req/s)")
}

func seedIOThreads() *source {
	return fieldOf("Seed I/O threads", SeedIOThreads, 1, "", 0, seedArtifact, "Throughput (8 I/O threads)")
}

func seedWork() *source {
	return fieldOf("Seed CPU work per request", SeedWorkNs, 1, "ns", 0, seedArtifact, "Health Check Pipeline (740ns)")
}

func seedWorkIterations() *source {
	return fieldOf("Seed spin iterations per request", SeedWorkIterations, 1, "", 0, seedArtifact, "Health Check Pipeline (4000 iterations)")
}

func seedRunSeconds() *source {
	return fieldOf("Seed load per run", SeedRunSeconds, 1, "s", 0, seedArtifact, "Health Check Pipeline (a 30-second run)")
}

// The seed's load tester, from its list of the test's setup.
func seedConnections() *source {
	return fieldOf("Seed load tester connections, in all", SeedConnections, 1, "", 0, seedArtifact, "test setup, Load tester (2000 concurrent connections)")
}

func seedNetworkThreads() *source {
	return fieldOf("Seed load tester network threads", SeedNetworkThreads, 1, "", 0, seedArtifact, "test setup, Load tester (10 network threads)")
}

func seedConnectThreads() *source {
	return fieldOf("Seed load tester connect threads", SeedConnectThreads, 1, "", 0, seedArtifact, "test setup, Load tester (8 connect threads)")
}

// seedScriptConnectThreads is what the seed's reproduce_threading_report.sh
// passes, which disagrees with the 8 its report lists.
func seedScriptConnectThreads() *source {
	return fieldOf("Seed script's connect threads", SeedScriptConnectThreads, 1, "", 0, seedArtifact,
		fmt.Sprintf("reproduce_threading_report.sh (--connect-threads %d)", SeedScriptConnectThreads))
}
