package bench

import (
	"context"
	"fmt"
	"time"

	"weaseldb/artifacts"
	"weaseldb/internal/procstat"
)

// sustainedBase is a setup's sustained run's artifacts, under the run directory.
func sustainedBase(setup string) string { return fmt.Sprintf("%s/%s-sustained", roundsDir, setup) }

// runSustained loads each setup once for SustainS seconds without a break
// after the rounds, sampling the server every window, and writes
// sustained.json after each setup. A failed run is recorded with its
// reason and returned as a problem by sustainedProblems.
func (r *setupsRunner) runSustained() {
	r.sus = &artifacts.Sustained{Version: artifacts.SustainedVersion, SustainS: r.o.SustainS,
		WarmupS: r.o.WarmupS, WindowS: r.o.SustainWindowS}
	for _, s := range r.ss.Setups {
		if r.t.interrupted() {
			return
		}
		r.sus.Runs = append(r.sus.Runs, r.sustain(s))
		if err := r.t.WriteJSON(artifacts.SustainedFile, r.sus); err != nil {
			r.t.Logf("%v", err)
		}
	}
}

// sustain is one setup's sustained run on a fresh server.
func (r *setupsRunner) sustain(s artifacts.Setup) artifacts.SustainedRun {
	base := sustainedBase(s.Name)
	run := artifacts.SustainedRun{Setup: s.Name, Status: artifacts.StatusMeasured}
	fail := func(err error) artifacts.SustainedRun {
		run.Status, run.Reason = artifacts.StatusFailed, err.Error()
		r.t.Logf("%s sustained: %v", s.Name, err)
		return run
	}
	srv, err := r.t.startServer(r.t.Path(s.Config), base+".server.log", r.o.ReadyTimeout)
	if err != nil {
		return fail(err)
	}
	defer srv.Stop(serverStopGrace)
	r.t.Logf("%s sustained: server pid %d ready, %g s of load in %g s windows", s.Name, srv.Pid(), r.o.SustainS, r.o.SustainWindowS)
	socket := r.sockets[s.Name]
	sampler := windowSampler{pid: srv.Pid(), socket: socket, warmup: seconds(r.o.WarmupS),
		window: seconds(r.o.SustainWindowS), windows: int(r.o.SustainS / r.o.SustainWindowS)}
	timeout := seconds(r.o.WarmupS+r.o.SustainS+r.o.DrainS) + 60*time.Second
	_, err = r.t.loadWhile(base+".load", r.loadArgsFor(s, socket, base, r.o.SustainS), s.LoadCPUs, timeout,
		func(ctx context.Context, _ func() int) error { sampler.run(ctx); return nil })
	run.Windows, run.SampleError = sampler.out, sampler.err
	if err != nil {
		return fail(err)
	}
	run.Load = base + ".load.json"
	if err := srv.Stop(serverStopGrace); err != nil {
		run.Reason = "after SIGTERM: " + err.Error()
	}
	return run
}

// windowSampler reads the server every window from the end of the warm-up:
// its /metrics (requests served, GC pauses) and its VmRSS. It runs on the
// measuring goroutine of loadWhile and owns out and err until run returns.
type windowSampler struct {
	pid            int
	socket         string
	warmup, window time.Duration
	windows        int
	out            []artifacts.SustainedWindow
	err            string
}

// run samples until windows are read or ctx ends (the load stopped early);
// a scrape that fails ends the sampling with its reason in err.
func (w *windowSampler) run(ctx context.Context) {
	if sleepCtx(ctx, w.warmup) != nil {
		return
	}
	t0 := time.Now()
	prev, err := scrapeMetrics(ctx, w.socket)
	if err != nil {
		w.err = err.Error()
		return
	}
	prevAt := 0.0
	for k := 1; k <= w.windows; k++ {
		if sleepCtx(ctx, time.Until(t0.Add(time.Duration(k)*w.window))) != nil {
			return
		}
		at := time.Since(t0).Seconds()
		cur, err := scrapeMetrics(ctx, w.socket)
		if err != nil {
			w.err = err.Error()
			return
		}
		win, err := sustainedWindow(prev, cur, prevAt, at)
		if err == nil {
			win.RSSBytes, err = procstat.PidRSS(w.pid)
		}
		if err != nil {
			w.err = err.Error()
			return
		}
		w.out = append(w.out, win)
		prev, prevAt = cur, at
	}
}

// sustainedWindow is the window between two scrapes taken at a and b
// seconds into the measured load.
func sustainedWindow(before, after *serverMetrics, a, b float64) (artifacts.SustainedWindow, error) {
	if !after.gc.ok || !before.gc.ok {
		return artifacts.SustainedWindow{}, fmt.Errorf("GET /metrics: no %s", gcMetric)
	}
	if after.loopsErr != nil {
		return artifacts.SustainedWindow{}, after.loopsErr
	}
	return artifacts.SustainedWindow{StartS: a, EndS: b,
		Requests:    after.requestsServed() - before.requestsServed(),
		GCCount:     after.gc.count - before.gc.count,
		GCPauseS:    after.gc.sumS - before.gc.sumS,
		GCPauseMaxS: after.gc.maxS}, nil
}
