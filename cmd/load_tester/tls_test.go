package main

import (
	"bytes"
	"crypto/tls"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// HTTPS end to end against Go's net/http TLS server: its self-signed
// certificate is refused (exit 1, one line saying why and what to do),
// accepted by --ca with its certificate or by --insecure; the TLS flags
// need an https:// URL.
func TestHTTPSEndToEnd(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"--url", srv.URL + "/ok", "--concurrency", "2", "--duration", "0.3", "--stats-interval", "0.1", "--quiet"}
	var out, errOut bytes.Buffer
	code := run(base, &out, &errOut)
	if line := errOut.String(); code != exitFailure || strings.Count(line, "\n") != 1 ||
		!strings.Contains(line, "certificate signed by unknown authority") || !strings.Contains(line, "--insecure") {
		t.Errorf("bad certificate: exit %d, stderr %q", code, line)
	}
	for _, extra := range [][]string{{"--ca", ca}, {"--ca", ca, "--sni", "example.com", "--tls-resume"}, {"--insecure"}} {
		out.Reset()
		errOut.Reset()
		code := run(append(append([]string{}, base...), extra...), &out, &errOut)
		if code != exitOK || !strings.Contains(out.String(), "tls           TLS 1.3") || !strings.Contains(out.String(), "handshake     p50") {
			t.Errorf("%v: exit %d\n%s%s", extra, code, out.String(), errOut.String())
		}
	}
	for _, flag := range [][]string{{"--insecure"}, {"--ca", ca}, {"--sni", "x"}, {"--tls-resume"}, {"--cert", ca, "--key", ca}} {
		errOut.Reset()
		args := append([]string{"--url", "http://127.0.0.1:1/"}, flag...)
		if code := run(args, &out, &errOut); code != exitUsage || !strings.Contains(errOut.String(), "only with an https:// --url") {
			t.Errorf("%v over http: exit %d, %q", flag, code, errOut.String())
		}
	}
	errOut.Reset()
	if code := run(append(append([]string{}, base...), "--cert", ca), &out, &errOut); code != exitUsage || !strings.Contains(errOut.String(), "--cert and --key") {
		t.Errorf("--cert alone: exit %d, %q", code, errOut.String())
	}
}

// A server that requires a client certificate under TLS 1.3 (it says so
// only after the handshake) stops the run before any load: exit 1, one
// line naming the refusal and the flags that give a certificate.
func TestHTTPSClientCertificateRequired(t *testing.T) {
	var answered atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answered.Add(1)
		w.Write([]byte("ok"))
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert, MinVersion: tls.VersionTLS13}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	var out, errOut bytes.Buffer
	code := run([]string{"--url", srv.URL + "/ok", "--insecure", "--concurrency", "2", "--duration", "5", "--quiet"}, &out, &errOut)
	line := errOut.String()
	if code != exitFailure || strings.Count(line, "\n") != 1 || answered.Load() != 0 ||
		!strings.Contains(line, "the server requires a client certificate and none was given (remote error: tls: certificate required); --cert FILE --key FILE give one") {
		t.Errorf("exit %d, %d requests answered, stderr %q", code, answered.Load(), line)
	}
}
