package bench

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"weaseldb/artifacts"
	"weaseldb/loadtester/result"
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
// failed load cancels measure's context. measure's client returns
// load_tester's pid once it started (0 before).
func (t *Tools) loadWhile(name string, args []string, cpus []int, timeout time.Duration, measure func(ctx context.Context, client func() int) error) (*result.Result, error) {
	ctx, cancel := context.WithCancel(t.ctx())
	defer cancel()
	var clientPid atomic.Int64
	client := func() int { return int(clientPid.Load()) }
	measured := make(chan error, 1)
	go func() { measured <- measure(ctx, client) }()
	onStart := func(pid int) { clientPid.Store(int64(pid)) }
	res, err := t.load(timeout, name, cpus, onStart, args)
	if err != nil {
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
	return res, nil
}

// sampleDuring returns a measure function for loadWhile that samples process
// pid's CPU over win into *dst.
func sampleDuring(pid int, win cpuWindow, dst **artifacts.CPUSample) func(context.Context, func() int) error {
	return func(ctx context.Context, client func() int) error {
		s, err := SampleCPU(ctx, SampleOptions{Pid: pid, Phase: "loaded", Delay: win.delay, Window: win.length})
		*dst = s
		return err
	}
}

// withThreads returns measure with, beside it, a reading of the server's
// threads (pid) and load_tester's into pl in the middle of win, on a clock
// of its own: a slow /metrics scrape at the window's edge must not push it
// past the load's end. It returns once both are done.
func withThreads(measure func(context.Context, func() int) error, pid int, win cpuWindow, pl *artifacts.Threads) func(context.Context, func() int) error {
	return func(ctx context.Context, client func() int) error {
		read := make(chan struct{})
		go func() {
			defer close(read)
			if sleepCtx(ctx, win.delay+win.length/2) == nil {
				readThreads(pl, pid, client())
			}
		}()
		err := measure(ctx, client)
		<-read
		return err
	}
}

// readThreads reads the server's threads and load_tester's (when it runs).
func readThreads(pl *artifacts.Threads, server, client int) {
	pl.Processes = append(pl.Processes, ReadThreads(artifacts.RoleServer, server))
	if client > 0 {
		pl.Processes = append(pl.Processes, ReadThreads(artifacts.RoleClient, client))
	}
}
