package http1

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestAppendResponse(t *testing.T) {
	cases := []struct {
		name        string
		status      int
		contentType string
		body        string
		requestID   string
		keepAlive   bool
		want        string
	}{
		{"ok", 200, "application/json", `{"status":"ok"}`, "abc", true,
			"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\nX-Response-ID: abc\r\n\r\n{\"status\":\"ok\"}"},
		{"close, no id", 400, "text/plain", "bad", "", false,
			"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 3\r\nConnection: close\r\n\r\nbad"},
		{"empty body, no type", 404, "", "", "", true,
			"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"},
		{"204 has no length and no body", 204, "", "ignored", "", true,
			"HTTP/1.1 204 No Content\r\n\r\n"},
		{"100 continue", 100, "", "", "", true,
			"HTTP/1.1 100 Continue\r\n\r\n"},
		{"unknown code keeps its number", 599, "", "", "", true,
			"HTTP/1.1 599 \r\nContent-Length: 0\r\n\r\n"},
		{"out of range code becomes 500", 42, "", "", "", true,
			"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n"},
		{"request id with CRLF is dropped", 200, "", "", "a\r\nSet-Cookie: x", true,
			"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"},
		{"413", 413, "", "", "r", false,
			"HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\nX-Response-ID: r\r\nConnection: close\r\n\r\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prefix := []byte("previous")
			got := AppendResponse(prefix, tc.status, tc.contentType, []byte(tc.body), []byte(tc.requestID), tc.keepAlive)
			if string(got) != "previous"+tc.want {
				t.Errorf("got  %q\nwant %q", got[len("previous"):], tc.want)
			}
		})
	}
}

// net/http's client reads what AppendResponse writes.
func TestAppendResponseReadByNetHTTP(t *testing.T) {
	raw := AppendResponse(nil, 201, "application/json", []byte(`{"v":1}`), []byte("id-7"), false)
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 201 || string(body) != `{"v":1}` || resp.Header.Get("X-Response-ID") != "id-7" ||
		!resp.Close || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("got %d %q %v close=%v", resp.StatusCode, body, resp.Header, resp.Close)
	}
}

func TestChunkedResponseReadByNetHTTP(t *testing.T) {
	raw := AppendChunkedHeader(nil, 200, "application/x-ndjson", []byte("sub-1"))
	raw = AppendChunk(raw, []byte("{\"a\":1}\n"))
	raw = AppendChunk(raw, nil) // must not end the stream
	raw = AppendChunk(raw, []byte(strings.Repeat("b", 300)))
	raw = AppendLastChunk(raw)
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"a\":1}\n" + strings.Repeat("b", 300); string(body) != want {
		t.Fatalf("body %q", body)
	}
	if resp.Header.Get("X-Response-ID") != "sub-1" || resp.TransferEncoding[0] != "chunked" {
		t.Fatalf("headers %v te %v", resp.Header, resp.TransferEncoding)
	}
	if !bytes.Contains(raw, []byte("\r\n12c\r\n")) {
		t.Fatalf("chunk size not in lowercase hex: %q", raw)
	}
}

// A chunked response is also a chunked request body our parser decodes.
func TestChunkHelpersRoundTripThroughParser(t *testing.T) {
	in := []byte("POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
	in = AppendChunk(in, []byte("hello "))
	in = AppendChunk(in, []byte("world"))
	in = AppendLastChunk(in)
	var req Request
	if n, err := NewParser(0).Parse(in, &req); n != len(in) || err != nil || string(req.Body) != "hello world" {
		t.Fatalf("n=%d err=%v body=%q", n, err, req.Body)
	}
}

func TestStatusText(t *testing.T) {
	for code, want := range map[int]string{200: "OK", 413: "Content Too Large", 505: "HTTP Version Not Supported", 299: "", -1: "", 1000: ""} {
		if got := StatusText(code); got != want {
			t.Errorf("StatusText(%d) = %q, want %q", code, got, want)
		}
	}
}

func TestAppendResponseZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	dst := make([]byte, 0, 512)
	body, id := []byte(`{"status":"ok"}`), []byte("id")
	allocs := testing.AllocsPerRun(100, func() {
		dst = AppendResponse(dst[:0], 200, "application/json", body, id, true)
		dst = AppendChunkedHeader(dst, 200, "application/json", id)
		dst = AppendChunk(dst, body)
		dst = AppendLastChunk(dst)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations, want 0", allocs)
	}
}

func TestWithConnectionClose(t *testing.T) {
	ok := AppendResponse(nil, 200, "application/json", []byte(`{"status":"ok"}`), []byte("r1"), true)
	for _, tc := range []struct {
		name, in, want string
	}{
		{"keep-alive HTTP/1.1", string(ok),
			"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\nX-Response-ID: r1\r\nConnection: close\r\n\r\n{\"status\":\"ok\"}"},
		{"HTTP/1.0 keep-alive", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\nX-A: b\r\n\r\nhi",
			"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\nX-A: b\r\n\r\nhi"},
		{"already closing", "HTTP/1.1 400 Bad Request\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno",
			"HTTP/1.1 400 Bad Request\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno"},
		{"HEAD answer", "HTTP/1.1 200 OK\r\nContent-Length: 15\r\n\r\n",
			"HTTP/1.1 200 OK\r\nContent-Length: 15\r\nConnection: close\r\n\r\n"},
		{"body holding a header-like line", "HTTP/1.1 200 OK\r\nContent-Length: 23\r\n\r\n\r\nConnection: close\r\nxx",
			"HTTP/1.1 200 OK\r\nContent-Length: 23\r\nConnection: close\r\n\r\n\r\nConnection: close\r\nxx"},
		{"a chunk, not a response", "5\r\nhello\r\n", "5\r\nhello\r\n"},
		{"no head end", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			got := WithConnectionClose(in)
			if string(got) != tc.want {
				t.Fatalf("got\n%q\nwant\n%q", got, tc.want)
			}
			if string(in) != tc.in {
				t.Fatalf("the input was modified: %q", in)
			}
			if tc.want != tc.in {
				resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(got)), &http.Request{Method: "GET"})
				if err != nil || !resp.Close {
					t.Fatalf("net/http reads %v, Close %v", err, resp != nil && resp.Close)
				}
			}
		})
	}
}
