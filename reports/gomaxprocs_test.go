package reports

import (
	"fmt"
	"runtime"
	"testing"

	"weaseldb/artifacts"
	"weaseldb/plan"
	"weaseldb/server/app"
	"weaseldb/server/config"
)

// PlannedGOMAXPROCS, which the checks hold a run's server to, is what the
// server sets (app.TuneGOMAXPROCS) for every shape the runs use: shared and
// dedicated, each strategy, 1 and 8 loops, 1 and 2 release threads.
func TestPlannedGOMAXPROCSIsTheServers(t *testing.T) {
	t.Setenv("GOMAXPROCS", "") // the server's own choice, not the environment's
	procs := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(procs) })
	for _, strategy := range artifacts.WaitStrategyNames {
		for _, io := range []int{1, 8} {
			for _, release := range []int{1, 2} {
				for _, pinned := range []bool{false, true} {
					cfg := config.Default()
					cfg.Server.IOThreads = io
					cfg.Commit.PipelineWaitStrategy = strategy
					cfg.Commit.PipelineReleaseThreads = release
					n := 0
					if pinned {
						for i := range io {
							cfg.Server.IOCPUs = append(cfg.Server.IOCPUs, i)
						}
						cfg.Commit.PipelineCPUs = [][]int{{io}, {io + 1}, {io + 2}, []int{io + 3, io + 4}[:release]}
						n = io + plan.ServerStageThreads(release)
					}
					name := fmt.Sprintf("%s/io%d/release%d/pinned%t", strategy, io, release, pinned)
					if got, want := PlannedGOMAXPROCS(io, release, strategy, n), app.TuneGOMAXPROCS(cfg); got != want {
						t.Errorf("%s: planned %d, the server sets %d", name, got, want)
					}
				}
			}
		}
	}
}
