package result

import (
	"fmt"
	"math"
	"strings"
	"time"

	"weaseldb/internal/numfmt"
)

// LoadShape is what load_tester sends: the flags of one run besides the
// target and the run's length.
type LoadShape struct {
	Method  string   `toml:"method" json:"method"`
	Path    string   `toml:"path" json:"path"`
	Headers []string `toml:"headers" json:"headers,omitempty"`
	// Body may hold load_tester's {{seq}} and {{uuid}} placeholders (a fresh
	// request id per request), as may Headers.
	Body        string `toml:"body" json:"body,omitempty"`
	Concurrency int    `toml:"concurrency" json:"concurrency"`
	// Pipeline is the requests in flight per connection (load_tester
	// --pipeline; 0 or 1: one).
	Pipeline int `toml:"pipeline" json:"pipeline,omitempty"`
	// Rate is an open loop at this many requests/s in all (0: closed loop).
	Rate float64 `toml:"rate" json:"rate,omitempty"`
	// LoadArgs are more load_tester flags, passed as given.
	LoadArgs []string `toml:"load_args" json:"load_args,omitempty"`
}

// SetupLoad is one unmeasured load_tester run before a scenario's runs.
type SetupLoad struct {
	LoadShape
	Duration Duration `toml:"duration" json:"duration"`
}

// Duration is a time.Duration written in TOML as a Go duration string
// ("500ms", "2s"); a bare integer would be nanoseconds, which nobody means.
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(text []byte) error {
	v, err := time.ParseDuration(string(text))
	if err != nil {
		return fmt.Errorf("want a duration such as \"500ms\": %w", err)
	}
	d.Duration = v
	return nil
}

// MarshalText writes the Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Metrics a scenario can compare.
const (
	MetricRPS = "rps"
	MetricP50 = "p50"
	MetricP99 = "p99"
)

// String is the shape in a few words: "POST /v1/commit, 64 conns, 16 deep".
func (l LoadShape) String() string {
	method := l.Method
	if method == "" {
		method = "GET"
	}
	s := fmt.Sprintf("%s %s, %d conns", method, l.Path, l.Concurrency)
	if l.Pipeline > 1 {
		s += fmt.Sprintf(", %d deep", l.Pipeline)
	}
	if l.Rate > 0 {
		s += fmt.Sprintf(", %g req/s", l.Rate)
	}
	if len(l.LoadArgs) > 0 {
		s += ", " + strings.Join(l.LoadArgs, " ")
	}
	return s
}

// FormatSample writes a sample in its metric's unit: the progress lines,
// the reasons and the renderers read a sample the same way.
func FormatSample(metric string, v float64) string {
	switch metric {
	case MetricP50, MetricP99:
		if math.IsNaN(v) || v <= 0 {
			return "-"
		}
		return fmt.Sprintf("%s %.1f µs", metric, 1e6/v)
	default:
		return formatRPS(v)
	}
}

func formatRPS(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return numfmt.Int(int64(math.Round(v)))
}
