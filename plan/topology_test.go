package plan

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"weaseldb/artifacts"
	"weaseldb/internal/placement"
	"weaseldb/internal/procstat"
)

// A run's recorded topology, read back as report check reads it, plans
// what the run planned: the checks' re-plan depends on it.
func TestTopologyRecordReplans(t *testing.T) {
	need := placement.Need{IOThreads: 1, StageThreads: []int{1, 1, 1, 1}, LoadThreads: 2}
	for _, tree := range []string{"server-2s-smt", "desktop-smt", "biglittle", "no-topology"} {
		t.Run(tree, func(t *testing.T) {
			allowed := []int{0, 1, 2, 3, 4, 5, 6, 7}
			topo := procstat.ReadTopology(filepath.Join("..", "internal", "procstat", "testdata", "sysfs", tree), allowed)
			b, err := json.Marshal(RecordTopology(topo))
			if err != nil {
				t.Fatal(err)
			}
			var rec artifacts.CPUTopology
			if err := json.Unmarshal(b, &rec); err != nil {
				t.Fatal(err)
			}
			want, got := placement.PlaceOn(topo, need), placement.PlaceOn(TopologyOf(&rec, allowed), need)
			if want.Why != got.Why || !slices.Equal(want.ServerCPUs, got.ServerCPUs) || !slices.Equal(want.LoadCPUs, got.LoadCPUs) {
				t.Errorf("re-planned from the record: %s\nplanned: %s", got.Why, want.Why)
			}
		})
	}
}
