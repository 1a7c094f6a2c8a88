package main

import (
	"bytes"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// --http2 end to end against Go's net/http servers: h2 over TLS (by ALPN)
// and h2c (prior knowledge) exit 0 with every request over HTTP/2; a
// server without HTTP/2 is refused in one line, exit 1.
func TestHTTP2EndToEnd(t *testing.T) {
	start := func(tlsOn, h2 bool) (string, *atomic.Int64) {
		var nonH2 atomic.Int64
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ProtoMajor != 2 {
				nonH2.Add(1)
			}
			w.Write([]byte("ok"))
		}))
		srv.Config.ErrorLog = log.New(io.Discard, "", 0)
		srv.Config.Protocols = new(http.Protocols)
		srv.Config.Protocols.SetHTTP1(true)
		srv.Config.Protocols.SetHTTP2(tlsOn && h2)
		srv.Config.Protocols.SetUnencryptedHTTP2(!tlsOn && h2)
		if tlsOn {
			srv.EnableHTTP2 = h2
			srv.StartTLS()
		} else {
			srv.Start()
		}
		t.Cleanup(srv.Close)
		return srv.URL, &nonH2
	}
	url, nonH2 := start(true, true)
	var out, errOut bytes.Buffer
	code := run([]string{"--url", url + "/ok", "--http2", "--streams", "4", "--insecure",
		"--concurrency", "2", "--duration", "0.3", "--stats-interval", "0.1", "--quiet", "--threshold", "errors<=0"}, &out, &errOut)
	if code != exitOK || !strings.Contains(out.String(), "ALPN h2") || nonH2.Load() != 0 {
		t.Errorf("h2: exit %d, %d requests not over HTTP/2\n%s%s", code, nonH2.Load(), out.String(), errOut.String())
	}
	url, nonH2 = start(false, true)
	out.Reset()
	errOut.Reset()
	if code := run([]string{"--url", url + "/ok", "--http2", "--streams", "4", "--concurrency", "2", "--duration", "0.3", "--quiet"}, &out, &errOut); code != exitOK || nonH2.Load() != 0 {
		t.Errorf("h2c: exit %d, %d requests not over HTTP/2\n%s%s", code, nonH2.Load(), out.String(), errOut.String())
	}
	for _, tlsOn := range []bool{true, false} {
		url, _ := start(tlsOn, false)
		args := []string{"--url", url + "/ok", "--http2", "--duration", "0.3", "--quiet"}
		if tlsOn {
			args = append(args, "--insecure")
		}
		errOut.Reset()
		if code := run(args, &out, &errOut); code != exitFailure || strings.Count(errOut.String(), "\n") != 1 || !strings.Contains(errOut.String(), "HTTP/2") {
			t.Errorf("no h2, tls %v: exit %d, %q", tlsOn, code, errOut.String())
		}
	}
	errOut.Reset()
	if code := run([]string{"--streams", "4"}, &out, &errOut); code != exitUsage || !strings.Contains(errOut.String(), "--streams: only with --http2") {
		t.Errorf("--streams alone: exit %d, %q", code, errOut.String())
	}
}
