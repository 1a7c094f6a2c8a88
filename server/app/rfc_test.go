package app

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"weaseldb/internal/nettest"
)

// The HTTP MUSTs of RFC 9110 and 9112 that routing decides: a response to
// HEAD has no body, so a pipelined response after it parses; every GET
// route answers HEAD with the GET's headers; a 405 lists the route's
// methods in Allow; Host is required exactly once on HTTP/1.1; an
// absolute-form target is routed by its path.

func dialTCP(t *testing.T, ts *testServer) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.DialTimeout("tcp", ts.tcpAddr, nettest.DialTimeout)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(20 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

// readHeadResponse reads a response to a HEAD request: the headers only,
// whatever Content-Length says (net/http does the same when told the
// request was HEAD).
func readHeadResponse(t *testing.T, br *bufio.Reader) *http.Response {
	t.Helper()
	resp, err := http.ReadResponse(br, &http.Request{Method: "HEAD"})
	if err != nil {
		t.Fatalf("read HEAD response: %v", err)
	}
	resp.Body.Close()
	return resp
}

func TestHeadIsGetWithoutBody(t *testing.T) {
	ts := startServer(t, nil)
	for _, path := range []string{"/ok", "/v1/version", "/metrics", "/v1/status?request_id=abcdef", "/v1/retention", "/v1/subscribe"} {
		t.Run(path, func(t *testing.T) {
			c, br := dialTCP(t, ts)
			// GET first for the reference headers, then HEAD pipelined
			// before another GET: the last response must parse.
			io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n")
			var getResp *http.Response
			if path == "/v1/subscribe" {
				// A GET would start a stream; compare with what a stream's
				// head carries instead.
				getResp = &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/x-ndjson"}}}
				c.Close()
				c, br = dialTCP(t, ts)
			} else {
				getResp, _ = readResponse(t, br)
			}
			io.WriteString(c, "HEAD "+path+" HTTP/1.1\r\nHost: x\r\n\r\nGET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
			head := readHeadResponse(t, br)
			if head.StatusCode != getResp.StatusCode {
				t.Fatalf("HEAD %d, GET %d", head.StatusCode, getResp.StatusCode)
			}
			if got, want := head.Header.Get("Content-Type"), getResp.Header.Get("Content-Type"); got != want {
				t.Errorf("HEAD Content-Type %q, GET %q", got, want)
			}
			if path == "/ok" || path == "/v1/version" {
				if got, want := head.Header.Get("Content-Length"), getResp.Header.Get("Content-Length"); got != want || got == "" {
					t.Errorf("HEAD Content-Length %q, GET %q", got, want)
				}
			}
			next, body := readResponse(t, br)
			if next.StatusCode != 200 || body != `{"status":"ok"}` {
				t.Fatalf("the GET after HEAD: %d %q", next.StatusCode, body)
			}
		})
	}
}

// A HEAD response is exactly the GET's head: the bytes before the body.
func TestHeadBytesAreTheGetHead(t *testing.T) {
	ts := startServer(t, nil)
	c, _ := dialTCP(t, ts)
	io.WriteString(c, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\nHEAD /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	all, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(all, []byte("\r\n\r\n"))
	get, head := all[:i+4], all[i+4+len(`{"status":"ok"}`):]
	wantHead := strings.Replace(string(get), "\r\n\r\n", "\r\nConnection: close\r\n\r\n", 1)
	if string(head) != wantHead {
		t.Fatalf("HEAD answered\n%q\nwant\n%q", head, wantHead)
	}
}

func TestMethodNotAllowedCarriesAllow(t *testing.T) {
	ts := startServer(t, nil)
	c, br := dialTCP(t, ts)
	for _, tc := range []struct{ req, allow string }{
		{"POST /ok HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", "GET, HEAD"},
		{"GET /v1/commit HTTP/1.1\r\nHost: x\r\n\r\n", "POST"},
		{"HEAD /v1/commit HTTP/1.1\r\nHost: x\r\n\r\n", "POST"},
		{"DELETE /metrics HTTP/1.1\r\nHost: x\r\n\r\n", "GET, HEAD"},
		{"PATCH /v1/retention/p1 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", "GET, HEAD, PUT, DELETE"},
		{"PUT /v1/retention HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", "GET, HEAD"},
		{"BREW /ok HTTP/1.1\r\nHost: x\r\n\r\n", "GET, HEAD"},
	} {
		io.WriteString(c, tc.req)
		var resp *http.Response
		if strings.HasPrefix(tc.req, "HEAD") {
			resp = readHeadResponse(t, br)
		} else {
			resp, _ = readResponse(t, br)
		}
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != tc.allow {
			t.Errorf("%q: %d, Allow %q; want 405, Allow %q", tc.req, resp.StatusCode, resp.Header.Get("Allow"), tc.allow)
		}
	}
}

func TestHostRulesAndAbsoluteForm(t *testing.T) {
	ts := startServer(t, nil)
	for _, tc := range []struct {
		name, req string
		code      int
	}{
		{"no host", "GET /ok HTTP/1.1\r\n\r\n", 400},
		{"two hosts", "GET /ok HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", 400},
		{"http/1.0 without host", "GET /ok HTTP/1.0\r\n\r\n", 200},
		{"absolute-form", "GET http://example.com/ok HTTP/1.1\r\nHost: example.com\r\n\r\n", 200},
		{"absolute-form, data route", "GET http://example.com:8080/v1/version HTTP/1.1\r\nHost: example.com\r\n\r\n", 200},
		{"absolute-form without path", "GET http://example.com HTTP/1.1\r\nHost: example.com\r\n\r\n", 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, br := dialTCP(t, ts)
			// An earlier request on the connection is answered before
			// the refusal, and the refusal closes the connection.
			io.WriteString(c, okRequest(1)+tc.req)
			first, _ := readResponse(t, br)
			if first.StatusCode != 200 {
				t.Fatalf("earlier request: %d", first.StatusCode)
			}
			resp, body := readResponse(t, br)
			if resp.StatusCode != tc.code {
				t.Fatalf("%d %s, want %d", resp.StatusCode, body, tc.code)
			}
			if tc.code == 400 {
				expectEOF(t, br)
			}
		})
	}
}
