package callgrind

import (
	"reflect"
	"testing"
)

func TestTopDeltas(t *testing.T) {
	tests := []struct {
		name     string
		from, to map[string]float64
		n        int
		want     []string // "function delta"
	}{
		{"largest change first, either sign", map[string]float64{"a": 10, "b": 100, "c": 50}, map[string]float64{"a": 30, "b": 60, "c": 51}, 5,
			[]string{"b -40.0", "a +20.0", "c +1.0"}},
		{"a function on one side only", map[string]float64{"gone": 8}, map[string]float64{"new": 12}, 5,
			[]string{"new +12.0", "gone -8.0"}},
		{"under half an instruction is rounding", map[string]float64{"a": 10, "b": 5}, map[string]float64{"a": 10.4, "b": 5}, 5, nil},
		{"ties by name; only the top n", map[string]float64{"z": 0, "y": 0, "x": 0}, map[string]float64{"z": 3, "y": 3, "x": 1}, 2,
			[]string{"y +3.0", "z +3.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, d := range TopDeltas(tt.from, tt.to, tt.n) {
				if d.Delta != d.To-d.From {
					t.Errorf("%s: delta %v, from %v to %v", d.Function, d.Delta, d.From, d.To)
				}
				got = append(got, FormatDeltas([]FunctionDelta{d}))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}
