package loadtester

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
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
	if asked := res.RateAsked; asked > 0 && res.RequestsPerSec < asked*(1-MaxRateShortfall) {
		reasons = append(reasons, fmt.Sprintf("achieved %.0f/s, %.1f%% under the %s/s asked", res.RequestsPerSec,
			100*(1-res.RequestsPerSec/asked), fmtRate(asked)))
	}
	if res.Interrupted {
		reasons = append(reasons, "interrupted")
	}
	return len(reasons) == 0, reasons
}

// Step is one row of a rate-steps run.
type Step struct {
	N              int     `json:"step"` // from 1, in the order run
	RateAsked      float64 `json:"rate_asked"`
	RateAchieved   float64 `json:"rate_achieved"` // answered / window
	Latency        Latency `json:"latency_ns"`    // corrected: from each request's intended send time
	ServiceLatency Latency `json:"service_latency_ns"`
	Due            int64   `json:"due"`
	Answered       int64   `json:"answered"`
	Failed         int64   `json:"failed"`
	Unfinished     int64   `json:"unfinished"`
	Dropped        int64   `json:"dropped"`
	Errors         int64   `json:"errors"`
	ClientBound    bool    `json:"client_bound"`
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

// StepRunner runs open-loop steps of one load (Config) at the rates asked,
// judging each against Objectives (none: steps are not judged).
type StepRunner struct {
	Config     Config
	Objectives []Objective
	// Before, when set, is called before each step with its number (from
	// 1), its rate and the config it is about to run, which it may change
	// (Progress, OnInterval for a per-step HDR log); After with the step
	// once it ran (to finish that log and name it in step.HDRLog). An
	// error from After ends the steps.
	Before func(n int, rate float64, cfg *Config)
	After  func(n int, step *Step) error
	// Now is the clock of the steps' wall time (nil: time.Now).
	Now   func() time.Time
	steps []Step
	run   func(context.Context, Config) (*Result, error) // Run; a model server in tests
}

// Steps are the steps run so far.
func (s *StepRunner) Steps() []Step { return s.steps }

// Run runs one step at rate (Run with Config.Rate = rate). An error means
// the step measured nothing (the target down, a bad config): it is not
// added to Steps.
func (s *StepRunner) Run(ctx context.Context, rate float64) (*Step, error) {
	now := s.Now
	if now == nil {
		now = time.Now
	}
	cfg := s.Config
	cfg.Rate = rate
	n := len(s.steps) + 1
	if s.Before != nil {
		s.Before(n, rate, &cfg)
	}
	t0 := now()
	run := s.run
	if run == nil {
		run = Run
	}
	res, err := run(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("step %d (rate %s/s): %w", n, fmtRate(rate), err)
	}
	st := stepOf(n, res, s.Objectives)
	st.WallS = now().Sub(t0).Seconds()
	if s.After != nil {
		if err := s.After(n, &st); err != nil {
			s.steps = append(s.steps, st)
			return &s.steps[len(s.steps)-1], fmt.Errorf("step %d: %w", n, err)
		}
	}
	s.steps = append(s.steps, st)
	return &s.steps[len(s.steps)-1], nil
}

// stepOf sums a step's result up in a row.
func stepOf(n int, res *Result, objs []Objective) Step {
	st := Step{N: n, RateAsked: res.RateAsked, RateAchieved: res.RequestsPerSec, Latency: res.Latency,
		Due: res.Due, Answered: res.Answered, Failed: res.Failed, Unfinished: res.Unfinished,
		Dropped: res.Dropped, Errors: res.Errors, ClientBound: res.ClientBound,
		ClientCPUNsReq: res.ClientCPUNsPerReq, Result: res}
	if res.ServiceLatency != nil {
		st.ServiceLatency = *res.ServiceLatency
	}
	if len(objs) > 0 {
		pass, reasons := Judge(res, objs)
		st.Pass, st.FailReasons = &pass, reasons
	}
	return st
}

// Probe is the runner as a search's probe: a step that ran is judged; an
// interrupted step ends the search with the context's error.
func (s *StepRunner) Probe(ctx context.Context, rate float64) (bool, error) {
	st, err := s.Run(ctx, rate)
	if err != nil {
		return false, err
	}
	if st.Result.Interrupted {
		return false, fmt.Errorf("step %d: %w", st.N, context.Canceled)
	}
	return st.Pass != nil && *st.Pass, nil
}

// RunSteps runs one step per rate, in order, and stops early when ctx is
// cancelled (the step it interrupted is kept, marked interrupted) or a
// step cannot run (the error, with the steps so far).
func RunSteps(ctx context.Context, s *StepRunner, rates []float64) (*StepsResult, error) {
	out := s.result()
	for _, rate := range rates {
		if ctx.Err() != nil {
			break
		}
		st, err := s.Run(ctx, rate)
		if err != nil {
			out.Steps = s.steps
			return out, err
		}
		if st.Result.Interrupted {
			break
		}
	}
	out.Steps = s.steps
	out.Interrupted = ctx.Err() != nil
	return out, nil
}

// FindRateSteps searches for the highest rate meeting s.Objectives
// (FindRate) with one step per probe.
func FindRateSteps(ctx context.Context, s *StepRunner, spec SearchSpec) (*StepsResult, error) {
	if len(s.Objectives) == 0 {
		return nil, fmt.Errorf("--find-rate: needs an objective (--slo p99=1ms)")
	}
	out := s.result()
	search, err := FindRate(ctx, spec, s.Probe)
	out.Steps = s.steps
	out.Search = search
	out.Interrupted = ctx.Err() != nil
	for _, st := range s.steps {
		if search != nil && st.ClientBound && st.RateAsked == search.FirstFail {
			out.Warnings = append(out.Warnings, fmt.Sprintf(
				"step %d at the first failing rate (%s/s) was client-bound: the knee found may be the client's, not the server's (%s)",
				st.N, fmtRate(st.RateAsked), st.Result.ClientBoundReason))
			break
		}
	}
	if out.Interrupted {
		err = nil // what was measured stands; Interrupted says the rest
	}
	return out, err
}

// Document is the steps document so far (the steps run, the load, the
// objectives), for a caller that writes it as steps finish.
func (s *StepRunner) Document() *StepsResult {
	out := s.result()
	out.Steps = append(out.Steps, s.steps...)
	return out
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
		st.N, fmtRate(st.RateAsked), st.RateAchieved, numfmt.Latency(st.Latency.P50), numfmt.Latency(st.Latency.P99),
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

func (s *StepRunner) result() *StepsResult {
	cfg := s.Config.effective()
	rec := cfg.resultRecord()
	delete(rec, "rate")
	return &StepsResult{Kind: StepsKind, Version: StepsVersion, Target: cfg.targetName(),
		Objectives: s.Objectives, Steps: []Step{}, Config: rec}
}

// RateStepsSpec parses --rate-steps: a list ("10000,20000,40000") or a
// start, factor and count ("10000x2x4": 10000, 20000, 40000, 80000).
func RateStepsSpec(s string) ([]float64, error) {
	bad := fmt.Errorf("--rate-steps %q: want RATE,RATE,... (10000,20000,40000) or STARTxFACTORxCOUNT (10000x2x4)", s)
	if parts := strings.Split(s, "x"); len(parts) == 3 {
		start, err1 := strconv.ParseFloat(parts[0], 64)
		factor, err2 := strconv.ParseFloat(parts[1], 64)
		count, err3 := strconv.Atoi(parts[2])
		if err1 != nil || err2 != nil || err3 != nil || start <= 0 || factor <= 0 || count < 1 || count > 100 {
			return nil, bad
		}
		rates := make([]float64, count)
		for i := range rates {
			rates[i] = roundRate(start * math.Pow(factor, float64(i)))
		}
		return rates, nil
	}
	var rates []float64
	for _, p := range strings.Split(s, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || r <= 0 || math.IsInf(r, 0) {
			return nil, bad
		}
		rates = append(rates, r)
	}
	if len(rates) > 100 {
		return nil, fmt.Errorf("--rate-steps %q: %d steps, at most 100", s, len(rates))
	}
	return rates, nil
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
	fmt.Fprintf(w, "\n%5s %9s %9s %9s %9s %9s %9s %9s %10s %8s %8s  %s\n", "step", "asked/s", "achieved", "p50", "p99",
		"p99.9", "svc p50", "svc p99", "unfinished", "dropped", "cpu/req", "verdict")
	for _, st := range sr.Steps {
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
		verdict += st.thresholdsNote()
		fmt.Fprintf(w, "%5d %9s %9.0f %9s %9s %9s %9s %9s %10d %8d %6.0fns  %s\n", st.N, fmtRate(st.RateAsked), st.RateAchieved,
			numfmt.Latency(st.Latency.P50), numfmt.Latency(st.Latency.P99), numfmt.Latency(st.Latency.P999), numfmt.Latency(st.ServiceLatency.P50),
			numfmt.Latency(st.ServiceLatency.P99), st.Unfinished, st.Dropped, st.ClientCPUNsReq, verdict)
	}
	if s := sr.Search; s != nil {
		answer := "no rate met the objective"
		if s.Rate > 0 {
			answer = fmt.Sprintf("%s req/s", fmtRate(s.Rate))
		}
		fmt.Fprintf(w, "\nfind-rate (%s): %s\n  %s\n  stopped: %s, after %d steps in %s\n", objectivesString(sr.Objectives),
			answer, s.Certainty, s.Stopped, len(s.Trials), time.Duration(s.Elapsed*1e9).Round(time.Second))
	}
	for _, warn := range sr.Warnings {
		fmt.Fprintf(w, "  WARNING: %s\n", warn)
	}
}
