package reports

import (
	"fmt"
	"strconv"
	"strings"

	"weaseldb/internal/numfmt"
)

// Figure is one number printed in the report (numfmt.Format's text), with
// where it came from.
// Artifact is a file of the run (or "seed report" for the numbers the seed
// published); Field is a JSON path into it ("latency_ns.p99",
// "intervals[3].requests_per_sec") or, for a derived figure, its formula.
type Figure struct {
	ID       int
	Name     string
	Value    float64
	Unit     string
	Text     string // as printed: number and unit
	Artifact string
	Field    string
	Scale    float64 // Value = artifact field × Scale (1 unless a unit changes)
	Derived  bool
}

// Ref is how a figure appears in the prose: its text and its source number.
func (f Figure) Ref() string {
	return fmt.Sprintf("%s<sup>[%d]</sup>", f.Text, f.ID)
}

// figureBook numbers figures in the order the report first prints them.
type figureBook struct {
	list []Figure
}

// add records a figure read directly from an artifact field; scale converts
// the field into the printed unit (1e-3 prints nanoseconds as microseconds).
func (b *figureBook) add(name string, field float64, scale float64, unit string, prec int, artifact, path string) Figure {
	return b.push(Figure{Name: name, Value: field * scale, Unit: unit, Artifact: artifact, Field: path, Scale: scale}, prec)
}

// derive records a figure computed from other figures; formula names them.
func (b *figureBook) derive(name string, value float64, unit string, prec int, formula string) Figure {
	return b.push(Figure{Name: name, Value: value, Unit: unit, Artifact: "derived", Field: formula, Scale: 1, Derived: true}, prec)
}

func (b *figureBook) push(f Figure, prec int) Figure {
	f.ID = len(b.list) + 1
	f.Text = numfmt.Format(f.Value, prec)
	if f.Unit != "" {
		f.Text += " " + f.Unit
	}
	b.list = append(b.list, f)
	return f
}

// LookupField resolves a JSON path such as "cases[2].items_per_sec" or
// "config.values.server.io_threads" in a generically decoded JSON value.
func LookupField(doc any, path string) (any, error) {
	cur := doc
	for _, part := range strings.Split(path, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			obj, ok := cur.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("field %q: %q is not an object", path, name)
			}
			if cur, ok = obj[name]; !ok {
				return nil, fmt.Errorf("field %q: no key %q", path, name)
			}
		}
		for rest != "" {
			idxText, after, ok := strings.Cut(rest, "]")
			if !ok {
				return nil, fmt.Errorf("field %q: unclosed '['", path)
			}
			idx, err := strconv.Atoi(idxText)
			if err != nil {
				return nil, fmt.Errorf("field %q: index %q: %w", path, idxText, err)
			}
			arr, isArr := cur.([]any)
			if !isArr || idx < 0 || idx >= len(arr) {
				return nil, fmt.Errorf("field %q: index %d out of range", path, idx)
			}
			cur = arr[idx]
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return cur, nil
}

// LookupNumber is LookupField for a numeric (or boolean) field.
func LookupNumber(doc any, path string) (float64, error) {
	v, err := LookupField(doc, path)
	if err != nil {
		return 0, err
	}
	switch n := v.(type) {
	case float64:
		return n, nil
	case bool:
		if n {
			return 1, nil
		}
		return 0, nil
	default:
		return 0, fmt.Errorf("field %q is %T, not a number", path, v)
	}
}
