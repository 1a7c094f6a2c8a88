package loadtester

import (
	"bufio"
	"crypto/tls"
	"net"
	"testing"
	"time"
)

// How the close-delimited server ends each connection after its body.
type closeStyle int

const (
	closeNotify   closeStyle = iota // close_notify, then the TCP close
	closeAtRecord                   // the raw TCP close under the tls.Conn, at a record boundary
	closeInRecord                   // the raw TCP close halfway through the body's record
)

// startCloseDelimitedServer serves HTTP/1.1 over TLS, each response with
// neither Content-Length nor chunked coding (a body delimited by the
// connection's close, RFC 9112 §6.3 rule 8), its head and body in records
// of their own, and ends each connection by style.
func startCloseDelimitedServer(t *testing.T, style closeStyle) (*countingServer, testCert) {
	t.Helper()
	cert := newTestCert(t, "127.0.0.1")
	conf := &tls.Config{Certificates: []tls.Certificate{cert.cert}, NextProtos: []string{"http/1.1"}}
	s := startCountingServer(t, func(_ int64, raw net.Conn) {
		defer raw.Close()
		cut := &cuttingConn{Conn: raw}
		tc := tls.Server(cut, conf)
		if _, _, err := readRequestLine(bufio.NewReader(tc)); err != nil {
			return // the preflight's connection: a handshake, no request
		}
		if _, err := tc.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n")); err != nil {
			return
		}
		cut.half = style == closeInRecord
		tc.Write([]byte("a body the close delimits"))
		if style == closeNotify {
			tc.Close()
		}
	})
	return s, cert
}

// cuttingConn passes writes through, or with half set sends half of the
// next write and closes the connection (a record cut short).
type cuttingConn struct {
	net.Conn
	half bool
}

func (c *cuttingConn) Write(p []byte) (int, error) {
	if !c.half {
		return c.Conn.Write(p)
	}
	c.Conn.Write(p[:len(p)/2])
	c.Conn.Close()
	return len(p), nil
}

// A body delimited by the connection's close is answered over TLS only
// when the server's close_notify ends it; a bare TCP close, at a record
// boundary or inside one, counts the request failed as truncated, never
// answered (RFC 9112 §9.8).
func TestTLSCloseDelimitedBody(t *testing.T) {
	tests := []struct {
		name     string
		style    closeStyle
		answered bool
	}{
		{"close_notify", closeNotify, true},
		{"TCP close at a record boundary", closeAtRecord, false},
		{"TCP close inside a record", closeInRecord, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, cert := startCloseDelimitedServer(t, tt.style)
			cfg := DefaultConfig()
			cfg.Port = s.ln.Addr().(*net.TCPAddr).Port
			cfg.TLS = &TLSOptions{CAFile: cert.certFile}
			cfg.Concurrency, cfg.Duration, cfg.StatsInterval = 2, 400*time.Millisecond, 100*time.Millisecond
			_, res, out := runJudged(t, cfg, "")
			checkAccounting(t, res)
			if tt.answered {
				if res.Answered == 0 || res.Errors != 0 {
					t.Fatalf("answered %d, errors %v: want answers and no errors\n%s", res.Answered, res.ErrorsByKind, out)
				}
				return
			}
			if res.Answered != 0 || res.Failed == 0 || res.ErrorsByKind["truncated"] != res.Failed {
				t.Fatalf("answered %d, failed %d, errors %v: want every request failed as truncated\n%s",
					res.Answered, res.Failed, res.ErrorsByKind, out)
			}
		})
	}
}
