package gate

import (
	"context"
	"time"

	"weaseldb/gate/launch"
	"weaseldb/internal/procstat"
	loadresult "weaseldb/loadtester/result"
)

// lab is the gate's only contact with processes: it starts servers and runs
// the load tester against them. processLab is the real one; the tests also
// drive the rounds, the stopping rule and every failure path through a
// synthetic lab, without processes, in milliseconds.
type lab interface {
	startServer(spec launch.ServerSpec) (server, error)
	// runLoad runs one load. A result with a non-nil *loadrun.ExitError is
	// a run that finished and wrote its result but exited non-zero (errors,
	// unfinished or dropped requests); any other error means no result.
	runLoad(ctx context.Context, spec launch.LoadSpec) (loadresult.Result, error)
	// tracesCPU: the servers' cpu() may be sampled from another goroutine
	// while a load runs, on the real clock (cpuTrace).
	tracesCPU() bool
}

// server is one started server, as the rounds see it.
type server interface {
	target() launch.Target
	alive() bool
	ExitedWithin(d time.Duration) bool // exited already, or does so within d
	diedReason() string                // one line: how it ended
	cpu() (time.Duration, error)       // user+system CPU so far, from the kernel
	stop(grace time.Duration) error    // SIGTERM, then kill after grace
}

// processLab starts real processes through internal/serverproc.
type processLab struct{}

func (processLab) startServer(spec launch.ServerSpec) (server, error) {
	s, err := launch.StartServer(spec)
	if err != nil {
		return nil, err // not a typed nil in an interface
	}
	return processServer{s}, nil
}

func (processLab) tracesCPU() bool { return true }

func (processLab) runLoad(ctx context.Context, spec launch.LoadSpec) (loadresult.Result, error) {
	return launch.RunLoad(ctx, spec)
}

// processServer is a started process as the rounds see it.
type processServer struct{ *launch.Server }

func (s processServer) target() launch.Target          { return s.Target }
func (s processServer) alive() bool                    { return s.Alive() }
func (s processServer) diedReason() string             { return s.DiedReason() }
func (s processServer) cpu() (time.Duration, error)    { return procstat.PidRunTime(s.Pid()) }
func (s processServer) stop(grace time.Duration) error { return s.Stop(grace) }
