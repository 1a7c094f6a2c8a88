package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"weaseldb/loadtester"
	"weaseldb/reports"
)

// cpuWindow is a span of a load run over which the server's CPU is sampled.
type cpuWindow struct{ delay, length time.Duration }

// measuredWindow skips the warm-up and half a second at each end of the
// measured load: connections opening and closing are not the steady state.
func measuredWindow(warmupS, durationS float64) cpuWindow {
	return cpuWindow{delay: seconds(warmupS + 0.5), length: seconds(durationS - 1)}
}

type sampleResult struct {
	s   *reports.CPUSample
	err error
}

// loadWhileSampling runs load_tester with args (pinned to cpus when any are
// given) writing RUN/<name>.json, while reports.SampleCPU measures process
// pid over win. The sampler runs on a goroutine of its own that owns nothing
// but its result channel; a failed load cancels it.
func (t *Tools) loadWhileSampling(name string, args []string, cpus []int, pid int, win cpuWindow, timeout time.Duration) (*loadtester.Result, *reports.CPUSample, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sampled := make(chan sampleResult, 1)
	go func() {
		s, err := reports.SampleCPU(ctx, reports.SampleOptions{Pid: pid, Phase: "loaded", Delay: win.delay, Window: win.length})
		sampled <- sampleResult{s, err}
	}()
	args = append(args, "--json", t.Path(name+".json"))
	if err := t.Command(timeout, name, cpus, "load_tester", args...); err != nil {
		return nil, nil, err
	}
	cpu := <-sampled
	if cpu.err != nil {
		if errors.Is(cpu.err, context.Canceled) {
			cpu.err = errors.New("cancelled")
		}
		return nil, nil, fmt.Errorf("server CPU under load: %w", cpu.err)
	}
	res, err := loadtester.ReadResult(t.Path(name + ".json"))
	if err != nil {
		return nil, nil, err
	}
	return res, cpu.s, nil
}
