package result

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"weaseldb/internal/jsonfile"
	"weaseldb/internal/numfmt"
)

// Rate steps (--rate-steps) and the search for the knee (--find-rate): one
// open-loop run per step, each with its own connections, warm-up, window,
// drain and full accounting (Run), summed up in a row per step. The rows
// and, for a search, what it found make a StepsResult, its own versioned
// JSON document (the single-run Result and its schema are untouched: each
// step carries its run's Result whole).

// StepsKind and StepsVersion name the rate-steps JSON document.
const (
	StepsKind    = "rate_steps"
	StepsVersion = 1
)

// Objective is one latency objective: a percentile of the corrected
// latency (from each request's intended send time) at or under a limit.
type Objective struct {
	Percentile string `json:"percentile"` // p50, p90, p99, p99.9 or max
	LimitNs    int64  `json:"limit_ns"`
}

// objectivePercentiles are the names an objective may use.
var objectivePercentiles = []string{"p50", "p90", "p99", "p99.9", "max"}

// ParseObjectives reads "p99=1ms" or several, comma-separated
// ("p99=1ms,p99.9=5ms"): a step meets them when every one holds.
func ParseObjectives(s string) ([]Objective, error) {
	var out []Objective
	for _, part := range strings.Split(s, ",") {
		name, limit, ok := strings.Cut(strings.TrimSpace(part), "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "p999" {
			name = "p99.9"
		}
		known := false
		for _, p := range objectivePercentiles {
			known = known || p == name
		}
		if !ok || !known {
			return nil, fmt.Errorf("--slo %q: want PERCENTILE=DURATION (p99=1ms), the percentile one of %s", part, strings.Join(objectivePercentiles, ", "))
		}
		d, err := time.ParseDuration(strings.TrimSpace(limit))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("--slo %q: the limit must be a positive duration like 1ms or 500us", part)
		}
		out = append(out, Objective{Percentile: name, LimitNs: int64(d)})
	}
	return out, nil
}

// String is "p99<=1ms".
func (o Objective) String() string { return o.Percentile + "<=" + numfmt.Latency(o.LimitNs) }

// of is the objective's percentile of l.
func (o Objective) of(l Latency) int64 {
	switch o.Percentile {
	case "p50":
		return l.P50
	case "p90":
		return l.P90
	case "p99":
		return l.P99
	case "p99.9":
		return l.P999
	}
	return l.Max
}

// objectivesString joins objectives for a line of text.
func objectivesString(objs []Objective) string {
	parts := make([]string, len(objs))
	for i, o := range objs {
		parts[i] = o.String()
	}
	return strings.Join(parts, ", ")
}

// MaxRateShortfall is how far under the asked rate a step may achieve and
// still pass: a step that could not send or get answered what it asked
// did not carry that rate.
const MaxRateShortfall = 0.02

// Judge says whether a step's result meets the objectives: every
// percentile at or under its limit, no unfinished, dropped or failed
// request, the achieved rate within MaxRateShortfall of the asked one and
// the run not interrupted. The reasons list each miss.
//
// A client-bound step is judged like any other: a client that fell behind
// its schedule shows it in the corrected latency (measured from the
// intended send times) or in the rate achieved, so it cannot pass where it
// should not. It is flagged in its row instead, and a search whose first
// failing step was client-bound says the knee may be the client's
// (FindRateSteps).
func Judge(res *Result, objs []Objective) (pass bool, reasons []string) {
	if len(objs) > 0 && max(res.Answered, res.Requests) == 0 {
		reasons = append(reasons, "nothing to judge: no request was answered")
		objs = nil // no latency to hold against them
	}
	for _, o := range objs {
		if v := o.of(res.Latency); v > o.LimitNs {
			reasons = append(reasons, fmt.Sprintf("%s %s > %s", o.Percentile, numfmt.Latency(v), numfmt.Latency(o.LimitNs)))
		}
	}
	if res.Unfinished > 0 {
		reasons = append(reasons, fmt.Sprintf("%d unfinished", res.Unfinished))
	}
	if res.Dropped > 0 {
		reasons = append(reasons, fmt.Sprintf("%d dropped", res.Dropped))
	}
	if res.Failed > 0 {
		reasons = append(reasons, fmt.Sprintf("%d failed", res.Failed))
	}
	if asked := res.RateAsked; asked > 0 && res.RequestsPerSec < asked-allowedShortfall(res) {
		reasons = append(reasons, fmt.Sprintf("achieved %.0f/s, %.1f%% under the %s/s asked", res.RequestsPerSec,
			100*(1-res.RequestsPerSec/asked), FormatRate(asked)))
	}
	if res.Interrupted {
		reasons = append(reasons, "interrupted")
	}
	return len(reasons) == 0, reasons
}

