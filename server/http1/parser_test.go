package http1

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// result is a comparable copy of what one Parse call produced.
type result struct {
	N, Status                   int
	Method, Target, Path, Query string
	QueryNil                    bool
	Version                     Version
	KeepAlive                   bool
	RequestID                   string
	RequestIDNil                bool
	ContentType                 string
	ContentLength               int64
	Chunked, Expect             bool
	Body                        string
	BodyNil                     bool
	RawHeaders                  string
}

func resultOf(n int, err error, req *Request) result {
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			return result{Status: -1}
		}
		return result{Status: e.Status}
	}
	if n == 0 {
		return result{}
	}
	return result{
		N: n, Method: string(req.Method), Target: string(req.Target), Path: string(req.Path),
		Query: string(req.Query), QueryNil: req.Query == nil, Version: req.Version,
		KeepAlive: req.KeepAlive, RequestID: string(req.RequestID), RequestIDNil: req.RequestID == nil,
		ContentType: string(req.ContentType), ContentLength: req.ContentLength,
		Chunked: req.Chunked, Expect: req.ExpectContinue, Body: string(req.Body),
		BodyNil: req.Body == nil, RawHeaders: string(req.RawHeaders),
	}
}

// parseStream parses every request in data as it arrives in pieces ending at
// cuts (the last cut must be len(data)). Each arrival is a fresh copy of all
// bytes received so far, so a parser that kept a stale slice would show it.
// It stops at the first error or when the data ends.
func parseStream(p *Parser, data []byte, cuts []int) []result {
	var out []result
	var req Request
	start := 0
	for _, cut := range cuts {
		received := append([]byte(nil), data[:cut]...)
		for start <= len(received) {
			n, err := p.Parse(received[start:], &req)
			if n < 0 || n > len(received)-start {
				return append(out, result{Status: -2, N: n})
			}
			if err == nil && n == 0 {
				break // incomplete: wait for the next cut
			}
			out = append(out, resultOf(n, err, &req))
			if err != nil {
				return out
			}
			start += n
		}
	}
	return out
}

func newTestParser() *Parser {
	p := NewParser(4096)
	p.SetMaxHeaderBytes(1024)
	p.hostOptional = true // framing tests; the Host rules have tests of their own
	return p
}

