package loadtester

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"weaseldb/loadtester/result"
)

// StepRunner runs open-loop steps of one load (Config) at the rates asked,
// judging each against Objectives (none: steps are not judged).
type StepRunner struct {
	Config     Config
	Objectives []result.Objective
	// Before, when set, is called before each step with its number (from
	// 1), its rate and the config it is about to run, which it may change
	// (Progress, OnInterval for a per-step HDR log); After with the step
	// once it ran (to finish that log and name it in step.HDRLog). An
	// error from After ends the steps.
	Before func(n int, rate float64, cfg *Config)
	After  func(n int, step *result.Step) error
	// Now is the clock of the steps' wall time (nil: time.Now).
	Now   func() time.Time
	steps []result.Step
	run   func(context.Context, Config) (*result.Result, error) // Run; a model server in tests
}

// Steps are the steps run so far.
func (s *StepRunner) Steps() []result.Step { return s.steps }

// Run runs one step at rate (Run with Config.Rate = rate). An error means
// the step measured nothing (the target down, a bad config): it is not
// added to Steps.
func (s *StepRunner) Run(ctx context.Context, rate float64) (*result.Step, error) {
	now := s.Now
	if now == nil {
		now = time.Now
	}
	cfg := s.Config
	cfg.Rate = rate
	n := len(s.steps) + 1
	cfg.warnedAtStart = n > 1 // the first step said them; the document keeps them (result)
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
		return nil, fmt.Errorf("step %d (rate %s/s): %w", n, result.FormatRate(rate), err)
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
func stepOf(n int, res *result.Result, objs []result.Objective) result.Step {
	st := result.Step{N: n, RateAsked: res.RateAsked, RateAchieved: res.RequestsPerSec, Latency: res.Latency,
		Due: res.Due, Answered: res.Answered, Failed: res.Failed, Unfinished: res.Unfinished,
		Dropped: res.Dropped, Errors: res.Errors, ClientBound: res.ClientBound, BehindSchedule: res.BehindSchedule,
		ClientCPUNsReq: res.ClientCPUNsPerReq, FailedLatency: res.FailedLatency, Result: res}
	if res.ServiceLatency != nil {
		st.ServiceLatency = *res.ServiceLatency
	}
	if len(objs) > 0 {
		pass, reasons := result.Judge(res, objs)
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
func RunSteps(ctx context.Context, s *StepRunner, rates []float64) (*result.StepsResult, error) {
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
func FindRateSteps(ctx context.Context, s *StepRunner, spec result.SearchSpec) (*result.StepsResult, error) {
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
				st.N, result.FormatRate(st.RateAsked), st.Result.ClientBoundReason))
			break
		}
		if search != nil && st.BehindSchedule && st.RateAsked == search.FirstFail {
			out.Warnings = append(out.Warnings, fmt.Sprintf(
				"step %d at the first failing rate (%s/s) fell behind its schedule: the knee found may be the client's, not the server's (%s)",
				st.N, result.FormatRate(st.RateAsked), st.Result.BehindScheduleReason))
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
func (s *StepRunner) Document() *result.StepsResult {
	out := s.result()
	out.Steps = append(out.Steps, s.steps...)
	return out
}

func (s *StepRunner) result() *result.StepsResult {
	cfg := s.Config.effective()
	rec := cfg.resultRecord()
	delete(rec, "rate")
	out := &result.StepsResult{Kind: result.StepsKind, Version: result.StepsVersion, Target: cfg.targetName(),
		Objectives: s.Objectives, Steps: []result.Step{}, Config: rec}
	if w := cfg.unknownPlaceholderWarning(); w != "" {
		out.Warnings = append(out.Warnings, w)
	}
	return out
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
