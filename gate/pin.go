package gate

import (
	"fmt"
	"slices"
	"strings"

	"weaseldb/gate/result"
	"weaseldb/internal/affinity"
	"weaseldb/internal/placement"
	"weaseldb/internal/procstat"
)

// CPUPlan puts the server and the load tester on CPUs of their own. On a
// small machine this is what makes runs comparable: unpinned, the server's
// loop and two client threads share two CPUs by the scheduler's luck, and
// identical 1 s runs of one binary ranged from 121k to 198k req/s here;
// pinned, six such runs ranged 199k-226k (docs/gate.md, "Pinning").
// The zero plan pins nothing.
type CPUPlan struct {
	Server []int
	Client []int
	// IRQWarnings name the network interrupts that may land on a CPU an
	// "auto" plan dedicates (placement.IRQWarnings): the run warns, and
	// never moves them.
	IRQWarnings []string
}

// Pinned reports whether the plan pins anything.
func (p CPUPlan) Pinned() bool { return len(p.Server) > 0 }

// String is "server 0 / load tester 1" or "unpinned", as in Settings.
func (p CPUPlan) String() string {
	if !p.Pinned() {
		return "unpinned"
	}
	return result.PinText(affinity.FormatCPUList(p.Server), affinity.FormatCPUList(p.Client))
}

// PlanCPUs turns --pin into a plan over the CPUs this process may use:
//   - "auto": the one placement rule (internal/placement) for the thread
//     counts fitted to this machine: the server's process on the CPUs that
//     rule gives the fitted setup's I/O loops and stages, the load tester
//     on its load threads' CPUs; on a small machine, disjoint halves (one
//     CPU kept for the rest from 3 CPUs on); nothing pinned with fewer
//     than 2 CPUs. The report's fitted setup is placed by the same rule, so
//     on one machine both measure the same placement.
//   - "off": nothing pinned.
//   - "SERVER:CLIENT", two CPU lists in the kernel's format ("0-3:4-7").
func PlanCPUs(spec string, allowed []int) (CPUPlan, error) {
	return PlanCPUsOn(spec, procstat.FlatTopology(allowed, ""))
}

// PlanCPUsOn is PlanCPUs on the machine's topology: "auto" counts physical
// cores, not hyper-threads, and keeps the server on one NUMA node where
// one has room (placement.PlaceOn); a dedicated plan names the network
// interrupts in topo.NetIRQs that may land on its CPUs.
func PlanCPUsOn(spec string, topo procstat.Topology) (CPUPlan, error) {
	var allowed []int
	for _, p := range topo.CPUs {
		allowed = append(allowed, p.CPU)
	}
	switch spec {
	case "off":
		return CPUPlan{}, nil
	case "auto", "":
		p := placement.PlaceOn(topo, placement.FitOn(topo))
		if !p.Pinned() {
			return CPUPlan{}, nil
		}
		return CPUPlan{Server: p.ServerCPUs, Client: p.LoadCPUs, IRQWarnings: placement.IRQWarnings(p.Threads, topo.NetIRQs)}, nil
	}
	server, client, ok := strings.Cut(spec, ":")
	if !ok {
		return CPUPlan{}, fmt.Errorf("--pin %q: want auto, off or SERVER_CPUS:CLIENT_CPUS (e.g. 0-3:4-7)", spec)
	}
	var plan CPUPlan
	for _, part := range []struct {
		name, list string
		dst        *[]int
	}{{"server", server, &plan.Server}, {"load tester", client, &plan.Client}} {
		cpus, err := affinity.ParseCPUList(part.list)
		if err == nil {
			err = affinity.Validate(cpus, allowed)
		}
		if err != nil {
			return CPUPlan{}, fmt.Errorf("--pin %q, %s CPUs: %w", spec, part.name, err)
		}
		*part.dst = cpus
	}
	for _, c := range plan.Client {
		if slices.Contains(plan.Server, c) {
			return CPUPlan{}, fmt.Errorf("--pin %q: CPU %d is given to both the server and the load tester", spec, c)
		}
	}
	return plan, nil
}
