package plan

import (
	"fmt"
	"strings"
)

// FormatPlacement is a dedicated plan as printed before its run, each line
// after indent: its threads (cpu= core= node= idle=, as bench_pipeline
// --print-plan prints them), what the machine could not give it, and the
// network interrupts that may land on its CPUs. "" for a plan without
// threads (shared cores).
func FormatPlacement(indent string, placement, gaveUp, irqWarnings []string) string {
	var b strings.Builder
	for _, l := range placement {
		fmt.Fprintf(&b, "%s%s\n", indent, l)
	}
	for _, g := range gaveUp {
		fmt.Fprintf(&b, "%sgave up: %s\n", indent, g)
	}
	for _, w := range irqWarnings {
		fmt.Fprintf(&b, "%swarning: %s\n", indent, w)
	}
	return b.String()
}
