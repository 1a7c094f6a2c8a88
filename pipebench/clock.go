package pipebench

import (
	"os"
	"strings"
	"time"
)

// clockBase anchors every latency timestamp: now() is the monotonic time
// since it, in ns. time.Since on a time.Time that carries a monotonic
// reading reads only the monotonic clock (CLOCK_MONOTONIC through the vDSO
// on Linux), one read per call, and is comparable across threads and CPUs.
var clockBase = time.Now()

// now is the monotonic clock in ns since clockBase; always > 0 once a
// nanosecond has passed, so 0 is free to mark an unrecorded item.
func now() int64 { return int64(time.Since(clockBase)) }

// ClockCost is what reading now() costs, which bounds what a latency
// figure can resolve: a hand-off is timed by two reads, so no figure below
// about one read's cost means anything.
type ClockCost struct {
	Reads int // reads timed
	// ReadNs is the mean cost of one read, back to back.
	ReadNs float64
	// ResolutionNs is the smallest non-zero step seen between two
	// consecutive reads: the clock's granularity, or one read's cost when
	// that is coarser.
	ResolutionNs int64
}

// MeasureClock times reads back-to-back reads of the clock.
func MeasureClock(reads int) ClockCost {
	reads = max(reads, 2)
	res := int64(-1)
	start := now()
	prev := start
	for range reads - 1 {
		t := now()
		if d := t - prev; d > 0 && (res < 0 || d < res) {
			res = d
		}
		prev = t
	}
	return ClockCost{Reads: reads, ReadNs: float64(prev-start) / float64(reads-1), ResolutionNs: max(res, 0)}
}

// ClockSource is the kernel's clocksource ("tsc", "kvm-clock"), or "".
func ClockSource() string {
	b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
