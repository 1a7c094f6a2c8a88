package result

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestPrintIntervalSaysWhenPartial: the last interval of an interrupted run
// can last milliseconds; its req/s must not read as a whole interval's.
func TestPrintIntervalSaysWhenPartial(t *testing.T) {
	for _, tc := range []struct {
		name    string
		length  float64
		every   time.Duration
		partial bool
	}{
		{"whole interval", 1.0003, time.Second, false},
		{"interval ended a little early", 0.95, time.Second, false},
		{"interrupted after 3 ms", 0.003, time.Second, true},
		{"short stats interval, whole", 0.1, 100 * time.Millisecond, false},
		{"short stats interval, partial", 0.02, 100 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			PrintInterval(&b, Interval{TS: 3, LengthS: tc.length, Requests: 10, RequestsPerSec: 10 / tc.length}, false, tc.every)
			if got := strings.Contains(b.String(), "(partial: "); got != tc.partial {
				t.Errorf("line %q: partial tag %v, want %v", b.String(), got, tc.partial)
			}
		})
	}
}
