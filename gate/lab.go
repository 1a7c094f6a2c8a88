package gate

import (
	"context"
	"time"

	"weaseldb/internal/procstat"
	loadresult "weaseldb/loadtester/result"
)

// lab is the gate's only contact with processes: it starts servers and runs
// the load tester against them. processLab is the real one; the tests also
// drive the rounds, the stopping rule and every failure path through a
// synthetic lab, without processes, in milliseconds.
type lab interface {
	startServer(spec ServerSpec) (server, error)
	// runLoad runs one load. A result with a non-nil *loadrun.ExitError is
	// a run that finished and wrote its result but exited non-zero (errors,
	// unfinished or dropped requests); any other error means no result.
	runLoad(ctx context.Context, spec LoadSpec) (loadresult.Result, error)
	// tracesCPU: the servers' cpu() may be sampled from another goroutine
	// while a load runs, on the real clock (cpuTrace).
	tracesCPU() bool
}

// server is one started server, as the rounds see it.
type server interface {
	target() Target
	alive() bool
	exitedWithin(d time.Duration) bool // exited already, or does so within d
	diedReason() string                // one line: how it ended
	cpu() (time.Duration, error)       // user+system CPU so far, from the kernel
	stop(grace time.Duration) error    // SIGTERM, then kill after grace
}

// processLab starts real processes through internal/serverproc.
type processLab struct{}

func (processLab) startServer(spec ServerSpec) (server, error) {
	s, err := StartServer(spec)
	if err != nil {
		return nil, err // not a typed nil in an interface
	}
	return s, nil
}

func (processLab) tracesCPU() bool { return true }

func (processLab) runLoad(ctx context.Context, spec LoadSpec) (loadresult.Result, error) {
	return RunLoad(ctx, spec)
}

// The process Server as the rounds see it.
func (s *Server) target() Target                 { return s.Target }
func (s *Server) alive() bool                    { return s.Alive() }
func (s *Server) diedReason() string             { return s.DiedReason() }
func (s *Server) cpu() (time.Duration, error)    { return procstat.PidRunTime(s.Pid()) }
func (s *Server) stop(grace time.Duration) error { return s.Stop(grace) }
