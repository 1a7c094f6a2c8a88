package plan

import (
	"fmt"
	"strings"

	"weaseldb/artifacts"
)

// maxPlannedCPUs bounds the search for the smallest dedicated machine.
const maxPlannedCPUs = 1024

// SmallestDedicated is the fitted setup on the smallest machine the rule
// gives dedicated cores (CPUs 0..n-1, each a core of its own), and that n:
// what a user needs for the dedicated throughput runs. ok is false if no
// machine up to maxPlannedCPUs does (the rule never says so).
func SmallestDedicated(seed artifacts.Setup) (s artifacts.Setup, n int, ok bool) {
	for n = 1; n <= maxPlannedCPUs; n++ {
		cpus := make([]int, n)
		for i := range cpus {
			cpus[i] = i
		}
		if s = FitSetup(cpus, seed); s.Cores == artifacts.CoresDedicated {
			return s, n, true
		}
	}
	return artifacts.Setup{}, 0, false
}

// DedicatedNeed says, for a machine whose fitted setup got shared cores,
// what the dedicated one needs and the plan it would run there: how many
// CPUs, and which threads on which CPUs.
func DedicatedNeed(allowed string, fitted artifacts.Setup) string {
	small, n, ok := SmallestDedicated(fitted)
	if !ok {
		return fmt.Sprintf("the dedicated fitted setup has no plan on up to %d CPUs", maxPlannedCPUs)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the dedicated fitted setup needs %d CPUs, each a physical core of its own (allowed here: %s): 1 kept for everything unpinned, %d for the pipeline's threads (sequence, resolve, persist, release), %d I/O loop(s) and %d load-tester thread(s); on CPUs 0-%d it runs %s, %s\n",
		n, allowed, 3+small.ReleaseThreads, small.IOThreads, small.LoadThreads, n-1, small.CPUPlan, small.WaitStrategy)
	b.WriteString(FormatPlacement("  ", small.Placement, small.PlacementGaveUp, small.IRQWarnings))
	return b.String()
}