// allowedShortfall is how far under the asked rate, in req/s, a step may
// achieve and pass: MaxRateShortfall of it, or one request over the
// window if that is more, since a window holds a whole number of due
// requests (18 fall due in a second at 18.75/s: rounding, not a shortfall).
func allowedShortfall(res *Result) float64 {
	allowed := res.RateAsked * MaxRateShortfall
	if res.DurationS > 0 {
		allowed = max(allowed, 1/res.DurationS)
	}
	return allowed
}

// Step is one row of a rate-steps run.
type Step struct {
	N              int     `json:"step"` // from 1, in the order run
	RateAsked      float64 `json:"rate_asked"`
	RateAchieved   float64 `json:"rate_achieved"` // answered / window
	Latency        Latency `json:"latency_ns"`    // corrected: from each request's intended send time
	ServiceLatency Latency `json:"service_latency_ns"`
	// FailedLatency: the step's failed requests that got a response (a
	// check refused them), as Result's; absent when none.
	FailedLatency *Latency `json:"failed_latency_ns,omitempty"`
	Due           int64    `json:"due"`
	Answered      int64    `json:"answered"`
	Failed        int64    `json:"failed"`
	Unfinished    int64    `json:"unfinished"`
	Dropped       int64    `json:"dropped"`
	Errors        int64    `json:"errors"`
	ClientBound   bool     `json:"client_bound"`
	// BehindSchedule: the step's client sent late while a connection was
	// free (Result.BehindSchedule), apart from a busy client.
	BehindSchedule bool    `json:"behind_schedule,omitempty"`
	ClientCPUNsReq float64 `json:"client_cpu_ns_per_request"`
	// Pass is whether the step met the objectives (absent without any);
	// FailReasons says why not.
	Pass        *bool    `json:"pass,omitempty"`
	FailReasons []string `json:"fail_reasons,omitempty"`
	HDRLog      string   `json:"hdr_log,omitempty"` // the step's interval log, when written
	WallS       float64  `json:"wall_s"`            // the whole step: connecting, warm-up, window, drain
	Result      *Result  `json:"result"`            // the step's run, as a single run's JSON has it
}

// StepsResult is a rate-steps run or a search: a row per step and, for a
// search, its answer.
type StepsResult struct {
	Kind        string      `json:"kind"` // StepsKind
	Version     int         `json:"version"`
	Target      string      `json:"target"`
	Objectives  []Objective `json:"objectives,omitempty"`
	Steps       []Step      `json:"steps"`
	Search      *Search     `json:"search,omitempty"`
	Interrupted bool        `json:"interrupted"`
	Warnings    []string    `json:"warnings,omitempty"`
	Config      any         `json:"config"` // the load every step ran (its rate aside)
}

// Line is a step's progress line.
func (st *Step) Line() string {
	verdict := ""
	if st.Pass != nil {
		verdict = "  pass"
		if !*st.Pass {
			verdict = "  FAIL: " + strings.Join(st.FailReasons, "; ")
		}
	}
	return fmt.Sprintf("step %d: asked %s/s, achieved %.0f/s, p50 %s, p99 %s, p99.9 %s, unfinished %d, dropped %d%s%s",
		st.N, FormatRate(st.RateAsked), st.RateAchieved, numfmt.Latency(st.Latency.P50), numfmt.Latency(st.Latency.P99),
		numfmt.Latency(st.Latency.P999), st.Unfinished, st.Dropped, verdict, st.thresholdsNote())
}

// thresholdsNote is "" without thresholds, else what they say of the step.
func (st *Step) thresholdsNote() string {
	if st.Result == nil || len(st.Result.Thresholds) == 0 {
		return ""
	}
	if crossed := st.Result.CrossedThresholds(); crossed != "" {
		return "  thresholds crossed: " + crossed
	}
	return "  thresholds ok"
}

// ThresholdsPass reports whether every step met its thresholds.
func (sr *StepsResult) ThresholdsPass() bool {
	for _, st := range sr.Steps {
		if st.Result != nil && !st.Result.ThresholdsPass() {
			return false
		}
	}
	return true
}

// WriteSteps writes a StepsResult as JSON, indented, with a final newline.
func WriteSteps(w io.Writer, sr *StepsResult) error {
	if err := jsonfile.Write(w, sr); err != nil {
		return fmt.Errorf("steps: %w", err)
	}
	return nil
}

