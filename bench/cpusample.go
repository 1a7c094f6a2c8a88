package bench

import (
	"context"
	"fmt"
	"time"

	"weaseldb/artifacts"
	"weaseldb/internal/procstat"
)

// SampleOptions says how to sample a process's CPU.
type SampleOptions struct {
	Pid      int
	Phase    string        // a label: "loaded", "idle"
	Delay    time.Duration // wait this long before the window opens
	Window   time.Duration // length of the measured window
	Interval time.Duration // one series point per interval (default 1 s)
	// AtStart and AtEnd, when set, run as the window opens (before its
	// first reading) and once it has closed (after its last), so other
	// readings can share the window's edges.
	AtStart, AtEnd func()
}

// cpuReader reads a process's cumulative CPU; tests substitute a fake.
type cpuReader func(pid int) (time.Duration, error)

// SampleCPU measures the CPU a process uses during a window, from the
// kernel's accounting (/proc/<pid>/stat, 10 ms resolution, read by
// internal/procstat), and the whole machine's busy CPU over the same window.
// It fails if the process goes away before the window closes. It is the
// tree's one CPU sampler: every server run of the report's is sampled by it.
func SampleCPU(ctx context.Context, opts SampleOptions) (*artifacts.CPUSample, error) {
	return sampleCPU(ctx, opts, procstat.PidCPU)
}

func sampleCPU(ctx context.Context, opts SampleOptions, read cpuReader) (*artifacts.CPUSample, error) {
	if opts.Window <= 0 {
		return nil, fmt.Errorf("cpu sample: window %v must be positive", opts.Window)
	}
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	if err := sleepCtx(ctx, opts.Delay); err != nil {
		return nil, fmt.Errorf("cpu sample pid %d: %w", opts.Pid, err)
	}
	if opts.AtStart != nil {
		opts.AtStart()
	}
	start := time.Now()
	cpu0, err := read(opts.Pid)
	if err != nil {
		return nil, fmt.Errorf("cpu sample pid %d at start: %w", opts.Pid, err)
	}
	busy0, busyErr := procstat.MachineBusy()
	s := &artifacts.CPUSample{Version: 1, Pid: opts.Pid, Phase: opts.Phase, DelayS: opts.Delay.Seconds(),
		ResolutionS: procstat.ClockTick.Seconds(), Samples: []artifacts.CPUSeries{{TS: 0, CPUS: 0}}}
	end := start.Add(opts.Window)
	for {
		next := time.Now().Add(opts.Interval)
		if next.After(end) {
			next = end
		}
		if err := sleepCtx(ctx, time.Until(next)); err != nil {
			return nil, fmt.Errorf("cpu sample pid %d: %w", opts.Pid, err)
		}
		cpu, err := read(opts.Pid)
		if err != nil {
			return nil, fmt.Errorf("cpu sample pid %d after %.1f s: %w", opts.Pid, time.Since(start).Seconds(), err)
		}
		elapsed := time.Since(start)
		s.Samples = append(s.Samples, artifacts.CPUSeries{TS: elapsed.Seconds(), CPUS: (cpu - cpu0).Seconds()})
		if !time.Now().Before(end) {
			s.WindowS = elapsed.Seconds()
			s.CPUS = (cpu - cpu0).Seconds()
			s.CoreFraction = s.CPUS / s.WindowS
			if busy1, err := procstat.MachineBusy(); err == nil && busyErr == nil {
				s.MachineBusyCores = (busy1 - busy0).Seconds() / s.WindowS
				s.MachineCPUs, _ = procstat.MachineCPUs()
			}
			if opts.AtEnd != nil {
				opts.AtEnd()
			}
			return s, nil
		}
	}
}

// sleepCtx waits d, or less when ctx ends (then its error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
