package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"weaseldb/loadtester"
	"weaseldb/reports"
)

// cpuWindow is a span of a load run over which the server is measured.
type cpuWindow struct{ delay, length time.Duration }

// measuredWindow skips the warm-up and half a second at each end of the
// measured load: connections opening and closing are not the steady state.
func measuredWindow(warmupS, durationS float64) cpuWindow {
	return cpuWindow{delay: seconds(warmupS + 0.5), length: seconds(durationS - 1)}
}

// loadWhile runs load_tester with args (pinned to cpus when any are given)
// writing RUN/<name>.json, while measure runs on a goroutine of its own. That
// goroutine writes only what measure's closure owns, and loadWhile returns
// only after it has finished, so the caller reads those results safely. A
// failed load cancels measure's context.
func (t *Tools) loadWhile(name string, args []string, cpus []int, timeout time.Duration, measure func(context.Context) error) (*loadtester.Result, error) {
	ctx, cancel := context.WithCancel(t.ctx())
	defer cancel()
	measured := make(chan error, 1)
	go func() { measured <- measure(ctx) }()
	args = append(args, "--json", t.Path(name+".json"))
	if err := t.Command(timeout, name, cpus, "load_tester", args...); err != nil {
		cancel()
		<-measured
		return nil, err
	}
	if err := <-measured; err != nil {
		if errors.Is(err, context.Canceled) {
			err = errors.New("cancelled")
		}
		return nil, fmt.Errorf("measuring the server under load: %w", err)
	}
	return loadtester.ReadResult(t.Path(name + ".json"))
}

// sampleDuring returns a measure function for loadWhile that samples process
// pid's CPU over win into *dst.
func sampleDuring(pid int, win cpuWindow, dst **reports.CPUSample) func(context.Context) error {
	return func(ctx context.Context) error {
		s, err := reports.SampleCPU(ctx, reports.SampleOptions{Pid: pid, Phase: "loaded", Delay: win.delay, Window: win.length})
		*dst = s
		return err
	}
}
