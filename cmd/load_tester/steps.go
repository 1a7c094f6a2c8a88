package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"weaseldb/internal/progress"
	"weaseldb/loadtester"
	"weaseldb/loadtester/result"
)

// --rate-steps and --find-rate: their flags, and the run of the steps
// (loadtester.StepRunner; RunStepsWithOutputs writes the JSON document and
// one HDR interval log per step).

// parseSteps reads the steps' flags into o and refuses what cannot go
// together.
func (o *options) parseSteps(sf stringFlags, set map[string]bool) error {
	var err error
	if sf.rateSteps != "" {
		if o.rateSteps, err = loadtester.RateStepsSpec(sf.rateSteps); err != nil {
			return err
		}
	}
	if sf.slo != "" {
		if o.objectives, err = result.ParseObjectives(sf.slo); err != nil {
			return err
		}
	}
	steps := o.rateSteps != nil || o.findRate
	switch {
	case o.rateSteps != nil && o.findRate:
		return errors.New("--rate-steps and --find-rate: give one (the search picks its own rates)")
	case steps && set["rate"]:
		return errors.New("--rate with --rate-steps or --find-rate: the steps set the rate")
	case steps && o.vegeta != "":
		return errors.New("--vegeta: not with --rate-steps or --find-rate (each step's histograms are in the JSON and its HDR log)")
	case steps && set["start-at"]:
		return errors.New("--start-at: not with --rate-steps or --find-rate (each step starts when the one before has ended)")
	case o.findRate && o.objectives == nil:
		return errors.New("--find-rate: needs --slo (p99=1ms)")
	case o.objectives != nil && !steps:
		return errors.New("--slo: only with --rate-steps or --find-rate")
	}
	for _, name := range []string{"find-rate-start", "find-rate-min", "find-rate-max", "find-rate-factor",
		"find-rate-precision", "find-rate-repeats", "find-rate-steps", "find-rate-time"} {
		if set[name] && !o.findRate {
			return fmt.Errorf("--%s: only with --find-rate", name)
		}
	}
	if o.findRate {
		return o.search.Validate()
	}
	return nil
}

// runSteps runs the steps (loadtester.RunStepsWithOutputs writes their
// outputs); the result is nil only when no step could start.
func runSteps(ctx context.Context, o options, stdout io.Writer) (*result.StepsResult, error) {
	sr := &loadtester.StepRunner{Config: o.cfg, Objectives: o.objectives}
	run := func(ctx context.Context, sr *loadtester.StepRunner) (*result.StepsResult, error) {
		if o.findRate {
			return loadtester.FindRateSteps(ctx, sr, o.search)
		}
		return loadtester.RunSteps(ctx, sr, o.rateSteps)
	}
	// On a terminal the interval lines become one line rewritten in place,
	// with about how long the steps have left; the table's rows stay.
	line := progress.For(stdout)
	line.Expect(stepsTime(o))
	var lines io.Writer
	if !o.quiet {
		lines = line
	}
	defer line.Done()
	return loadtester.RunStepsWithOutputs(ctx, sr, run, o.outputs(), line.Permanent(), lines)
}

// stepsTime is how long the steps should take: each step's warm-up,
// measured window and drain; for a search, an upper bound (its step or
// time limit: it may stop sooner).
func stepsTime(o options) (total time.Duration, atMost bool) {
	step := o.cfg.Warmup + o.cfg.Duration + o.cfg.Drain
	if !o.findRate {
		return time.Duration(len(o.rateSteps)) * step, false
	}
	total = time.Duration(o.search.MaxSteps) * step
	if t := o.search.MaxTime; t > 0 && t < total {
		total = t
	}
	return total, true
}

// stepsStatus is the exit status of steps that ran: a search that found
// no rate meeting the objective fails (1); an interrupted one exits 130.
func stepsStatus(sr *result.StepsResult) int {
	switch {
	case sr.Interrupted:
		return exitInterrupted
	case sr.Search != nil && sr.Search.Rate == 0:
		return exitFailure
	case !sr.ThresholdsPass():
		return exitThreshold
	}
	return exitOK
}
