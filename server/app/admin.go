package app

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"weaseldb/server/metrics"
)

// admin is the server.admin_address listener: net/http/pprof and a copy of
// /metrics, on plain net/http and a listener of its own, so that profiling
// a server under load neither shares nor slows its event loops, and the
// main listeners never serve /debug/. New binds it, Start serves it,
// Shutdown closes it; only those three touch it.
type admin struct {
	ln  net.Listener
	srv *http.Server
}

// newAdmin binds addr ("HOST:PORT"); nothing is served until start.
func newAdmin(addr string, m *metrics.Metrics) (*admin, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("server.admin_address: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index) // the named profiles: heap, goroutine, ...
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		body, err := m.Encode()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", metrics.ContentType)
		w.Write(body)
	})
	// A CPU profile or trace runs for its ?seconds= (30 by default), so
	// there is no write timeout; the header timeout keeps an idle client
	// from holding a descriptor.
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 60 * time.Second}
	return &admin{ln: ln, srv: srv}, nil
}

func (a *admin) start() {
	go a.srv.Serve(a.ln) // returns http.ErrServerClosed at stop
}

// stop closes the listener and every admin connection at once: a profile
// in progress is cut short rather than holding up the server's stop. The
// listener is closed by hand as well, for a server that never started.
func (a *admin) stop() {
	a.srv.Close()
	a.ln.Close()
}

// addr is the bound address (the port the kernel chose for ":0").
func (a *admin) addr() string { return a.ln.Addr().String() }
