package placement

import (
	"fmt"
	"slices"

	"weaseldb/internal/affinity"
	"weaseldb/internal/procstat"
)

// IRQWarnings names each network interrupt that may land on a CPU the plan
// dedicates to a thread: a packet's interrupt and softirq work there steal
// the thread's time, which the run would take for the thread's own cost.
// It only warns; moving interrupts is the machine's owner's call
// (docs/manycore.md says how).
func IRQWarnings(threads []Thread, irqs []procstat.IRQ) []string {
	var out []string
	for _, irq := range irqs {
		for _, t := range threads {
			if !slices.Contains(irq.CPUs, t.CPU) {
				continue
			}
			out = append(out, fmt.Sprintf("IRQ %d (%s, %s) may land on CPU %d, dedicated to %s (its affinity: %s); see /proc/irq/%d/smp_affinity_list",
				irq.Number, irq.Interface, irq.Name, t.CPU, t.Name, affinity.FormatCPUList(irq.CPUs), irq.Number))
		}
	}
	return out
}