var parseCases = []struct {
	name string
	in   string
	want []result // one per request parsed from in; empty: incomplete
}{
	{"get ok", "GET /ok HTTP/1.1\r\nHost: localhost\r\nUser-Agent: wrk\r\nAccept: */*\r\n\r\n", []result{{
		Method: "GET", Target: "/ok", Path: "/ok", QueryNil: true, Version: HTTP11, KeepAlive: true,
		RequestIDNil: true, ContentLength: -1, BodyNil: true,
		RawHeaders: "Host: localhost\r\nUser-Agent: wrk\r\nAccept: */*\r\n",
	}}},
	{"query", "GET /v1/status?request_id=abc&x=1 HTTP/1.1\r\n\r\n", []result{{
		Method: "GET", Target: "/v1/status?request_id=abc&x=1", Path: "/v1/status", Query: "request_id=abc&x=1",
		Version: HTTP11, KeepAlive: true, RequestIDNil: true, ContentLength: -1, BodyNil: true,
	}}},
	{"empty query", "GET /a? HTTP/1.1\r\n\r\n", []result{{
		Method: "GET", Target: "/a?", Path: "/a", Version: HTTP11, KeepAlive: true,
		RequestIDNil: true, ContentLength: -1, BodyNil: true,
	}}},
	{"http10 closes", "GET / HTTP/1.0\r\n\r\n", []result{{
		Method: "GET", Target: "/", Path: "/", QueryNil: true, Version: HTTP10,
		RequestIDNil: true, ContentLength: -1, BodyNil: true,
	}}},
	{"http10 keep-alive", "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", []result{{
		Method: "GET", Target: "/", Path: "/", QueryNil: true, Version: HTTP10, KeepAlive: true,
		RequestIDNil: true, ContentLength: -1, BodyNil: true, RawHeaders: "Connection: Keep-Alive\r\n",
	}}},
	{"http10 keep-alive and close", "GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", []result{{
		Method: "GET", Target: "/", Path: "/", QueryNil: true, Version: HTTP10,
		RequestIDNil: true, ContentLength: -1, BodyNil: true, RawHeaders: "Connection: keep-alive, close\r\n",
	}}},
	{"http11 close", "GET / HTTP/1.1\r\nconnection:close\r\n\r\n", []result{{
		Method: "GET", Target: "/", Path: "/", QueryNil: true, Version: HTTP11,
		RequestIDNil: true, ContentLength: -1, BodyNil: true, RawHeaders: "connection:close\r\n",
	}}},
	{"http11 close in token list", "GET / HTTP/1.1\r\nConnection: Upgrade ,\tCLOSE \r\n\r\n", []result{{
		Method: "GET", Target: "/", Path: "/", QueryNil: true, Version: HTTP11,
		RequestIDNil: true, ContentLength: -1, BodyNil: true, RawHeaders: "Connection: Upgrade ,\tCLOSE \r\n",
	}}},
	{"http11 other connection tokens", "GET / HTTP/1.1\r\nConnection: upgrade, closed\r\n\r\n", []result{{
		Method: "GET", Target: "/", Path: "/", QueryNil: true, Version: HTTP11, KeepAlive: true,
		RequestIDNil: true, ContentLength: -1, BodyNil: true, RawHeaders: "Connection: upgrade, closed\r\n",
	}}},
	{"request id and content type, any case", "POST /v1/commit HTTP/1.1\r\nx-REQUEST-id: \t r-1 \r\nCONTENT-TYPE: application/json\r\ncontent-length: 2\r\n\r\n{}", []result{{
		Method: "POST", Target: "/v1/commit", Path: "/v1/commit", QueryNil: true, Version: HTTP11, KeepAlive: true,
		RequestID: "r-1", ContentType: "application/json", ContentLength: 2, Body: "{}",
		RawHeaders: "x-REQUEST-id: \t r-1 \r\nCONTENT-TYPE: application/json\r\ncontent-length: 2\r\n",
	}}},
	{"empty request id", "GET / HTTP/1.1\r\nX-Request-Id:\r\n\r\n", []result{{
		Method: "GET", Target: "/", Path: "/", QueryNil: true, Version: HTTP11, KeepAlive: true,
		ContentLength: -1, BodyNil: true, RawHeaders: "X-Request-Id:\r\n",
	}}},
	{"content-length zero", "POST /x HTTP/1.1\r\nContent-Length: 0\r\n\r\n", []result{{
		Method: "POST", Target: "/x", Path: "/x", QueryNil: true, Version: HTTP11, KeepAlive: true,
		RequestIDNil: true, ContentLength: 0, BodyNil: true, RawHeaders: "Content-Length: 0\r\n",
	}}},
	{"identical duplicate content-length", "POST /x HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", []result{{
		Method: "POST", Target: "/x", Path: "/x", QueryNil: true, Version: HTTP11, KeepAlive: true,
		RequestIDNil: true, ContentLength: 3, Body: "abc", RawHeaders: "Content-Length: 3\r\nContent-Length: 3\r\n",
	}}},
	{"chunked with extensions and trailers", "POST /c HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n" +
		"5;name=value\r\nhello\r\nA;x=\"y z\"\r\n, world!!!\r\n0\r\nX-Trailer: 1\r\nOther:two\r\n\r\n", []result{{
		Method: "POST", Target: "/c", Path: "/c", QueryNil: true, Version: HTTP11, KeepAlive: true,
		RequestIDNil: true, ContentLength: -1, Chunked: true, Body: "hello, world!!!",
		RawHeaders: "Transfer-Encoding: Chunked\r\n",
	}}},
	{"chunk size, BWS, extension", "POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2 \t; x = y\r\nhi\r\n0\r\n\r\n", []result{{
		Method: "POST", Target: "/c", Path: "/c", QueryNil: true, Version: HTTP11, KeepAlive: true,
		RequestIDNil: true, ContentLength: -1, Chunked: true, Body: "hi",
		RawHeaders: "Transfer-Encoding: chunked\r\n",
	}}},
	{"chunked empty", "POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", []result{{
		Method: "POST", Target: "/c", Path: "/c", QueryNil: true, Version: HTTP11, KeepAlive: true,
		RequestIDNil: true, ContentLength: -1, Chunked: true, BodyNil: true,
		RawHeaders: "Transfer-Encoding: chunked\r\n",
	}}},
	{"leading empty lines", "\r\n\r\nGET / HTTP/1.1\r\n\r\n", []result{{
		Method: "GET", Target: "/", Path: "/", QueryNil: true, Version: HTTP11, KeepAlive: true,
		RequestIDNil: true, ContentLength: -1, BodyNil: true,
	}}},
	{"expect continue", "PUT /v1/retention/p HTTP/1.1\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\nx", []result{{
		Method: "PUT", Target: "/v1/retention/p", Path: "/v1/retention/p", QueryNil: true, Version: HTTP11, KeepAlive: true,
		RequestIDNil: true, ContentLength: 1, Expect: true, Body: "x",
		RawHeaders: "Expect: 100-Continue\r\nContent-Length: 1\r\n",
	}}},
	{"obs-text in value and odd methods", "M-SEARCH * HTTP/1.1\r\nX: caf\xc3\xa9\r\n\r\n", []result{{
		Method: "M-SEARCH", Target: "*", Path: "*", QueryNil: true, Version: HTTP11, KeepAlive: true,
		RequestIDNil: true, ContentLength: -1, BodyNil: true, RawHeaders: "X: caf\xc3\xa9\r\n",
	}}},
	{"pipelined three", "GET /a HTTP/1.1\r\n\r\nPOST /b HTTP/1.1\r\nContent-Length: 1\r\n\r\nzGET /c HTTP/1.0\r\n\r\n", []result{
		{Method: "GET", Target: "/a", Path: "/a", QueryNil: true, Version: HTTP11, KeepAlive: true, RequestIDNil: true, ContentLength: -1, BodyNil: true},
		{Method: "POST", Target: "/b", Path: "/b", QueryNil: true, Version: HTTP11, KeepAlive: true, RequestIDNil: true, ContentLength: 1, Body: "z", RawHeaders: "Content-Length: 1\r\n"},
		{Method: "GET", Target: "/c", Path: "/c", QueryNil: true, Version: HTTP10, RequestIDNil: true, ContentLength: -1, BodyNil: true},
	}},

	// Incomplete requests: nothing yet.
	{"empty", "", nil},
	{"partial request line", "GET /ok HTT", nil},
	{"headers without end", "GET /ok HTTP/1.1\r\nHost: x\r\n", nil},
	{"headers ending in CR", "GET /ok HTTP/1.1\r\nHost: x\r\n\r", nil},
	{"body incomplete", "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\n12345", nil},
	{"chunk incomplete", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", nil},
	{"trailers incomplete", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: y\r\n", nil},

	// Refusals.
	{"no version", "GET /ok\r\n\r\n", status(400)},
	{"double space", "GET  /ok HTTP/1.1\r\n\r\n", status(400)},
	{"trailing space", "GET /ok HTTP/1.1 \r\n\r\n", status(400)},
	{"lowercase version", "GET /ok http/1.1\r\n\r\n", status(400)},
	{"long version", "GET /ok HTTP/1.10\r\n\r\n", status(400)},
	{"http2 version", "GET /ok HTTP/2.0\r\n\r\n", status(505)},
	{"http12 version", "GET /ok HTTP/1.2\r\n\r\n", status(505)},
	{"http09 version", "GET /ok HTTP/0.9\r\n\r\n", status(505)},
	{"bad method char", "G(T /ok HTTP/1.1\r\n\r\n", status(400)},
	{"empty method", " /ok HTTP/1.1\r\n\r\n", status(400)},
	{"control char in target", "GET /o\x01k HTTP/1.1\r\n\r\n", status(400)},
	{"tab in target", "GET /o\tk HTTP/1.1\r\n\r\n", status(400)},
	{"DEL in target", "GET /o\x7fk HTTP/1.1\r\n\r\n", status(400)},
	{"non-ASCII in target", "GET /caf\xc3\xa9 HTTP/1.1\r\n\r\n", status(400)},
	{"bare LF request line", "GET / HTTP/1.1\n\r\n", status(400)},
	{"bare LF header", "GET / HTTP/1.1\r\nHost: x\n\r\n", status(400)},
	{"bare LF end", "GET / HTTP/1.1\r\nHost: x\r\n\n", status(400)},
	{"bare CR in value", "GET / HTTP/1.1\r\nHost: x\ry\r\n\r\n", status(400)},
	{"NUL in value", "GET / HTTP/1.1\r\nHost: x\x00y\r\n\r\n", status(400)},
	{"header without colon", "GET / HTTP/1.1\r\nHost\r\n\r\n", status(400)},
	{"space before colon", "GET / HTTP/1.1\r\nHost : x\r\n\r\n", status(400)},
	{"empty header name", "GET / HTTP/1.1\r\n: x\r\n\r\n", status(400)},
	{"obs-fold", "GET / HTTP/1.1\r\nX-A: a\r\n b\r\n\r\n", status(400)},
	{"obs-fold tab", "GET / HTTP/1.1\r\nX-A: a\r\n\tb\r\n\r\n", status(400)},
	{"content-length letters", "POST / HTTP/1.1\r\nContent-Length: abc\r\n\r\n", status(400)},
	{"content-length negative", "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", status(400)},
	{"content-length plus", "POST / HTTP/1.1\r\nContent-Length: +1\r\n\r\n", status(400)},
	{"content-length empty", "POST / HTTP/1.1\r\nContent-Length:\r\n\r\n", status(400)},
	{"content-length list", "POST / HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\nx", status(400)},
	{"content-length overflow", "POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", status(400)},
	{"content-length two values", "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxy", status(400)},
	{"content-length then chunked", "POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", status(400)},
	{"chunked then content-length", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n", status(400)},
	{"transfer-encoding gzip", "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", status(501)},
	{"transfer-encoding gzip chunked", "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", status(501)},
	{"transfer-encoding empty", "POST / HTTP/1.1\r\nTransfer-Encoding:\r\n\r\n", status(400)},
	{"transfer-encoding twice", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", status(400)},
	{"transfer-encoding in 1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", status(400)},
	{"chunk size not hex", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", status(400)},
	{"chunk size empty", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n\r\n", status(400)},
	{"chunk size leading space", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n 5\r\nhello\r\n0\r\n\r\n", status(400)},
	{"chunk size 0x", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n", status(400)},
	{"chunk size overflow", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n", status(400)},
	{"chunk size bare LF", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n", status(400)},
	{"chunk ext control char", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;a\x01\r\nhello\r\n0\r\n\r\n", status(400)},
	{"chunk data without CRLF", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloX\r\n0\r\n\r\n", status(400)},
	{"chunk data with bare LF", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\n0\r\n\r\n", status(400)},
	{"bad trailer", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nno colon\r\n\r\n", status(400)},
	// Limits (the test parser: 4096-byte requests, 1024-byte header sections).
	{"content-length above limit, body not sent", "POST / HTTP/1.1\r\nContent-Length: 4097\r\n\r\n", status(413)},
	{"content-length above limit, headers not ended", "POST / HTTP/1.1\r\nContent-Length: 100000\r\n", status(413)},
	{"headers plus body above limit", "POST / HTTP/1.1\r\nContent-Length: 4090\r\n\r\n", status(413)},
	{"header section too large", "GET / HTTP/1.1\r\n" + strings.Repeat("X-Pad: 0123456789\r\n", 60) + "\r\n", status(431)},
	{"endless request line", "GET /" + strings.Repeat("a", 1100), status(414)},
	{"endless header line", "GET / HTTP/1.1\r\nX: " + strings.Repeat("a", 1100), status(431)},
	{"chunk above limit", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1000\r\n", status(413)},
	{"chunks add up above limit", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" +
		strings.Repeat("3e8\r\n"+strings.Repeat("x", 1000)+"\r\n", 5) + "0\r\n\r\n", status(413)},
	{"endless chunk line", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;" + strings.Repeat("e", 5000), status(413)},
	{"endless trailers", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" + strings.Repeat("T: v\r\n", 1000), status(413)},
	{"error after good request", "GET /a HTTP/1.1\r\n\r\nGET /b HTTP/9.9\r\n\r\n", []result{
		{Method: "GET", Target: "/a", Path: "/a", QueryNil: true, Version: HTTP11, KeepAlive: true, RequestIDNil: true, ContentLength: -1, BodyNil: true},
		{Status: 505},
	}},
}

func status(code int) []result { return []result{{Status: code}} }

// withLengths fills in the expected N of each successful request: the
// requests of a case are back to back, so each ends where the next begins.
func withLengths(t *testing.T, in string, want []result) []result {
	t.Helper()
	out := append([]result(nil), want...)
	got := parseStream(newTestParser(), []byte(in), []int{len(in)})
	for i := range out {
		if out[i].Status == 0 && i < len(got) {
			out[i].N = got[i].N
		}
	}
	return out
}

func TestParseCases(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			got := parseStream(newTestParser(), []byte(tc.in), []int{len(tc.in)})
			want := withLengths(t, tc.in, tc.want)
			// The lengths must add up to the input for complete cases.
			total := 0
			for _, r := range got {
				total += r.N
			}
			if len(want) > 0 && want[len(want)-1].Status == 0 && total != len(tc.in) {
				t.Errorf("consumed %d of %d bytes", total, len(tc.in))
			}
			assertResults(t, got, want)
		})
	}
}

func assertResults(t *testing.T, got, want []result) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d results, want %d:\n got %+v\nwant %+v", len(got), len(want), got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("request %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// Every case, split at every byte position, and fed one byte at a time,
// parses exactly as it does whole.
func TestParseSplitAnywhere(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			whole := parseStream(newTestParser(), in, []int{len(in)})
			for k := 0; k <= len(in); k++ {
				got := parseStream(newTestParser(), in, []int{k, len(in)})
				if fmt.Sprint(got) != fmt.Sprint(whole) {
					t.Fatalf("split at %d:\n got %+v\nwant %+v", k, got, whole)
				}
			}
			cuts := make([]int, len(in)+1)
			for i := range cuts {
				cuts[i] = i
			}
			if got := parseStream(newTestParser(), in, cuts); fmt.Sprint(got) != fmt.Sprint(whole) {
				t.Fatalf("byte at a time:\n got %+v\nwant %+v", got, whole)
			}
		})
	}
}

func TestParsePipelined100(t *testing.T) {
	var in strings.Builder
	var want []result
	for i := range 100 {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&in, "GET /ok?i=%d HTTP/1.1\r\nHost: x\r\nX-Request-Id: id-%d\r\n\r\n", i, i)
			want = append(want, result{Method: "GET", Path: "/ok", Query: fmt.Sprint("i=", i), RequestID: fmt.Sprint("id-", i), Body: ""})
		case 1:
			body := fmt.Sprintf(`{"n":%d}`, i)
			fmt.Fprintf(&in, "POST /v1/commit HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			want = append(want, result{Method: "POST", Path: "/v1/commit", Body: body})
		case 2:
			fmt.Fprintf(&in, "POST /v1/commit HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n%x\r\n%d\r\n0\r\n\r\n", len(fmt.Sprint(i)), i)
			want = append(want, result{Method: "POST", Path: "/v1/commit", Body: fmt.Sprint("abc", i)})
		}
	}
	p := NewParser(1 << 20)
	buf := []byte(in.String())
	var req Request
	for i, w := range want {
		n, err := p.Parse(buf, &req)
		if err != nil || n == 0 {
			t.Fatalf("request %d: n=%d err=%v", i, n, err)
		}
		if string(req.Method) != w.Method || string(req.Path) != w.Path || string(req.Query) != w.Query ||
			string(req.RequestID) != w.RequestID || string(req.Body) != w.Body || !req.KeepAlive {
			t.Fatalf("request %d: got %s %s ? %s id=%s body=%q", i, req.Method, req.Path, req.Query, req.RequestID, req.Body)
		}
		buf = buf[n:]
	}
	if len(buf) != 0 {
		t.Fatalf("%d bytes left over", len(buf))
	}
}

// A request that trickles in keeps the scan position: the bytes the parser
// looks at grow linearly, shown here by a request far larger than any
// quadratic rescan could get through quickly... measured as behaviour, not
// time: the parser must resume, not restart, so searched offsets only grow.
func TestParseResumesScan(t *testing.T) {
	in := []byte("GET / HTTP/1.1\r\n" + strings.Repeat("X-Pad: abcdefgh\r\n", 50) + "\r\n")
	p := newTestParser()
	var req Request
	lastSearched := 0
	for i := 1; i < len(in); i++ {
		n, err := p.Parse(in[:i], &req)
		if n != 0 || err != nil {
			t.Fatalf("prefix %d: n=%d err=%v", i, n, err)
		}
		if p.st.searched != i {
			t.Fatalf("prefix %d: searched %d, want %d (scan restarted?)", i, p.st.searched, i)
		}
		if p.st.searched < lastSearched {
			t.Fatalf("scan went backwards")
		}
		lastSearched = p.st.searched
	}
	if n, err := p.Parse(in, &req); n != len(in) || err != nil {
		t.Fatalf("whole: n=%d err=%v", n, err)
	}
}

// A caller that hands over fewer bytes than last time (it dropped the
// partial request) gets a fresh scan, not a panic.
func TestParseShorterBufferRestarts(t *testing.T) {
	p := newTestParser()
	var req Request
	if n, err := p.Parse([]byte("GET /long-path HTTP/1.1\r\nHost: x\r\n"), &req); n != 0 || err != nil {
		t.Fatalf("n=%d err=%v", n, err)
	}
	in := []byte("GET / HTTP/1.1\r\n\r\n")
	if n, err := p.Parse(in, &req); n != len(in) || err != nil || string(req.Path) != "/" {
		t.Fatalf("n=%d err=%v path=%q", n, err, req.Path)
	}
}

func TestParseResetForgetsPartialRequest(t *testing.T) {
	p := newTestParser()
	var req Request
	if n, err := p.Parse([]byte("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nab"), &req); n != 0 || err != nil {
		t.Fatalf("n=%d err=%v", n, err)
	}
	p.Reset()
	in := []byte("GET /x HTTP/1.1\r\n\r\n")
	if n, err := p.Parse(in, &req); n != len(in) || err != nil || string(req.Path) != "/x" {
		t.Fatalf("n=%d err=%v path=%q", n, err, req.Path)
	}
}

func TestWantsContinue(t *testing.T) {
	p := newTestParser()
	var req Request
	head := "POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n"
	p.Parse([]byte(head), &req)
	if p.WantsContinue() {
		t.Fatal("WantsContinue before the headers ended")
	}
	p.Parse([]byte(head+"\r\n"), &req)
	if !p.WantsContinue() {
		t.Fatal("WantsContinue false with headers complete and body owed")
	}
	if n, err := p.Parse([]byte(head+"\r\nabc"), &req); n == 0 || err != nil || !req.ExpectContinue {
		t.Fatalf("n=%d err=%v expect=%v", n, err, req.ExpectContinue)
	}
	if p.WantsContinue() {
		t.Fatal("WantsContinue after the request completed")
	}
}

func TestHeaderLookup(t *testing.T) {
	in := []byte("GET / HTTP/1.1\r\nHost: example\r\nX-Multi: a\r\nx-multi: b\r\nEmpty:\r\n\r\n")
	var req Request
	if n, err := NewParser(0).Parse(in, &req); n != len(in) || err != nil {
		t.Fatalf("n=%d err=%v", n, err)
	}
	for _, tc := range []struct{ name, want string }{
		{"host", "example"}, {"HOST", "example"}, {"X-MULTI", "a"}, {"empty", ""},
	} {
		if got := req.Header(tc.name); string(got) != tc.want || got == nil {
			t.Errorf("Header(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := req.Header("missing"); got != nil {
		t.Errorf("Header(missing) = %q, want nil", got)
	}
	var names []string
	req.VisitHeaders(func(name, value []byte) bool {
		names = append(names, string(name)+"="+string(value))
		return true
	})
	if got := strings.Join(names, ","); got != "Host=example,X-Multi=a,x-multi=b,Empty=" {
		t.Errorf("VisitHeaders saw %s", got)
	}
}

func TestRequestSlicesCannotClobberBuffer(t *testing.T) {
	in := []byte("GET /ok HTTP/1.1\r\nHost: x\r\n\r\nGET /next HTTP/1.1\r\n\r\n")
	var req Request
	n, err := NewParser(0).Parse(in, &req)
	if err != nil || n == 0 {
		t.Fatalf("n=%d err=%v", n, err)
	}
	_ = append(req.Path, "XXXXXXXX"...)
	if string(in[n:]) != "GET /next HTTP/1.1\r\n\r\n" {
		t.Fatalf("append to Path overwrote the buffer: %q", in)
	}
}

func TestErrorMessage(t *testing.T) {
	_, err := NewParser(0).Parse([]byte("GET / HTTP/3.0\r\n\r\n"), &Request{})
	var e *Error
	if !errors.As(err, &e) || e.Status != 505 {
		t.Fatalf("err = %v", err)
	}
	if got := err.Error(); got != "http1: 505 HTTP Version Not Supported: unsupported HTTP version" {
		t.Fatalf("Error() = %q", got)
	}
}

func TestNewParserDefaults(t *testing.T) {
	if got := NewParser(0).MaxRequestSize(); got != DefaultMaxRequestSize {
		t.Fatalf("MaxRequestSize = %d", got)
	}
	p := NewParser(100)
	if p.maxHeaderBytes != 100 {
		t.Fatalf("header limit %d not capped at the request limit", p.maxHeaderBytes)
	}
}

func TestParseZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	p := NewParser(1 << 20)
	var req Request
	in := []byte(getOKRequest)
	allocs := testing.AllocsPerRun(100, func() {
		if n, err := p.Parse(in, &req); n != len(in) || err != nil {
			t.Fatalf("n=%d err=%v", n, err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per GET /ok, want 0", allocs)
	}
}

// One large chunked upload must not pin its scratch buffer for the rest of
// the connection's life.
func TestChunkedScratchIsReleasedAfterLargeBody(t *testing.T) {
	p := NewParser(1 << 20)
	var req Request
	big := []byte("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
	big = AppendChunk(big, bytes.Repeat([]byte("x"), 200<<10))
	big = AppendLastChunk(big)
	if n, err := p.Parse(big, &req); n != len(big) || err != nil || len(req.Body) != 200<<10 {
		t.Fatalf("n=%d err=%v len=%d", n, err, len(req.Body))
	}
	small := []byte("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n")
	if n, err := p.Parse(small, &req); n != len(small) || err != nil || string(req.Body) != "hi" {
		t.Fatalf("n=%d err=%v body=%q", n, err, req.Body)
	}
	if cap(p.scratch) > scratchKeepBytes {
		t.Fatalf("scratch still holds %d bytes", cap(p.scratch))
	}
}

// hostCases are the Host and request-target rules of RFC 9112 §3.2, with
// the default parser (Host required). Status 0 means parsed.
var hostCases = []struct {
	name, in string
	status   int
	path     string
}{
	{"host", "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n", 0, "/ok"},
	{"empty host", "GET /ok HTTP/1.1\r\nHost:\r\n\r\n", 0, "/ok"},
	{"host any case", "GET /ok HTTP/1.1\r\nhOsT: x\r\n\r\n", 0, "/ok"},
	{"no host", "GET /ok HTTP/1.1\r\nX-A: b\r\n\r\n", 400, ""},
	{"no headers", "GET /ok HTTP/1.1\r\n\r\n", 400, ""},
	{"two hosts", "GET /ok HTTP/1.1\r\nHost: x\r\nHost: x\r\n\r\n", 400, ""},
	{"two hosts apart", "GET /ok HTTP/1.1\r\nHost: a\r\nX-A: b\r\nhost: b\r\n\r\n", 400, ""},
	{"http/1.0 without host", "GET /ok HTTP/1.0\r\n\r\n", 0, "/ok"},
	{"http/1.0 two hosts", "GET /ok HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n", 400, ""},
	{"absolute-form", "GET http://example.com/ok HTTP/1.1\r\nHost: example.com\r\n\r\n", 0, "/ok"},
	{"absolute-form with port and query", "GET http://example.com:8080/v1/status?request_id=a HTTP/1.1\r\nHost: x\r\n\r\n", 0, "/v1/status"},
	{"absolute-form scheme any case", "GET HTTP://example.com/ok HTTP/1.1\r\nHost: x\r\n\r\n", 0, "/ok"},
	{"absolute-form https", "GET https://example.com/ok HTTP/1.1\r\nHost: x\r\n\r\n", 0, "/ok"},
	{"absolute-form without path", "GET http://example.com HTTP/1.1\r\nHost: x\r\n\r\n", 0, "/"},
	{"absolute-form without path, with query", "GET http://example.com?a=b HTTP/1.1\r\nHost: x\r\n\r\n", 0, "/"},
	{"absolute-form still needs host", "GET http://example.com/ok HTTP/1.1\r\n\r\n", 400, ""},
	{"asterisk-form kept whole", "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", 0, "*"},
	{"other scheme kept whole", "GET ftp://example.com/ok HTTP/1.1\r\nHost: x\r\n\r\n", 0, "ftp://example.com/ok"},
}

func TestHostAndTargetForms(t *testing.T) {
	for _, tc := range hostCases {
		t.Run(tc.name, func(t *testing.T) {
			var req Request
			n, err := NewParser(0).Parse([]byte(tc.in), &req)
			got := resultOf(n, err, &req)
			if got.Status != tc.status {
				t.Fatalf("status %d, want %d (err %v)", got.Status, tc.status, err)
			}
			if tc.status == 0 && (n != len(tc.in) || got.Path != tc.path) {
				t.Fatalf("n=%d path %q, want n=%d path %q", n, got.Path, len(tc.in), tc.path)
			}
		})
	}
}

// Appending to the path of an absolute-form target without one must not
// change the shared "/".
func TestRootPathIsNotShared(t *testing.T) {
	var req Request
	if _, err := NewParser(0).Parse([]byte("GET http://h HTTP/1.1\r\nHost: h\r\n\r\n"), &req); err != nil {
		t.Fatal(err)
	}
	_ = append(req.Path, "x"...)
	var again Request
	NewParser(0).Parse([]byte("GET http://h HTTP/1.1\r\nHost: h\r\n\r\n"), &again)
	if string(again.Path) != "/" {
		t.Fatalf("path %q", again.Path)
	}
}

// RefusedHead tells the server that the answer to a refused request must
// carry no content: known from the method once the request line is in,
// from the first bytes before.
func TestRefusedHead(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     bool
	}{
		{"HEAD, bad header", "HEAD / HTTP/1.1\r\nBad Header: x\r\n\r\n", true},
		{"HEAD after empty lines, bad version", "\r\n\r\nHEAD / HTTP/7.0\r\n\r\n", true},
		{"HEAD, endless request line", "HEAD /" + strings.Repeat("a", 1100), true},
		{"HEAD, header section too large", "HEAD / HTTP/1.1\r\n" + strings.Repeat("X-Pad: 0123456789\r\n", 60), true},
		{"GET, bad header", "GET / HTTP/1.1\r\nBad Header: x\r\n\r\n", false},
		{"HEADX method", "HEADX / HTTP/1.1\r\nBad Header: x\r\n\r\n", false},
		{"head in lower case", "head / HTTP/1.1\r\nBad Header: x\r\n\r\n", false},
		{"garbage", "\x00\x01\x02 / HTTP/1.1\r\n\r\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestParser()
			var req Request
			n, err := p.Parse([]byte(tc.in), &req)
			if err == nil {
				t.Fatalf("Parse accepted it (n=%d)", n)
			}
			if got := p.RefusedHead(); got != tc.want {
				t.Errorf("RefusedHead() = %v, want %v (err %v)", got, tc.want, err)
			}
			// A later good request clears it.
			if _, err := p.Parse([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), &req); err != nil || p.RefusedHead() {
				t.Errorf("after a good request: err %v, RefusedHead %v", err, p.RefusedHead())
			}
		})
	}
}