// ReadSteps reads a rate-steps document back, each step's Result with its
// histograms decoded.
func ReadSteps(path string) (*StepsResult, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read steps: %w", err)
	}
	var head struct {
		Kind    string `json:"kind"`
		Version int    `json:"version"`
		Steps   []struct {
			Result json.RawMessage `json:"result"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("parse steps %s: %w", path, err)
	}
	if head.Kind != StepsKind || head.Version != StepsVersion {
		return nil, fmt.Errorf("%s: kind %q version %d, want %q version %d (a single run's result is read by ReadResult)",
			path, head.Kind, head.Version, StepsKind, StepsVersion)
	}
	var sr StepsResult
	if err := json.Unmarshal(data, &sr); err != nil {
		return nil, fmt.Errorf("parse steps %s: %w", path, err)
	}
	for i, raw := range head.Steps {
		if len(raw.Result) == 0 || string(raw.Result) == "null" {
			continue
		}
		res, err := parseResult(raw.Result, fmt.Sprintf("%s step %d", path, i+1))
		if err != nil {
			return nil, err
		}
		sr.Steps[i].Result = res
	}
	return &sr, nil
}

// anyFailed: some step had failed requests (the table then shows how many
// and their latency; without, the columns would be zeros and dashes).
func (sr *StepsResult) anyFailed() bool {
	for _, st := range sr.Steps {
		if st.Failed > 0 {
			return true
		}
	}
	return false
}

// verdict is the step's last column: its objectives' verdict and what
// may make it the client's.
func (st *Step) verdict() string {
	verdict := ""
	if st.Pass != nil {
		verdict = "pass"
		if !*st.Pass {
			verdict = "FAIL: " + strings.Join(st.FailReasons, "; ")
		}
	}
	if st.ClientBound {
		verdict += " (client-bound)"
	}
	if st.BehindSchedule {
		verdict += " (behind schedule)"
	}
	return verdict + st.thresholdsNote()
}

// PrintSteps writes the steps' table and, for a search, its answer.
func PrintSteps(w io.Writer, sr *StepsResult) {
	fmt.Fprintf(w, "\n%s: %d steps", sr.Target, len(sr.Steps))
	if len(sr.Objectives) > 0 {
		fmt.Fprintf(w, ", objective %s (corrected latency; and no unfinished, dropped or failed request, the rate achieved within %.0f%%)",
			objectivesString(sr.Objectives), 100*MaxRateShortfall)
	}
	if sr.Interrupted {
		fmt.Fprint(w, " (interrupted)")
	}
	failed := sr.anyFailed()
	fmt.Fprintf(w, "\n%5s %9s %9s %9s %9s %9s %9s %9s %10s %8s", "step", "asked/s", "achieved", "p50", "p99",
		"p99.9", "svc p50", "svc p99", "unfinished", "dropped")
	if failed {
		fmt.Fprintf(w, " %8s %9s", "failed", "fail p99")
	}
	fmt.Fprintf(w, " %8s  %s\n", "cpu/req", "verdict")
	for _, st := range sr.Steps {
		fmt.Fprintf(w, "%5d %9s %9.0f %9s %9s %9s %9s %9s %10d %8d", st.N, FormatRate(st.RateAsked), st.RateAchieved,
			numfmt.Latency(st.Latency.P50), numfmt.Latency(st.Latency.P99), numfmt.Latency(st.Latency.P999), numfmt.Latency(st.ServiceLatency.P50),
			numfmt.Latency(st.ServiceLatency.P99), st.Unfinished, st.Dropped)
		if failed {
			failP99 := "-" // no failed request got a response
			if st.FailedLatency != nil {
				failP99 = numfmt.Latency(st.FailedLatency.P99)
			}
			fmt.Fprintf(w, " %8d %9s", st.Failed, failP99)
		}
		fmt.Fprintf(w, " %6.0fns  %s\n", st.ClientCPUNsReq, st.verdict())
	}
	if s := sr.Search; s != nil {
		answer := "no rate met the objective"
		if s.Rate > 0 {
			answer = fmt.Sprintf("%s req/s", FormatRate(s.Rate))
		}
		fmt.Fprintf(w, "\nfind-rate (%s): %s\n  %s\n  stopped: %s, after %d steps in %s\n", objectivesString(sr.Objectives),
			answer, s.Certainty, s.Stopped, len(s.Trials), time.Duration(s.Elapsed*1e9).Round(time.Second))
	}
	for _, warn := range sr.Warnings {
		fmt.Fprintf(w, "  WARNING: %s\n", warn)
	}
}
