package pipebench

// Where the hot threads run: the throughput families' producer and stages
// (AutoCPUs), and the latency family's producer and stage (LatencyPlan).
// Each function takes the CPUs the process may use, so the plans are tested
// on injected CPU sets without touching real affinity.

import (
	"fmt"
	"slices"

	"weaseldb/internal/affinity"
	"weaseldb/internal/placement"
	"weaseldb/internal/procstat"
)

// AutoCPUs places the producer and one thread per stage on dedicated
// cores by internal/placement (PlaceHot): where the full plan fits, the one
// the gate and the report use, so a standalone run pins its threads where
// the report's wait-strategy comparison does; with exactly a CPU per thread,
// each its own and none kept. It fails, saying how many CPUs it needs, where
// some thread would have to share: spinning stages on shared cores measure
// the contention, not the pipeline.
func AutoCPUs(allowed []int, stages int) ([]int, error) {
	list, _, err := AutoPlan(procstat.FlatTopology(allowed, ""), stages)
	return list, err
}

// AutoPlan is AutoCPUs on a machine's topology (a physical core per hot
// thread, one NUMA node where one has room), with the plan it chose
// (bench_pipeline --print-plan prints its threads).
func AutoPlan(topo procstat.Topology, stages int) ([]int, placement.Plan, error) {
	need := placement.Need{Producer: true, StageThreads: slices.Repeat([]int{1}, stages)}
	p, err := placement.PlaceHotOn(topo, need)
	if err == nil && !p.Dedicated {
		unit := "CPUs"
		if topo.SMT() {
			unit = "physical cores"
		}
		err = fmt.Errorf("needs %d %s (one per hot thread: the producer and %d stages), this process may use %d (%s)",
			stages+1, unit, stages, len(topo.Cores()), affinity.FormatCPUList(allowedOf(topo)))
	}
	if err != nil {
		return nil, p, err
	}
	list := []int{p.ProducerCPU}
	for _, s := range p.StageCPUs {
		list = append(list, s...)
	}
	return list, p, nil
}

func allowedOf(topo procstat.Topology) []int {
	out := make([]int, len(topo.CPUs))
	for i, c := range topo.CPUs {
		out[i] = c.CPU
	}
	return out
}

// LatencyPlan is where the latency family's two hot threads (the producer,
// or ping, and the stage, or pong) run on dedicated cores; the family's
// shared cases pin nothing.
type LatencyPlan struct {
	Dedicated       bool // false: the dedicated cases are skipped, for Skip
	Producer, Stage int
	Why             string // what ran where and what shared what
	Skip            string
}

// latencyNeed is the latency family's hot threads: a producer and one stage.
var latencyNeed = placement.Need{Producer: true, StageThreads: []int{1}}

// PlanLatencyAuto places the two hot threads by placement.PlaceHot: on 2
// CPUs each owns one and the Go runtime's other threads float over both.
func PlanLatencyAuto(allowed []int) LatencyPlan {
	return PlanLatencyOn(procstat.FlatTopology(allowed, ""))
}

// PlanLatencyOn is PlanLatencyAuto on a machine's topology: the two hot
// threads on physical cores of their own where there are two.
func PlanLatencyOn(topo procstat.Topology) LatencyPlan {
	p, err := placement.PlaceHotOn(topo, latencyNeed)
	if err != nil {
		return LatencyPlan{Skip: "--cpus auto: " + err.Error()}
	}
	return LatencyPlan{Dedicated: true, Producer: p.ProducerCPU, Stage: p.StageCPUs[0][0], Why: p.Why}
}

// PlanLatencyList takes the producer's and stage 0's CPUs from --cpus
// (allowed is what the process may use, for Why); a list of fewer than two
// is a plan that skips, not a panic.
func PlanLatencyList(list, allowed []int) LatencyPlan {
	if len(list) < 2 {
		return LatencyPlan{Skip: fmt.Sprintf("--cpus gives %d CPUs: the producer and stage 0 need one each", len(list))}
	}
	if list[0] == list[1] {
		return LatencyPlan{Skip: fmt.Sprintf("--cpus gives the producer and stage 0 the same CPU (%d): not dedicated", list[0])}
	}
	return LatencyPlan{Dedicated: true, Producer: list[0], Stage: list[1],
		Why: fmt.Sprintf("from --cpus: producer on %d, stage 0 on %d; the Go runtime's other threads float over %s",
			list[0], list[1], affinity.FormatCPUList(allowed))}
}

// SharedLatencyPlan is the CPU plan of the latency family's shared cases:
// nothing pinned, everything floating over the allowed CPUs.
func SharedLatencyPlan(allowed []int, gomaxprocs int) string {
	return fmt.Sprintf("shared cores: nothing pinned; the producer, the stage and the Go runtime's threads float over %s (GOMAXPROCS %d)",
		affinity.FormatCPUList(allowed), gomaxprocs)
}
