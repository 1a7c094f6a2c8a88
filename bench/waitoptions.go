package bench

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"weaseldb/artifacts"
	"weaseldb/plan"
)

// WaitOptions are the settings of `report wait-strategies`; its flags fill
// them and errors name those flags.
type WaitOptions struct {
	Common
	DurationS   float64
	Concurrency int
	// RequestsPerConn makes load_tester close each connection after that
	// many requests and open another (0: keep-alive for the whole run), so
	// connections keep arriving while the loops are busy.
	RequestsPerConn                 int
	LoadThreads, IOThreads, Release int
	OkIterations                    int
	Strategies, Cores               string // comma-separated lists
	// RateFractions ("0.25,0.5,0.75", or "none"): each measured server run
	// is loaded open-loop at these fractions of its closed-loop req/s, each
	// step RateStepS long after a 0.5 s warm-up.
	RateFractions string
	RateStepS     float64
	// Latency runs bench_pipeline's latency family too; LatencySamples is
	// its --latency-samples (0: its default).
	Latency        bool
	LatencySamples int
}

// Validate checks the options (a simulated set implies Plan).
func (o *WaitOptions) Validate() error {
	if o.AllowedCPUs != "" {
		o.Plan = true
	}
	switch {
	case !o.Plan && o.RunDir == "":
		return errors.New("wait-strategies: --run DIR is required (or --plan)")
	case o.DurationS < 2:
		return fmt.Errorf("wait-strategies: --duration must be at least 2 s, got %g", o.DurationS)
	case o.WarmupS < 0 || o.IdleS < 1:
		return fmt.Errorf("wait-strategies: --warmup must be ≥ 0 and --idle ≥ 1, got %g and %g", o.WarmupS, o.IdleS)
	case o.DrainS < 0 || o.RequestTimeoutS < 0 || o.RequestsPerConn < 0:
		return fmt.Errorf("wait-strategies: --drain, --request-timeout and --requests-per-conn must be ≥ 0, got %g, %g and %d", o.DrainS, o.RequestTimeoutS, o.RequestsPerConn)
	case o.Concurrency < 1 || o.LoadThreads < 1 || o.IOThreads < 1 || o.Release < 1 || o.IdleConns < 0 || o.OkIterations < 0:
		return errors.New("wait-strategies: --concurrency, --load-threads, --io-threads and --release-threads must be ≥ 1; --idle-conns and --ok-iterations ≥ 0")
	case o.LatencySamples < 0:
		return errors.New("wait-strategies: --latency-samples must be ≥ 0")
	}
	fractions, err := parseRateFractions(o.RateFractions)
	if err != nil {
		return err
	}
	if len(fractions) > 0 && o.RateStepS < 1 {
		return fmt.Errorf("wait-strategies: --rate-step-duration must be at least 1 s, got %g", o.RateStepS)
	}
	return nil
}

// params turns the options into the planner's input.
func (o *WaitOptions) params() (plan.WaitParams, error) {
	p := plan.WaitParams{PipelineStages: 2, IOThreads: o.IOThreads, ReleaseThreads: o.Release, LoadThreads: o.LoadThreads}
	for _, s := range strings.Split(o.Strategies, ",") {
		s = strings.TrimSpace(s)
		if !slices.Contains(artifacts.WaitStrategyNames, s) {
			return p, fmt.Errorf("wait-strategies: unknown strategy %q (allowed: %s)", s, strings.Join(artifacts.WaitStrategyNames, ", "))
		}
		p.Strategies = append(p.Strategies, s)
	}
	for _, c := range strings.Split(o.Cores, ",") {
		switch strings.TrimSpace(c) {
		case artifacts.CoresShared:
		case artifacts.CoresDedicated:
			p.Dedicated = true
		default:
			return p, fmt.Errorf("wait-strategies: --cores takes shared and/or dedicated, got %q", c)
		}
	}
	return p, nil
}
