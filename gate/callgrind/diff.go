package callgrind

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Which functions a cost difference is made of. A verdict that says "B
// costs +1.2%" sends its reader to a profiler; the counts are already in
// hand, so the gate names the functions whose counted instructions per
// request moved most. Between A and B that is where a regression came from;
// between two runs of one side that did not agree, it is the code whose
// cost follows the clock and that the filter (filter.go) does not yet
// leave out: after a Go release renames a runtime function, this is the
// list to read.

// FunctionDelta is one function's change in counted instructions per
// request, from one run (From) to another (To).
type FunctionDelta struct {
	Function string  `json:"function"`
	From     float64 `json:"from"`
	To       float64 `json:"to"`
	Delta    float64 `json:"delta"` // To - From
}

// PerRequest is a profile's counted functions' own instructions per request.
func PerRequest(self map[string]int64, requests int64) map[string]float64 {
	out := make(map[string]float64, len(self))
	if requests <= 0 {
		return out
	}
	for fn, v := range self {
		out[fn] = float64(v) / float64(requests)
	}
	return out
}

// TopDeltas returns the n functions whose per-request cost differs most
// between from and to, largest change first (ties by name, so the list is
// the same for the same counts). Changes under half an instruction per
// request are rounding, not code, and are left out.
func TopDeltas(from, to map[string]float64, n int) []FunctionDelta {
	var out []FunctionDelta
	add := func(fn string) {
		d := FunctionDelta{Function: fn, From: from[fn], To: to[fn]}
		d.Delta = d.To - d.From
		if math.Abs(d.Delta) >= 0.5 {
			out = append(out, d)
		}
	}
	for fn := range from {
		add(fn)
	}
	for fn := range to {
		if _, seen := from[fn]; !seen {
			add(fn)
		}
	}
	slices.SortFunc(out, func(a, b FunctionDelta) int {
		if c := cmp.Compare(math.Abs(b.Delta), math.Abs(a.Delta)); c != 0 {
			return c
		}
		return strings.Compare(a.Function, b.Function)
	})
	return out[:min(n, len(out))]
}

// FormatDeltas is a list for a reason line: "f +12.3, g -4.0".
func FormatDeltas(ds []FunctionDelta) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%s %+.1f", d.Function, d.Delta)
	}
	return strings.Join(parts, ", ")
}
