package http1

import (
	"bufio"
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// getOKRequest is what wrk sends for /ok.
const getOKRequest = "GET /ok HTTP/1.1\r\nHost: 127.0.0.1:8123\r\nUser-Agent: wrk\r\nAccept: */*\r\nX-Request-Id: 0123456789abcdef\r\n\r\n"

var chunkedRequest = "POST /v1/commit HTTP/1.1\r\nHost: 127.0.0.1:8123\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
	"40\r\n" + strings.Repeat("j", 0x40) + "\r\n40\r\n" + strings.Repeat("s", 0x40) + "\r\n0\r\n\r\n"

func benchParse(b *testing.B, in []byte, perOp int) {
	p := NewParser(1 << 20)
	var req Request
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		buf := in
		for range perOp {
			n, err := p.Parse(buf, &req)
			if n == 0 || err != nil {
				b.Fatalf("n=%d err=%v", n, err)
			}
			buf = buf[n:]
		}
	}
}

func BenchmarkParseGetOK(b *testing.B) { benchParse(b, []byte(getOKRequest), 1) }

func BenchmarkParsePipelined16(b *testing.B) {
	benchParse(b, bytes.Repeat([]byte(getOKRequest), 16), 16)
}

func BenchmarkParseChunked(b *testing.B) { benchParse(b, []byte(chunkedRequest), 1) }

// BenchmarkNetHTTPReadRequestGetOK parses the same bytes with net/http, the
// yardstick for BenchmarkParseGetOK (the reader is reused, as a server would).
func BenchmarkNetHTTPReadRequestGetOK(b *testing.B) {
	in := []byte(getOKRequest)
	src := bytes.NewReader(in)
	br := bufio.NewReader(src)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		src.Reset(in)
		br.Reset(src)
		req, err := http.ReadRequest(br)
		if err != nil || req.URL.Path != "/ok" {
			b.Fatalf("err=%v", err)
		}
	}
}

func BenchmarkNetHTTPReadRequestChunked(b *testing.B) {
	in := []byte(chunkedRequest)
	src := bytes.NewReader(in)
	br := bufio.NewReader(src)
	var body bytes.Buffer
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		src.Reset(in)
		br.Reset(src)
		req, err := http.ReadRequest(br)
		if err != nil {
			b.Fatal(err)
		}
		body.Reset()
		if _, err := body.ReadFrom(req.Body); err != nil || body.Len() != 0x80 {
			b.Fatalf("err=%v len=%d", err, body.Len())
		}
	}
}

func BenchmarkAppendResponseOK(b *testing.B) {
	dst := make([]byte, 0, 256)
	body := []byte(`{"status":"ok"}`)
	id := []byte("0123456789abcdef")
	b.ReportAllocs()
	for b.Loop() {
		dst = AppendResponse(dst[:0], 200, "application/json", body, id, true)
	}
}

// gateOKRequest is what load_tester sends for the gate's GET /ok scenarios.
const gateOKRequest = "GET /ok HTTP/1.1\r\nHost: 127.0.0.1:8123\r\n\r\n"

func BenchmarkParseGateOKPipelined16(b *testing.B) {
	benchParse(b, bytes.Repeat([]byte(gateOKRequest), 16), 16)
}
