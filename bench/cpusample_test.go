package bench

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func TestSampleCPUFake(t *testing.T) {
	// A fake process that burns 0.5 s of CPU per second of wall time.
	start := time.Now()
	read := func(int) (time.Duration, error) { return time.Since(start) / 2, nil }
	var edges []string
	s, err := sampleCPU(context.Background(), SampleOptions{Pid: 7, Phase: "loaded", Delay: 10 * time.Millisecond,
		Window: 120 * time.Millisecond, Interval: 30 * time.Millisecond,
		AtStart: func() { edges = append(edges, "start") }, AtEnd: func() { edges = append(edges, "end") }}, read)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(edges, ",") != "start,end" {
		t.Errorf("window edges ran as %v, want start then end", edges)
	}
	if s.WindowS < 0.12 || s.Pid != 7 || s.Phase != "loaded" || len(s.Samples) < 3 {
		t.Fatalf("sample = %+v", s)
	}
	if s.CoreFraction < 0.45 || s.CoreFraction > 0.55 {
		t.Errorf("core fraction = %v, want about 0.5", s.CoreFraction)
	}
}

func TestSampleCPUProcessGone(t *testing.T) {
	calls := 0
	read := func(int) (time.Duration, error) {
		calls++
		if calls > 1 {
			return 0, os.ErrNotExist
		}
		return 0, nil
	}
	_, err := sampleCPU(context.Background(), SampleOptions{Pid: 9, Window: time.Second, Interval: 10 * time.Millisecond}, read)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "pid 9") {
		t.Fatalf("error = %v, want one wrapping ErrNotExist and naming the pid", err)
	}
}

func TestSampleCPUCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	read := func(int) (time.Duration, error) { return 0, nil }
	if _, err := sampleCPU(ctx, SampleOptions{Pid: 1, Window: time.Hour}, read); !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	if _, err := sampleCPU(context.Background(), SampleOptions{Pid: 1}, read); err == nil {
		t.Fatal("zero window accepted")
	}
}

func TestSampleCPUSelf(t *testing.T) {
	// The real reader on this test process: a small, non-negative figure.
	s, err := SampleCPU(context.Background(), SampleOptions{Pid: os.Getpid(), Window: 100 * time.Millisecond, Interval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if s.CPUS < 0 || s.ResolutionS != 0.01 {
		t.Errorf("sample = %+v", s)
	}
}
