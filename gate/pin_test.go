package gate

import (
	"reflect"
	"strings"
	"testing"

	"weaseldb/internal/procstat"
)

func TestPlanCPUs(t *testing.T) {
	allowed := []int{0, 1, 2, 3, 4}
	tests := []struct {
		spec         string
		allowed      []int
		server, cpus []int
		err          string
	}{
		{spec: "auto", allowed: []int{0, 1}, server: []int{0}, cpus: []int{1}},
		{spec: "auto", allowed: allowed, server: []int{1, 2}, cpus: []int{3, 4}}, // CPU 0 kept for the rest
		{spec: "", allowed: []int{4, 7}, server: []int{4}, cpus: []int{7}},
		{spec: "auto", allowed: []int{3}}, // one CPU: nothing to split
		{spec: "off", allowed: allowed},   // asked not to
		{spec: "0-1:3", allowed: allowed, server: []int{0, 1}, cpus: []int{3}},
		{spec: "2:0,4", allowed: allowed, server: []int{2}, cpus: []int{0, 4}},
		{spec: "0-2:2-3", allowed: allowed, err: "CPU 2 is given to both"},
		{spec: "0:9", allowed: allowed, err: "load tester CPUs: affinity: CPU 9 is not available"},
		{spec: "x:1", allowed: allowed, err: "server CPUs"},
		{spec: "0-3", allowed: allowed, err: "want auto, off or SERVER_CPUS:CLIENT_CPUS"},
		{spec: ":1", allowed: allowed, err: "server CPUs"},
	}
	for _, tt := range tests {
		plan, err := PlanCPUs(tt.spec, tt.allowed)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("PlanCPUs(%q) error %v, want one containing %q", tt.spec, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("PlanCPUs(%q): %v", tt.spec, err)
			continue
		}
		if !reflect.DeepEqual(plan.Server, tt.server) || !reflect.DeepEqual(plan.Client, tt.cpus) {
			t.Errorf("PlanCPUs(%q, %v) = %v / %v, want %v / %v", tt.spec, tt.allowed, plan.Server, plan.Client, tt.server, tt.cpus)
		}
		if plan.Pinned() != (tt.server != nil) {
			t.Errorf("PlanCPUs(%q).Pinned() = %v", tt.spec, plan.Pinned())
		}
	}
}

// --pin auto names a network interrupt that may land on a CPU it
// dedicates, and nothing on a CPU it keeps for the rest.
func TestPlanCPUsAutoNamesInterrupts(t *testing.T) {
	topo := procstat.FlatTopology([]int{0, 1, 2, 3, 4, 5, 6, 7}, "")
	topo.NetIRQs = []procstat.IRQ{{Number: 38, Interface: "eth0", Name: "virtio2-input.0", CPUs: []int{5}},
		{Number: 39, Interface: "eth0", Name: "virtio2-output.0", CPUs: []int{0}}}
	p, err := PlanCPUsOn("auto", topo)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.IRQWarnings) != 1 || !strings.Contains(p.IRQWarnings[0], "IRQ 38 (eth0, virtio2-input.0) may land on CPU 5") {
		t.Errorf("warnings %q, want one naming IRQ 38 on CPU 5", p.IRQWarnings)
	}
}
