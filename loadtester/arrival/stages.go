package arrival

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Stage is one stretch of a ramp: over Duration the rate moves linearly
// from the previous stage's target to Target (requests per second).
type Stage struct {
	Duration time.Duration `json:"duration_s"`
	Target   float64       `json:"target"`
}

// maxStages bounds a stage list (a typo, not a schedule, has more).
const maxStages = 10000

// ParseStages reads k6's ramping syntax, "30s:1000,1m:20000,10s:0": each
// stage a duration (Go's syntax) and a target, comma separated.
func ParseStages(s string) ([]Stage, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("--stages %q: want DURATION:TARGET,... (e.g. 30s:1000,1m:20000)", s)
	}
	parts := strings.Split(s, ",")
	if len(parts) > maxStages {
		return nil, fmt.Errorf("--stages: %d stages, want at most %d", len(parts), maxStages)
	}
	var out []Stage
	var total time.Duration
	for i, part := range parts {
		st, err := parseStage(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("--stages %q: stage %d: %w", s, i+1, err)
		}
		if total += st.Duration; total > 1000*time.Hour {
			return nil, fmt.Errorf("--stages %q: longer than 1000h in all", s)
		}
		out = append(out, st)
	}
	return out, nil
}

func parseStage(part string) (Stage, error) {
	d, t, ok := strings.Cut(part, ":")
	if !ok {
		return Stage{}, fmt.Errorf("%q: want DURATION:TARGET", part)
	}
	dur, err := parseSeconds(strings.TrimSpace(d))
	if err != nil || dur <= 0 {
		return Stage{}, fmt.Errorf("%q: duration %q: want a positive duration: seconds (30, 0.5) or 30s, 1m", part, d)
	}
	target, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || target < 0 || math.IsInf(target, 0) || math.IsNaN(target) || target > 1e9 {
		return Stage{}, fmt.Errorf("%q: target %q: want requests per second, 0..1e9", part, t)
	}
	return Stage{Duration: dur, Target: target}, nil
}

// parseSeconds reads seconds (10, 0.5), as every other time on the command
// line takes them, or a Go duration (500ms).
func parseSeconds(s string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || math.IsInf(f, 0) || f > 1e7 {
			return 0, fmt.Errorf("%q: out of range", s)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	return time.ParseDuration(s)
}

// FormatStages writes stages back in the syntax ParseStages reads.
func FormatStages(stages []Stage) string {
	var b strings.Builder
	for i, st := range stages {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%v:%s", st.Duration, strconv.FormatFloat(st.Target, 'f', -1, 64))
	}
	return b.String()
}
