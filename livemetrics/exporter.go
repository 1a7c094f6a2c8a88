package livemetrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
	"weaseldb/loadtester/result"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Ownership: the Exporter's state is guarded by mu. Observe runs on the
// engine's collector goroutine; Collect (a scrape) and the scrape hook on
// the HTTP server's goroutines. doneScraped is closed once, by the first
// scrape that began after the last run was done.

// Labels name the instance on every series (a Prometheus server that
// scrapes several load_testers sums or tells them apart by them).
type Labels struct {
	Target, Instance string
}

// Exporter serves the run so far at /metrics.
type Exporter struct {
	ln     net.Listener
	srv    *http.Server
	served chan error
	descs  descriptors

	mu          sync.Mutex
	st          state
	done        bool // the last snapshot was a run's end
	doneScraped chan struct{}
	scrapedOnce sync.Once
}

// Listen binds addr (HOST:PORT) at once, so that an address that cannot be
// bound fails before any load, and serves /metrics from then on.
func Listen(addr string, labels Labels) (*Exporter, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %s: %w", addr, err)
	}
	e := &Exporter{ln: ln, served: make(chan error, 1), descs: newDescriptors(labels),
		doneScraped: make(chan struct{})}
	reg := prometheus.NewRegistry()
	reg.MustRegister(e)
	mux := http.NewServeMux()
	mux.Handle("/metrics", e.hook(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
	e.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { e.served <- e.srv.Serve(ln) }()
	return e, nil
}

// Addr is the address bound (the port chosen, for ":0").
func (e *Exporter) Addr() string { return e.ln.Addr().String() }

// Observe takes one snapshot of the run (loadtester.Config.OnSnapshot).
func (e *Exporter) Observe(s result.Snapshot) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.st.observe(s)
	e.done = s.Phase == result.PhaseDone
}

// hook notes a scrape that began after the run was done: from then on
// Prometheus holds the final counts.
func (e *Exporter) hook(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		final := e.done
		e.mu.Unlock()
		h.ServeHTTP(w, r)
		if final {
			e.scrapedOnce.Do(func() { close(e.doneScraped) })
		}
	})
}

// ErrNoRunDone is WaitScraped's answer when no run has finished (one that
// failed before its load, say): there are no final counts to wait for.
var ErrNoRunDone = errors.New("no run finished: no final counts to serve")

// WaitScraped waits until a scrape has read the final counts of the last
// run, or ctx ends (--metrics-linger: a run shorter than the scrape
// interval still leaves its totals in Prometheus). It returns ErrNoRunDone
// at once when no run has finished.
func (e *Exporter) WaitScraped(ctx context.Context) error {
	e.mu.Lock()
	done := e.done
	e.mu.Unlock()
	if !done {
		return ErrNoRunDone
	}
	select {
	case <-e.doneScraped:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops serving: a scrape in progress finishes, within ctx.
func (e *Exporter) Close(ctx context.Context) error {
	err := e.srv.Shutdown(ctx)
	if serr := <-e.served; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
