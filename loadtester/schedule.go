package loadtester

import (
	"fmt"
	"time"

	"weaseldb/loadtester/arrival"
)

// The open loop's schedule as the config gives it: a constant rate or a
// ramp of stages, arriving evenly or as a Poisson process (arrival does
// the arithmetic; this file reads the config's fields).

// OpenLoop reports whether requests are paced (a rate or stages) rather
// than sent as answers come back.
func (c *Config) OpenLoop() bool { return c.Rate > 0 || c.Stages != "" }

// checkSchedule checks the schedule's fields: each error names its flag.
func (c *Config) checkSchedule() []error {
	var errs []error
	kind, err := arrival.ParseKind(c.Arrival)
	if err != nil {
		errs = append(errs, err)
	}
	if kind == arrival.Poisson {
		if !c.OpenLoop() {
			errs = append(errs, fmt.Errorf("--arrival poisson: arrivals pace an open loop; give --rate or --stages"))
		}
		if c.Burst > 1 {
			errs = append(errs, fmt.Errorf("--burst %d with --arrival poisson: bursts fall due together, Poisson arrivals one by one; give one", c.Burst))
		}
	}
	if c.Stages == "" {
		return errs
	}
	stages, err := arrival.ParseStages(c.Stages)
	if err != nil {
		return append(errs, err)
	}
	if total := StagesLength(stages); c.Warmup+c.Duration != total {
		errs = append(errs, fmt.Errorf("--stages %q last %v in all: --warmup (%v) and the measured time (%v) must add up to it", c.Stages, total, c.Warmup, c.Duration))
	}
	return errs
}

// StagesLength is how long a ramp's load lasts: its stages' total.
func StagesLength(stages []arrival.Stage) time.Duration {
	var total time.Duration
	for _, st := range stages {
		total += st.Duration
	}
	return total
}

// schedule is the profile and arrival process of a checked config.
func (c *Config) schedule() (*arrival.Profile, arrival.Kind) {
	kind, _ := arrival.ParseKind(c.Arrival)
	if c.Stages == "" {
		return arrival.Constant(c.Rate), kind
	}
	stages, _ := arrival.ParseStages(c.Stages)
	prof, _ := arrival.Ramp(c.Rate, stages)
	return prof, kind
}

// askedRate is the rate the schedule asks over the measured window: Rate,
// or the ramp's requests due in the window over its length.
func (c *Config) askedRate() float64 {
	if c.Stages == "" {
		return c.Rate
	}
	prof, _ := c.schedule()
	due := prof.Count(int64(c.Warmup+c.Duration)) - prof.Count(int64(c.Warmup))
	return due / c.Duration.Seconds()
}
