package gate

import (
	"os/exec"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"weaseldb/server/affinity"
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
		{spec: "auto", allowed: allowed, server: []int{0, 1}, cpus: []int{2, 3, 4}},
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

// A process started with startOn runs on exactly the given CPUs, and the
// gate's own goroutines keep the full mask.
func TestStartOnPinsTheChild(t *testing.T) {
	allowed, err := affinity.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	want := allowed[len(allowed)-1:] // one CPU; works on a 1-CPU machine too
	cmd := exec.Command("sh", "-c", "grep Cpus_allowed_list /proc/self/status")
	var out strings.Builder
	cmd.Stdout = &out
	if err := startOn(cmd, want); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(out.String()), "Cpus_allowed_list:"))
	if got != affinity.FormatCPUList(want) {
		t.Errorf("child's CPUs %q, want %q", got, affinity.FormatCPUList(want))
	}
	// The thread that forked was pinned and never unlocked, so the runtime
	// ended it (or, if it was the main thread, parked it for good): no
	// goroutine may run on a narrowed mask afterwards.
	for range 20 {
		mask := make(chan []int)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpus, _ := affinity.CurrentThreadCPUs()
			mask <- cpus
		}()
		if got := <-mask; !reflect.DeepEqual(got, allowed) {
			t.Fatalf("a goroutine of the gate runs on CPUs %v after startOn, want %v", got, allowed)
		}
	}
}
