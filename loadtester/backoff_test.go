package loadtester

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// The schedule: 5 ms doubling to a cap of 1 s, each wait drawn in its
// upper half.
func TestBackoffSchedule(t *testing.T) {
	tests := []struct {
		failures int
		want     time.Duration
	}{
		{0, 0}, {-1, 0}, {1, 5 * time.Millisecond}, {2, 10 * time.Millisecond}, {3, 20 * time.Millisecond},
		{8, 640 * time.Millisecond}, {9, time.Second}, {10, time.Second}, {1000, time.Second},
	}
	for _, tt := range tests {
		d := backoff(tt.failures)
		if d != tt.want {
			t.Errorf("backoff(%d) = %v, want %v", tt.failures, d, tt.want)
		}
		for range 100 {
			if j := jittered(d); j < d/2 || j > d {
				t.Fatalf("jittered(%v) = %v, want %v..%v", d, j, d/2, d)
			}
		}
	}
}

// A replacement's failure count: reset by a response, grown by a
// connection that never got one, however it ended.
func TestRetryFailures(t *testing.T) {
	tests := []struct {
		name               string
		failures, received int
		failed             bool
		want               int
	}{
		{"answered, closed normally", 3, 1, false, 0},
		{"answered, then failed", 3, 5, true, 1},
		{"never answered, failed", 3, 0, true, 4},
		{"never answered, closed by the peer", 3, 0, false, 4},
		{"first attempt failed", 0, 0, true, 1},
	}
	for _, tt := range tests {
		c := conn{failures: tt.failures, received: tt.received}
		if got := c.retryFailures(tt.failed); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

// maxAttempts is the most connection attempts one slot can make in
// elapsed under the back-off schedule: the first at once, each later one
// after at least half its step (jittered's lower bound).
func maxAttempts(elapsed time.Duration) int {
	attempts := 1
	for waited := time.Duration(0); ; attempts++ {
		waited += backoff(attempts) / 2
		if waited > elapsed {
			return attempts
		}
	}
}

// countingServer accepts connections, counts them, and hands each to
// serve with its number (from 1: the preflight's).
type countingServer struct {
	ln       net.Listener
	accepted atomic.Int64
}

func startCountingServer(t *testing.T, serve func(n int64, c net.Conn)) *countingServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &countingServer{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(s.accepted.Add(1), c)
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return s
}

// No reconnect storm: against a server that fails every connection of the
// run (closes it right after accept, with and without TLS; or, under TLS
// 1.3, rejects the client's missing certificate, which the client learns
// only on its first read), each slot's attempts follow the back-off, and
// the JSON counts the back-offs. The bound is by count over the run's own
// length, not by the timing of any sleep. The preflight's connection (the
// first) succeeds: these servers turn bad during the run.
func TestNoReconnectStorm(t *testing.T) {
	cert := newTestCert(t, "127.0.0.1")
	pool := x509.NewCertPool()
	pool.AddCert(cert.cert.Leaf)
	open := &tls.Config{Certificates: []tls.Certificate{cert.cert}, NextProtos: []string{"http/1.1"}}
	mutual := open.Clone()
	mutual.ClientAuth, mutual.ClientCAs = tls.RequireAndVerifyClientCert, pool
	handshake := func(c net.Conn, conf *tls.Config) {
		tc := tls.Server(c, conf)
		tc.Handshake()
		tc.Close()
	}
	tests := []struct {
		name      string
		tls       bool
		serve     func(n int64, c net.Conn)
		wantError string
	}{
		{"tcp close after accept", false, func(n int64, c net.Conn) { c.Close() }, "eof"},
		{"tls close after accept", true, func(n int64, c net.Conn) {
			if n == 1 {
				handshake(c, open)
				return
			}
			c.Close()
		}, "tls_error"},
		{"tls 1.3 certificate required on the first read", true, func(n int64, c net.Conn) {
			if n == 1 {
				handshake(c, open)
				return
			}
			handshake(c, mutual)
		}, "tls_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startCountingServer(t, tt.serve)
			cfg := DefaultConfig()
			cfg.Port = s.ln.Addr().(*net.TCPAddr).Port
			if tt.tls {
				cfg.TLS = &TLSOptions{CAFile: cert.certFile}
			}
			cfg.Concurrency, cfg.Duration, cfg.StatsInterval = 2, 1500*time.Millisecond, 500*time.Millisecond
			start := time.Now()
			_, res, out := runJudged(t, cfg, "")
			elapsed := time.Since(start)
			attempts := s.accepted.Load() - 1 // less the preflight's
			bound := int64(cfg.Concurrency * maxAttempts(elapsed))
			if attempts > bound || attempts < int64(cfg.Concurrency) {
				t.Errorf("%d connection attempts from %d slots in %v, want %d to %d (the back-off's most)",
					attempts, cfg.Concurrency, elapsed, cfg.Concurrency, bound)
			}
			if res.ReconnectBackoffs == 0 || res.ReconnectBackoffMaxS > backoffCap.Seconds() ||
				res.ReconnectBackoffS < res.ReconnectBackoffMaxS || res.ErrorsByKind[tt.wantError] == 0 {
				t.Errorf("back-offs %d (%gs, longest %gs), errors %v: want back-offs and %s\n%s",
					res.ReconnectBackoffs, res.ReconnectBackoffS, res.ReconnectBackoffMaxS, res.ErrorsByKind, tt.wantError, out)
			}
			t.Logf("%d attempts in %v (at most %d), %d back-offs", attempts, elapsed, bound, res.ReconnectBackoffs)
		})
	}
}
