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
	"weaseldb/server/config"
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

// The pipeline frames GET /ok once per framing and shares it: pipelined
// answers of every framing, on one connection, are each exactly their own
// (HEAD the head alone, HTTP/1.0 keep-alive announced, a request id
// echoed), in request order, and asked twice they are the same bytes.
func TestPipelinedOkFramings(t *testing.T) {
	ts := startServer(t, nil)
	c, _ := dialTCP(t, ts)
	const (
		get      = "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n"
		head     = "HEAD /ok HTTP/1.1\r\nHost: x\r\n\r\n"
		head10   = "HEAD /ok HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
		get10    = "GET /ok HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
		withID   = "GET /ok HTTP/1.1\r\nHost: x\r\nX-Request-Id: r-9\r\n\r\n"
		getClose = "GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
		okHead   = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n"
		okBody   = `{"status":"ok"}`
	)
	want := map[string]string{
		get:      okHead + "\r\n" + okBody,
		head:     okHead + "\r\n",
		head10:   okHead + "Connection: keep-alive\r\n\r\n",
		get10:    okHead + "Connection: keep-alive\r\n\r\n" + okBody,
		withID:   okHead + "X-Response-ID: r-9\r\n\r\n" + okBody,
		getClose: okHead + "Connection: close\r\n\r\n" + okBody,
	}
	order := []string{get, head, head10, get10, withID, head, get10, get, head10, withID, getClose}
	var reqs, answers strings.Builder
	for _, r := range order {
		reqs.WriteString(r)
		answers.WriteString(want[r])
	}
	io.WriteString(c, reqs.String())
	all, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if string(all) != answers.String() {
		t.Fatalf("answered\n%q\nwant\n%q", all, answers.String())
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

// A response to HEAD carries no content on every path, errors included
// (RFC 9110 §9.3.2): bytes after its head would be read as the start of
// the next response and desync a pipelining client. Each HEAD is followed,
// on the same connection, by a pipelined GET /ok that must arrive intact;
// where the error ends the connection (the parser lost the framing), the
// HEAD's answer must still end at its head, then EOF.
func TestHeadNeverCarriesContent(t *testing.T) {
	ts := startServer(t, func(c *config.Config) { c.Server.MaxRequestSizeBytes = 4096 })
	const next = "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n"
	for _, tc := range []struct {
		name   string
		req    string
		status int
		closes bool // the server closes after the HEAD's answer
	}{
		{"unknown path", "HEAD /nope HTTP/1.1\r\nHost: x\r\n\r\n", 404, false},
		{"unknown path HTTP/1.0 keep-alive", "HEAD /nope HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", 404, false},
		{"unknown prefix path", "HEAD /v1/retentionx HTTP/1.1\r\nHost: x\r\n\r\n", 404, false},
		{"POST-only route", "HEAD /v1/commit HTTP/1.1\r\nHost: x\r\n\r\n", 405, false},
		{"status without request_id", "HEAD /v1/status HTTP/1.1\r\nHost: x\r\n\r\n", 400, false},
		{"status of an unknown id (built in the pipeline)", "HEAD /v1/status?request_id=never-seen-id-0001 HTTP/1.1\r\nHost: x\r\n\r\n", 0, false},
		{"unknown retention policy (built in the pipeline)", "HEAD /v1/retention/nope HTTP/1.1\r\nHost: x\r\n\r\n", 404, false},
		{"bad policy id", "HEAD /v1/retention/%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400, false},
		{"subscribe with a bad query", "HEAD /v1/subscribe?from=x HTTP/1.1\r\nHost: x\r\n\r\n", 400, false},
		{"metrics", "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 200, false},
		{"header section too large", "HEAD /ok HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 8192) + "\r\n\r\n", 431, true},
		{"request line too long", "HEAD /" + strings.Repeat("a", 8192) + " HTTP/1.1\r\nHost: x\r\n\r\n", 414, true},
		{"body too large", "HEAD /ok HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n", 413, true},
		{"malformed header", "HEAD /ok HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n", 400, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, br := dialTCP(t, ts)
			io.WriteString(c, tc.req+next)
			head := readHeadResponse(t, br)
			if tc.status != 0 && head.StatusCode != tc.status {
				t.Fatalf("HEAD answered %d, want %d", head.StatusCode, tc.status)
			}
			if tc.closes {
				if !head.Close {
					t.Errorf("a closing answer without Connection: close: %v", head.Header)
				}
				rest, err := io.ReadAll(br)
				if err != nil || len(rest) != 0 {
					t.Fatalf("after the HEAD's head: %q, %v; want EOF and nothing else", rest, err)
				}
				return
			}
			resp, body := readResponse(t, br)
			if resp.StatusCode != 200 || body != `{"status":"ok"}` {
				t.Fatalf("the GET /ok after HEAD: %d %q", resp.StatusCode, body)
			}
		})
	}
}
