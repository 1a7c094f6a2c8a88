package loadtester

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A server that requires a client certificate is named before any load,
// in one exact line with the flags that give one: under TLS 1.3 (its
// certificate_required alert arrives only on the client's first read,
// after the handshake), under TLS 1.2 (its refusal ends the handshake),
// over HTTP/1.1 and HTTP/2; a certificate it refuses or does not ask for
// is named too; with the right certificate the run goes on.
func TestPreflightClientCertificate(t *testing.T) {
	client := newTestCert(t, "load-tester-client")
	stranger := newTestCert(t, "stranger")
	pool := x509.NewCertPool()
	pool.AddCert(client.cert.Leaf)
	verify := func(c *tls.Config) { c.ClientAuth, c.ClientCAs = tls.RequireAndVerifyClientCert, pool }
	refuseAll := func(c *tls.Config) { // asks for any certificate, names no CA, refuses every one
		c.ClientAuth = tls.RequireAnyClientCert
		c.VerifyPeerCertificate = func([][]byte, [][]*x509.Certificate) error { return errors.New("refused") }
	}
	const (
		none     = `the server requires a client certificate and none was given (remote error: tls: %s); --cert FILE --key FILE give one`
		refused  = `the server rejected the client certificate given by --cert (remote error: tls: %s); --cert FILE --key FILE give another`
		unasked  = `the server requires a client certificate and the one given by --cert is not one it asks for (another issuer or key type) (remote error: tls: %s); --cert FILE --key FILE give another`
		required = "certificate required"
		bad      = "bad certificate"
		failure  = "handshake failure" // Go's server under TLS 1.2, as nginx
	)
	tests := []struct {
		name    string
		version uint16
		http2   bool
		server  func(*tls.Config)
		cert    *testCert
		want    string // "": the run goes on
	}{
		{"TLS 1.3, none given", tls.VersionTLS13, false, verify, nil, fmt.Sprintf(none, required)},
		{"TLS 1.2, none given", tls.VersionTLS12, false, verify, nil, fmt.Sprintf(none, failure)},
		{"TLS 1.3 h2, none given", tls.VersionTLS13, true, verify, nil, fmt.Sprintf(none, required)},
		{"TLS 1.2 h2, none given", tls.VersionTLS12, true, verify, nil, fmt.Sprintf(none, failure)},
		{"TLS 1.3, refused", tls.VersionTLS13, false, refuseAll, &client, fmt.Sprintf(refused, bad)},
		{"TLS 1.2, refused", tls.VersionTLS12, false, refuseAll, &client, fmt.Sprintf(refused, bad)},
		{"TLS 1.3 h2, refused", tls.VersionTLS13, true, refuseAll, &client, fmt.Sprintf(refused, bad)},
		{"TLS 1.3, another issuer", tls.VersionTLS13, false, verify, &stranger, fmt.Sprintf(unasked, required)},
		{"TLS 1.3, given", tls.VersionTLS13, false, verify, &client, ""},
		{"TLS 1.2, given", tls.VersionTLS12, false, verify, &client, ""},
		{"TLS 1.3 h2, given", tls.VersionTLS13, true, verify, &client, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, answered := startMutualTLSServer(t, tt.version, tt.http2, tt.server)
			cfg := DefaultConfig()
			if err := cfg.SetURL(srv.URL + "/ok"); err != nil {
				t.Fatal(err)
			}
			cfg.TLS.Insecure = true
			if tt.http2 {
				cfg.HTTP2, cfg.Streams = true, 4
			}
			if tt.cert != nil {
				cfg.TLS.CertFile, cfg.TLS.KeyFile = tt.cert.certFile, tt.cert.keyFile
			}
			cfg.Concurrency, cfg.Duration, cfg.StatsInterval = 2, 300*time.Millisecond, 100*time.Millisecond
			res, err := Run(t.Context(), cfg)
			if tt.want == "" {
				if err != nil || res.Answered == 0 || res.Errors != 0 {
					t.Fatalf("err %v, result %+v", err, res)
				}
				return
			}
			want := fmt.Sprintf("target down: TLS handshake with tcp %s (server name %q): %s", srv.Listener.Addr(), "127.0.0.1", tt.want)
			if err == nil || err.Error() != want || !errors.Is(err, ErrTargetDown) {
				t.Fatalf("err\n%v\nwant\n%s", err, want)
			}
			if n := answered.Load(); n != 0 {
				t.Errorf("%d requests reached the handler before the refusal was named", n)
			}
		})
	}
}

// startMutualTLSServer is Go's net/http server over TLS up to version,
// HTTP/2 by ALPN when http2, its client-certificate policy set by
// configure; it counts the requests its handler saw.
func startMutualTLSServer(t *testing.T, version uint16, http2 bool, configure func(*tls.Config)) (*httptest.Server, *countingHandler) {
	t.Helper()
	h := &countingHandler{}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
	srv.EnableHTTP2 = http2
	srv.TLS = &tls.Config{MaxVersion: version}
	configure(srv.TLS)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, h
}

// countingHandler answers "ok" and counts what it answered.
type countingHandler struct{ atomic.Int64 }

func (h *countingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.Add(1)
	w.Write([]byte("ok"))
}

// The alert crypto/tls reports is recognised by its code; anything else
// is not an alert.
func TestRemoteAlert(t *testing.T) {
	tests := []struct {
		err  error
		want tls.AlertError
		ok   bool
	}{
		{&net.OpError{Op: "remote error", Err: tls.AlertError(116)}, 116, true},
		{fmt.Errorf("wrapped: %w", &net.OpError{Op: "remote error", Err: tls.AlertError(42)}), 42, true},
		{&net.OpError{Op: "local error", Err: tls.AlertError(42)}, 0, false},
		{io.EOF, 0, false},
		{nil, 0, false},
	}
	for _, tt := range tests {
		if a, ok := remoteAlert(tt.err); a != tt.want || ok != tt.ok {
			t.Errorf("remoteAlert(%v) = %d, %v; want %d, %v", tt.err, a, ok, tt.want, tt.ok)
		}
	}
}

// A server that chooses h2 by ALPN but never sends its SETTINGS is named
// before any load.
func TestPreflightH2NoSettings(t *testing.T) {
	cert := newTestCert(t, "127.0.0.1")
	conf := &tls.Config{Certificates: []tls.Certificate{cert.cert}, NextProtos: []string{"h2"}}
	s := startCountingServer(t, func(_ int64, c net.Conn) {
		tc := tls.Server(c, conf)
		tc.Handshake()
		tc.Close()
	})
	cfg := DefaultConfig()
	cfg.Port = s.ln.Addr().(*net.TCPAddr).Port
	cfg.TLS = &TLSOptions{CAFile: cert.certFile}
	cfg.HTTP2, cfg.Streams = true, 4
	_, err := Run(t.Context(), cfg)
	// The close reads as EOF, or as a reset if the preface reached a
	// closed socket.
	want := fmt.Sprintf("target down: tcp %s: the server chose h2 by ALPN but sent no SETTINGS frame after the client's preface (", s.ln.Addr())
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err\n%v\nwant\n%s", err, want)
	}
	if n := s.accepted.Load(); n != 1 {
		t.Errorf("%d connections, want the preflight's alone", n)
	}
}
