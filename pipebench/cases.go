// Package pipebench holds the ThreadPipeline benchmark cases and their
// runners, shared by cmd/bench_pipeline and the Go testing benchmarks, so
// `go test -bench` and the binary measure the very same code. Each case also
// runs over Go channels, the baseline a Go programmer would pick instead:
// one item per send, and slices of `batch` items per send.
package pipebench

import (
	"fmt"
	"slices"

	"weaseldb/server/pipeline"
)

// Impl names what moves the items.
type Impl string

const (
	ImplPipeline       Impl = "pipeline"        // pipeline.Pipeline[uint64]
	ImplChannel        Impl = "channel"         // chan uint64, one item per send
	ImplChannelBatched Impl = "channel_batched" // chan []uint64, a new slice of Batch items per send
)

// Impls lists the implementations in the order each family runs them.
func Impls() []Impl { return []Impl{ImplPipeline, ImplChannel, ImplChannelBatched} }

// Families, after the seed's benchmarks.
const (
	FamilySingleStage  = "single_stage"  // one stage with spin work per item
	FamilyBatch        = "batch"         // batch sizes, no spin work: the pure hand-off cost
	FamilyBatchSpin    = "batch_spin"    // batch sizes with spin work
	FamilyWaitStrategy = "wait_strategy" // the wait strategies across two stages
)

// Case is one benchmark configuration.
type Case struct {
	Family    string
	Name      string
	Impl      Impl
	Strategy  pipeline.WaitStrategy // pipeline only
	Stages    int                   // one goroutine per stage
	Batch     int                   // items per push (per send for channel_batched)
	SpinIters int                   // cpuwork.SpendCPUCycles per item per stage
	Items     int                   // items per timed run
	LgSlots   int                   // ring of 2^LgSlots; channels get the same capacity in items
}

// StrategyName is the case's strategy as the JSON and table show it ("-"
// for channels, which have no wait strategy).
func (c Case) StrategyName() string {
	if c.Impl != ImplPipeline {
		return "-"
	}
	return c.Strategy.String()
}

// Parameters of the families. The wait-strategy family is the seed's own
// (ring 2^8, 50,000 items, batch 4, 10 spin iterations per item per stage);
// the seed's file does not show the other two families' constants, so these
// are ours.
const (
	SingleStageSpin  = 100
	SingleStageBatch = 1
	BatchSpin        = 100
	BatchItems       = 100_000
	// BatchNoSpinItems is larger: without spin work an item costs a few ns,
	// and a run of 100,000 would last well under a millisecond, so one
	// preemption by a neighbour would decide it.
	BatchNoSpinItems  = 1_000_000
	BatchLgSlots      = 10
	WaitStrategyItems = 50_000
	WaitStrategyLg    = 8
	WaitStrategyBatch = 4
	WaitStrategySpin  = 10
)

// BatchSizes are the batch family's batch sizes.
var BatchSizes = []int{1, 4, 16, 64, 256}

// AllCases returns every case, grouped by family; within a family the
// first case (the ratio's reference) is the pipeline's.
func AllCases() []Case {
	var cases []Case
	for _, impl := range Impls() {
		cases = append(cases, Case{
			Family: FamilySingleStage, Impl: impl, Strategy: pipeline.WaitIfStageEmpty,
			Stages: 1, Batch: SingleStageBatch, SpinIters: SingleStageSpin, Items: BatchItems, LgSlots: BatchLgSlots,
		})
	}
	for _, fam := range []struct {
		name  string
		spin  int
		items int
	}{{FamilyBatch, 0, BatchNoSpinItems}, {FamilyBatchSpin, BatchSpin, BatchItems}} {
		for _, batch := range BatchSizes {
			for _, impl := range Impls() {
				cases = append(cases, Case{
					Family: fam.name, Impl: impl, Strategy: pipeline.WaitIfStageEmpty,
					Stages: 1, Batch: batch, SpinIters: fam.spin, Items: fam.items, LgSlots: BatchLgSlots,
				})
			}
		}
	}
	for _, s := range pipeline.Strategies() {
		cases = append(cases, waitCase(ImplPipeline, s))
	}
	cases = append(cases, waitCase(ImplChannel, 0), waitCase(ImplChannelBatched, 0))
	for i := range cases {
		cases[i].Name = cases[i].defaultName()
	}
	return cases
}

// FamilyCases is AllCases of the given families, in AllCases' order.
func FamilyCases(families []string) []Case {
	var out []Case
	for _, c := range AllCases() {
		if slices.Contains(families, c.Family) {
			out = append(out, c)
		}
	}
	return out
}

// MaxStages is the most stages any chosen family's cases use.
func MaxStages(families []string) int {
	n := 1
	for _, c := range FamilyCases(families) {
		n = max(n, c.Stages)
	}
	return n
}

func waitCase(impl Impl, s pipeline.WaitStrategy) Case {
	return Case{
		Family: FamilyWaitStrategy, Impl: impl, Strategy: s, Stages: 2,
		Batch: WaitStrategyBatch, SpinIters: WaitStrategySpin, Items: WaitStrategyItems, LgSlots: WaitStrategyLg,
	}
}

// defaultName is the case's name, shaped like a Go sub-benchmark path so
// the binary's table and `go test -bench` name the same case alike.
func (c Case) defaultName() string {
	switch c.Family {
	case FamilyWaitStrategy:
		if c.Impl == ImplPipeline {
			return fmt.Sprintf("%s/impl=%s/strategy=%s", c.Family, c.Impl, c.Strategy)
		}
		return fmt.Sprintf("%s/impl=%s", c.Family, c.Impl)
	case FamilySingleStage:
		return fmt.Sprintf("%s/impl=%s", c.Family, c.Impl)
	default:
		return fmt.Sprintf("%s/impl=%s/batch=%d", c.Family, c.Impl, c.Batch)
	}
}
