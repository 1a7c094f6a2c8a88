package placement

import (
	"strings"
	"testing"

	"weaseldb/internal/procstat"
)

func TestIRQWarnings(t *testing.T) {
	threads := []Thread{{Name: "io 0", CPU: 5}, {Name: "stage 0", CPU: 6}}
	irqs := []procstat.IRQ{
		{Number: 38, Interface: "eth0", Name: "virtio2-input.0", CPUs: []int{0}},
		{Number: 39, Interface: "eth0", Name: "virtio2-output.0", CPUs: []int{4, 5, 6, 7}},
	}
	got := IRQWarnings(threads, irqs)
	if len(got) != 2 || !strings.HasPrefix(got[0], "IRQ 39 (eth0, virtio2-output.0) may land on CPU 5, dedicated to io 0 (its affinity: 4-7)") ||
		!strings.Contains(got[1], "CPU 6, dedicated to stage 0") {
		t.Errorf("warnings %q", got)
	}
	if got := IRQWarnings(threads, irqs[:1]); len(got) != 0 {
		t.Errorf("an interrupt on CPU 0 only: %q, want none", got)
	}
}
