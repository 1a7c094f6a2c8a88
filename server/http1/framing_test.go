package http1

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"testing"
)

// AppendFramed writes the connection header each framing asks for, extra
// after it, and for HEAD the GET's head (its Content-Length included)
// without the body.
func TestAppendFramed(t *testing.T) {
	body := []byte(`{"status":"ok"}`)
	const head11 = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\nX-Response-ID: r\r\n"
	for _, tc := range []struct {
		name  string
		f     Framing
		extra string
		want  string
	}{
		{"keep-alive", FramingKeepAlive, "", head11 + "\r\n" + string(body)},
		{"close", 0, "", head11 + "Connection: close\r\n\r\n" + string(body)},
		{"HTTP/1.0 keep-alive", FramingKeepAlive | FramingHTTP10, "", head11 + "Connection: keep-alive\r\n\r\n" + string(body)},
		{"HTTP/1.0 close", FramingHTTP10, "", head11 + "Connection: close\r\n\r\n" + string(body)},
		{"HEAD", FramingKeepAlive | FramingHead, "", head11 + "\r\n"},
		{"HEAD, close", FramingHead, "", head11 + "Connection: close\r\n\r\n"},
		{"HEAD, HTTP/1.0 keep-alive", FramingKeepAlive | FramingHTTP10 | FramingHead, "", head11 + "Connection: keep-alive\r\n\r\n"},
		{"extra after the connection header", FramingKeepAlive | FramingHTTP10, "Allow: GET, HEAD\r\n",
			head11 + "Connection: keep-alive\r\nAllow: GET, HEAD\r\n\r\n" + string(body)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := AppendFramed([]byte("previous"), tc.f, 200, "application/json", body, []byte("r"), tc.extra)
			if string(got) != "previous"+tc.want {
				t.Fatalf("got  %q\nwant %q", got[len("previous"):], tc.want)
			}
		})
	}
}

// net/http's client reads a HEAD answer as one: the Content-Length of the
// GET, no body, and the next response right after it.
func TestHeadResponseReadByNetHTTP(t *testing.T) {
	raw := AppendFramed(nil, FramingKeepAlive|FramingHead, 200, "application/json", []byte(`{"v":1}`), nil, "")
	raw = AppendResponse(raw, 404, "", nil, nil, true)
	br := bufio.NewReader(bytes.NewReader(raw))
	resp, err := http.ReadResponse(br, &http.Request{Method: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(resp.Body); resp.ContentLength != 7 || len(b) != 0 {
		t.Fatalf("HEAD: length %d, body %q", resp.ContentLength, b)
	}
	if next, err := http.ReadResponse(br, nil); err != nil || next.StatusCode != 404 {
		t.Fatalf("next response: %v %v", next, err)
	}
}

// RequestFraming reads the framing off the parsed request.
func TestRequestFraming(t *testing.T) {
	r := &Request{KeepAlive: true, Version: HTTP10}
	if f := RequestFraming(r, true); f != FramingKeepAlive|FramingHTTP10|FramingHead || !f.KeepAlive() || f.Closing().KeepAlive() {
		t.Fatalf("framing %b", f)
	}
	if f := RequestFraming(&Request{Version: HTTP11}, false); f != 0 || f.KeepAlive() {
		t.Fatalf("framing %b", f)
	}
}
