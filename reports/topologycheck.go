package reports

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"weaseldb/artifacts"
	"weaseldb/internal/affinity"
	"weaseldb/plan"
)

// topology checks a dedicated run's pinned threads, as read back from
// /proc (res), against the run's recorded topology: no two on one physical
// core (CheckSharedCore), and all on one NUMA node unless the plan said no
// node had room (CheckOneNode). A run that recorded no topology planned
// every CPU as a core: the checks say so and pass.
func (c *checker) topology(subject, name string, res PinningResult, rec *artifacts.CPUTopology, allowedText string, gaveUp []string) {
	if len(res.Pinned) == 0 {
		return // nothing pinned was read back: the pinning check says why
	}
	allowed, _ := affinity.ParseCPUList(allowedText)
	topo := plan.TopologyOf(rec, allowed)
	byCore := map[int][]string{}
	nodes := map[int][]string{}
	seen := map[string]bool{} // bench_pipeline's stage threads come and go: one entry per role and CPU
	for _, th := range res.Pinned {
		p, ok := topo.Place(th.CPU)
		if !ok {
			p.Core, p.Node = th.CPU, 0
		}
		who := fmt.Sprintf("%s on CPU %d", th.Role, th.CPU)
		if seen[who] {
			continue
		}
		seen[who] = true
		byCore[p.Core] = append(byCore[p.Core], who)
		nodes[p.Node] = append(nodes[p.Node], who)
	}
	var shared []string
	for core, who := range byCore {
		if len(who) > 1 {
			shared = append(shared, fmt.Sprintf("core %d: %s", core, strings.Join(who, ", ")))
		}
	}
	slices.Sort(shared)
	note := ""
	if rec == nil || rec.Flat {
		note = " (no topology recorded: each CPU taken for a core of its own)"
	}
	if len(shared) > 0 {
		c.add(subject, artifacts.CheckSharedCore, false, name, "threads share physical cores: %s", strings.Join(shared, "; "))
	} else {
		cores := slices.Sorted(maps.Keys(byCore))
		c.add(subject, artifacts.CheckSharedCore, true, name, "%d pinned threads on %d physical cores (%s)%s",
			len(seen), len(byCore), affinity.FormatCPUList(cores), note)
	}
	keys := slices.Sorted(func(yield func(int) bool) {
		for n := range nodes {
			if !yield(n) {
				return
			}
		}
	})
	switch {
	case len(keys) == 1:
		c.add(subject, artifacts.CheckOneNode, true, name, "every pinned thread on node %d", keys[0])
	case slices.ContainsFunc(gaveUp, func(s string) bool { return strings.Contains(s, "node") }):
		c.add(subject, artifacts.CheckOneNode, true, name, "on nodes %v: %s", keys, strings.Join(gaveUp, "; "))
	default:
		var parts []string
		for _, n := range keys {
			parts = append(parts, fmt.Sprintf("node %d: %s", n, strings.Join(nodes[n], ", ")))
		}
		c.add(subject, artifacts.CheckOneNode, false, name, "the pipeline spans nodes though the plan found room on one: %s", strings.Join(parts, "; "))
	}
}
