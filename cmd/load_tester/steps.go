package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"weaseldb/loadtester"
)

// --rate-steps and --find-rate: one open-loop run per step (the engine's
// StepRunner), a progress line per step, the table at the end, one JSON
// document (rewritten after every step, so a run stopped half-way keeps
// its finished steps) and one HDR interval log per step.

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
		if o.objectives, err = loadtester.ParseObjectives(sf.slo); err != nil {
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

// stepLogPath is step n's HDR log: FILE.hlog becomes FILE.step3.hlog.
func stepLogPath(path string, n int) string {
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s.step%d%s", strings.TrimSuffix(path, ext), n, ext)
}

// runSteps runs the steps and writes their outputs; the result is nil only
// when no step could start.
func runSteps(ctx context.Context, o options, stdout io.Writer) (*loadtester.StepsResult, error) {
	var hdrFile *os.File
	var hdrLog *loadtester.HDRLog
	var writeErr error
	sr := &loadtester.StepRunner{Config: o.cfg, Objectives: o.objectives}
	// Outputs that cannot be written fail the command before any load, as
	// for a single run: the JSON starts as the empty document (rewritten
	// after every step), the first step's log is created.
	if o.jsonPath != "" {
		if err := writeStepsJSON(o.jsonPath, sr.Document()); err != nil {
			return nil, err
		}
	}
	if o.hdrLog != "" {
		f, err := os.Create(stepLogPath(o.hdrLog, 1))
		if err != nil {
			return nil, fmt.Errorf("--hdr-log: %w", err)
		}
		f.Close()
	}
	sr.Before = func(n int, rate float64, cfg *loadtester.Config) {
		fmt.Fprintf(stdout, "step %d: --rate %g (warm-up %v, measured %v)\n", n, rate, cfg.Warmup, cfg.Duration)
		if !o.quiet {
			cfg.Progress = stdout
		}
		if o.hdrLog == "" {
			return
		}
		f, err := os.Create(stepLogPath(o.hdrLog, n))
		if err != nil {
			writeErr = fmt.Errorf("--hdr-log: %w", err)
			return
		}
		hdrFile, hdrLog = f, loadtester.NewHDRLog(f)
		cfg.OnInterval = hdrLog.Interval
	}
	sr.After = func(n int, st *loadtester.Step) error {
		fmt.Fprintln(stdout, st.Line())
		if hdrLog != nil {
			err := hdrLog.Finish(st.Result)
			if cerr := hdrFile.Close(); err == nil {
				err = cerr
			}
			hdrFile, hdrLog = nil, nil
			if err != nil {
				return fmt.Errorf("--hdr-log: %w", err)
			}
			st.HDRLog = stepLogPath(o.hdrLog, n)
		}
		if writeErr != nil {
			return writeErr
		}
		if o.jsonPath != "" { // after every step: a run stopped later keeps these
			doc := sr.Document()
			doc.Steps = append(doc.Steps, *st)
			return writeStepsJSON(o.jsonPath, doc)
		}
		return nil
	}
	var out *loadtester.StepsResult
	var err error
	if o.findRate {
		out, err = loadtester.FindRateSteps(ctx, sr, o.search)
	} else {
		out, err = loadtester.RunSteps(ctx, sr, o.rateSteps)
	}
	if hdrFile != nil { // a step that never ran
		hdrFile.Close()
	}
	if out == nil {
		return nil, err
	}
	loadtester.PrintSteps(stdout, out)
	if o.jsonPath != "" {
		if werr := writeStepsJSON(o.jsonPath, out); werr != nil && err == nil {
			err = werr
		}
	}
	return out, err
}

// writeStepsJSON writes the steps document to path.
func writeStepsJSON(path string, sr *loadtester.StepsResult) error {
	return writeFile(path, "--json", func(w io.Writer) error { return loadtester.WriteSteps(w, sr) })
}

// stepsStatus is the exit status of steps that ran: a search that found
// no rate meeting the objective fails (1); an interrupted one exits 130.
func stepsStatus(sr *loadtester.StepsResult) int {
	switch {
	case sr.Interrupted:
		return exitInterrupted
	case sr.Search != nil && sr.Search.Rate == 0:
		return exitFailure
	}
	return exitOK
}
