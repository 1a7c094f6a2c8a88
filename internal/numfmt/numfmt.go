// Package numfmt is the tree's one number formatter: figures with a fixed
// number of decimals and thousands separators ("51,234", "1,234.50"), the
// way the report, its runner's tables and the gate print them, and the
// reader that takes such a figure back.
package numfmt

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// NotANumber is what Format prints for NaN and the infinities.
const NotANumber = "n/a"

// Format prints v with prec decimals and thousands separators ("1,234.5"
// for 1234.5 and 1); NaN and ±Inf print as NotANumber. Parse reads it back.
func Format(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return NotANumber
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac, hasFrac := strings.Cut(s, ".")
	if hasFrac {
		return sign + group(intPart) + "." + frac
	}
	return sign + group(intPart)
}

// Int prints n with thousands separators ("-12,345").
func Int(n int64) string {
	s := strconv.FormatInt(n, 10)
	if strings.HasPrefix(s, "-") {
		return "-" + group(s[1:])
	}
	return group(s)
}

// group puts a comma between every three digits from the right.
func group(digits string) string {
	var b strings.Builder
	b.Grow(len(digits) + len(digits)/3)
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Parse reads back a number printed by Format (or any plain decimal, with or
// without separators) and returns it with the number of decimals it was
// printed with.
func Parse(s string) (value float64, decimals int, err error) {
	clean := strings.ReplaceAll(strings.TrimSpace(s), ",", "")
	v, err := strconv.ParseFloat(clean, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("parse number %q: %w", s, err)
	}
	if _, frac, ok := strings.Cut(clean, "."); ok {
		decimals = len(frac)
	}
	return v, decimals, nil
}

// Latency prints a duration in nanoseconds with the unit that keeps it short:
// "812ns", "12.3µs", "4.51ms", "2.500s" (load_tester's and bench_pipeline's
// latency tables).
func Latency(ns int64) string {
	switch {
	case ns < 1_000:
		return fmt.Sprintf("%dns", ns)
	case ns < 1_000_000:
		return fmt.Sprintf("%.1fµs", float64(ns)/1e3)
	case ns < 1_000_000_000:
		return fmt.Sprintf("%.2fms", float64(ns)/1e6)
	}
	return fmt.Sprintf("%.3fs", float64(ns)/1e9)
}

// Count is n and noun, the noun in the plural (an added s) unless n is 1:
// "1 request", "2 requests".
func Count(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "y") && !strings.HasSuffix(noun, "ey") {
		return strconv.FormatInt(n, 10) + " " + strings.TrimSuffix(noun, "y") + "ies" // latency: latencies
	}
	return strconv.FormatInt(n, 10) + " " + noun + "s"
}

// WasWere is the verb after Count(n, ...): "was" for one, else "were".
func WasWere(n int64) string {
	if n == 1 {
		return "was"
	}
	return "were"
}
