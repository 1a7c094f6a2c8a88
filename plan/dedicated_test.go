package plan

import (
	"strings"
	"testing"

	"weaseldb/artifacts"
)

// The smallest dedicated machine is docs/report.md's threshold (7 CPUs),
// and what is printed for a 2-CPU machine names it, each thread's CPU and
// the CPUs allowed here.
func TestDedicatedNeed(t *testing.T) {
	seed := artifacts.Setup{OkIterations: 4000, ConnectThreads: 2, RequestsPerConn: 500}
	small, n, ok := SmallestDedicated(seed)
	if !ok || n != 7 || small.Cores != artifacts.CoresDedicated {
		t.Fatalf("SmallestDedicated = %d CPUs, %s, %v; want 7, dedicated", n, small.Cores, ok)
	}
	if shared := FitSetup([]int{0, 1, 2, 3, 4, 5}, seed); shared.Cores != artifacts.CoresShared {
		t.Fatalf("6 CPUs fitted on %s cores; want shared (7 is the smallest)", shared.Cores)
	}
	got := DedicatedNeed("0-1", FitSetup([]int{0, 1}, seed))
	for _, want := range []string{"needs 7 CPUs", "allowed here: 0-1", "on CPUs 0-6", "io 1; stages 2 3 4 5; load_tester 6", "WaitIfUpstreamIdle", "io 0 cpu=1"} {
		if !strings.Contains(got, want) {
			t.Errorf("DedicatedNeed lacks %q:\n%s", want, got)
		}
	}
}
