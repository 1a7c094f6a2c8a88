package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"weaseldb/livemetrics"
)

// startMetrics binds --metrics-addr before any load (nil without the
// flag), feeds it the run's snapshots, and says where it serves (the port
// chosen, for :0) on out unless --quiet.
func startMetrics(o *options, out io.Writer) (*livemetrics.Exporter, error) {
	if o.metricsAddr == "" {
		return nil, nil
	}
	e, err := livemetrics.Listen(o.metricsAddr, livemetrics.Labels{Target: o.cfg.TargetName(), Instance: o.cfg.InstanceName()})
	if err != nil {
		return nil, err
	}
	o.cfg.OnSnapshot = e.Observe
	if !o.quiet {
		fmt.Fprintf(out, "metrics at http://%s/metrics\n", e.Addr())
	}
	return e, nil
}

// stopMetrics closes the exporter once the result is written: at once, or
// after a scrape has read the final counts (--metrics-linger at most; not
// at all when no run finished, e.g. the target was down: its error is
// already said).
func stopMetrics(e *livemetrics.Exporter, linger time.Duration, stderr io.Writer) {
	if e == nil {
		return
	}
	if linger > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), linger)
		if err := e.WaitScraped(ctx); err != nil && !errors.Is(err, livemetrics.ErrNoRunDone) {
			fmt.Fprintf(stderr, "load_tester: --metrics-addr %s: no scrape read the final counts within --metrics-linger %v\n", e.Addr(), linger)
		}
		cancel()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = e.Close(ctx)
}
