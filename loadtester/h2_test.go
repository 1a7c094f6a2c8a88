package loadtester

import (
	"bytes"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"weaseldb/loadtester/result"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Server is Go's net/http server speaking HTTP/2: over TLS (h2 by ALPN)
// or h2c (prior knowledge). It counts the requests by protocol and the
// streams open at most.
type h2Server struct {
	url            string
	h2, other      atomic.Int64
	open, mostOpen atomic.Int64
	conns          atomic.Int64                                 // connections accepted
	handle         func(w http.ResponseWriter, r *http.Request) // nil: "ok" after 0..1ms
	maxStreams     uint32
	tls, noH2      bool
}

func startH2Server(t *testing.T, s *h2Server) *h2Server {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 {
			s.h2.Add(1)
		} else {
			s.other.Add(1)
		}
		n := s.open.Add(1)
		defer s.open.Add(-1)
		for m := s.mostOpen.Load(); n > m && !s.mostOpen.CompareAndSwap(m, n); m = s.mostOpen.Load() {
		}
		if s.handle != nil {
			s.handle(w, r)
			return
		}
		time.Sleep(time.Duration(rand.IntN(1000)) * time.Microsecond) // streams end out of order
		w.Write([]byte("ok"))
	})
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetHTTP2(s.tls && !s.noH2)
	srv.Config.Protocols.SetUnencryptedHTTP2(!s.tls && !s.noH2)
	if s.maxStreams > 0 {
		srv.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: int(s.maxStreams)}
	}
	if s.tls {
		srv.EnableHTTP2 = !s.noH2
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

func h2Config(t *testing.T, s *h2Server) Config {
	t.Helper()
	cfg := DefaultConfig()
	if err := cfg.SetURL(s.url + "/ok"); err != nil {
		t.Fatal(err)
	}
	if cfg.TLS != nil {
		cfg.TLS.Insecure = true
	}
	cfg.HTTP2, cfg.Streams = true, 8
	cfg.Concurrency, cfg.Duration, cfg.StatsInterval, cfg.Timeout = 4, 500*time.Millisecond, 250*time.Millisecond, 5*time.Second
	return cfg
}

// HTTP/2 end to end against Go's servers, h2 and h2c, closed and open
// loop, streams ending out of order: every due request accounted for, and
// the server saw only HTTP/2.
func TestHTTP2Run(t *testing.T) {
	tests := []struct {
		name string
		tls  bool
		set  func(*Config)
	}{
		{"h2 closed loop", true, func(c *Config) {}},
		{"h2c closed loop", false, func(c *Config) {}},
		{"h2 one stream", true, func(c *Config) { c.Streams = 1 }},
		{"h2c open loop", false, func(c *Config) { c.Rate, c.Warmup = 2000, 200*time.Millisecond }},
		{"h2 open loop", true, func(c *Config) { c.Rate, c.Warmup = 2000, 200*time.Millisecond }},
		{"h2c churn", false, func(c *Config) { c.RequestsPerConn = 20 }},
		{"h2 POST", true, func(c *Config) { c.Method, c.Body = "POST", []byte(`{"x":1}`) }},
		// A warm-up, so the connections are up before the window: at load
		// 15 none had come up within a 0.5 s window, and nothing was due.
		{"h2c POST of 200 KiB, past the windows", false, func(c *Config) {
			c.Method, c.Body, c.Warmup = "POST", make([]byte, 200<<10), 500*time.Millisecond
		}},
		{"h2c two threads", false, func(c *Config) { c.NetworkThreads = 2 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startH2Server(t, &h2Server{tls: tt.tls})
			cfg := h2Config(t, s)
			tt.set(&cfg)
			_, res, out := runJudged(t, cfg, "")
			checkAccounting(t, res)
			if res.Answered == 0 || res.Errors != 0 || res.Unfinished+res.Dropped != 0 {
				t.Fatalf("answered %d, errors %v, unfinished %d, dropped %d\n%s", res.Answered, res.ErrorsByKind, res.Unfinished, res.Dropped, out)
			}
			for _, w := range res.Warnings {
				if strings.Contains(w, "mismatch") {
					t.Errorf("warning: %s", w)
				}
			}
			if s.other.Load() != 0 || s.h2.Load() < res.Answered {
				t.Errorf("the server saw %d HTTP/2 and %d other requests; %d answered", s.h2.Load(), s.other.Load(), res.Answered)
			}
			if want := map[bool]string{true: "h2", false: "h2c"}[tt.tls]; res.Protocol != want || !strings.Contains(out, "protocol      HTTP/2 ("+want+")") {
				t.Errorf("protocol %q, want %q", res.Protocol, want)
			}
			if tt.tls && (res.TLS == nil || res.TLS.ALPN != "h2") {
				t.Errorf("tls %+v", res.TLS)
			}
			if most := s.mostOpen.Load(); most > int64(cfg.Streams*cfg.Concurrency) {
				t.Errorf("%d requests open at once at the server, want at most %d", most, cfg.Streams*cfg.Concurrency)
			}
		})
	}
}

// A connection whose stream identifiers run out (2^30 streams: the last
// odd 31-bit identifier) opens no new stream, is retired once its streams
// end, and a fresh connection goes on (RFC 9113 §5.1.1); here it runs out
// after 5 streams. Nothing is lost or failed on the way.
func TestHTTP2StreamIDsRunOut(t *testing.T) {
	defer func(n int) { h2StreamIDs = n }(h2StreamIDs)
	h2StreamIDs = 5
	s := startH2Server(t, &h2Server{})
	cfg := h2Config(t, s)
	cfg.Concurrency, cfg.Streams = 1, 2
	_, res, out := runJudged(t, cfg, "")
	checkAccounting(t, res)
	if res.Answered < 20 || res.Errors != 0 || res.Unfinished+res.Dropped != 0 {
		t.Fatalf("answered %d, errors %v, unfinished %d, dropped %d\n%s", res.Answered, res.ErrorsByKind, res.Unfinished, res.Dropped, out)
	}
	if n := s.conns.Load(); n < res.Answered/5 {
		t.Errorf("%d connections for %d answered: want a new one at least every 5 streams", n, res.Answered)
	}
}

// The server's SETTINGS_MAX_CONCURRENT_STREAMS bounds the streams open on
// a connection, whatever --streams asks.
func TestHTTP2MaxConcurrentStreams(t *testing.T) {
	s := startH2Server(t, &h2Server{maxStreams: 2, handle: func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond)
	}})
	cfg := h2Config(t, s)
	cfg.Concurrency, cfg.Streams = 1, 16
	_, res, out := runJudged(t, cfg, "")
	checkAccounting(t, res)
	if res.Answered == 0 || res.Errors != 0 || s.mostOpen.Load() > 2 {
		t.Errorf("answered %d errors %v, most open %d (server allows 2)\n%s", res.Answered, res.ErrorsByKind, s.mostOpen.Load(), out)
	}
}

// Misbehaviour over HTTP/2: streams reset (a handler that aborts), a server
// that stops answering: each request still ends in exactly one count, and
// a reset stream fails alone, its connection going on.
func TestHTTP2Accounting(t *testing.T) {
	// By the count of requests, not the clock (a slow start must not move
	// the hold out of the window): 300 due in the warm-up, 1000 in the window.
	var n atomic.Int64
	stop := make(chan struct{})
	s := startH2Server(t, &h2Server{handle: func(w http.ResponseWriter, r *http.Request) {
		v := n.Add(1)
		if v > 1100 {
			select { // never answered while the run lasts
			case <-stop:
			case <-r.Context().Done():
			}
			return
		}
		if v%9 == 0 {
			panic(http.ErrAbortHandler) // RST_STREAM
		}
		time.Sleep(time.Duration(rand.IntN(500)) * time.Microsecond)
	}})
	defer close(stop)
	cfg := h2Config(t, s)
	cfg.Rate, cfg.Warmup, cfg.Duration, cfg.Drain = 1000, 300*time.Millisecond, time.Second, 300*time.Millisecond
	_, res, out := runJudged(t, cfg, "")
	checkAccounting(t, res)
	if res.Failed == 0 || res.ErrorsByKind["reset"] == 0 || res.Unfinished == 0 || res.Answered == 0 {
		t.Errorf("answered %d failed %d unfinished %d errors %v: want each\n%s", res.Answered, res.Failed, res.Unfinished, res.ErrorsByKind, out)
	}
	if due := res.Due; due < 980 || due > 1020 {
		t.Errorf("due %d, want about 1000", due)
	}
	if res.ConnectionsOpened > int64(cfg.Concurrency) {
		t.Errorf("%d connections opened: a reset stream should not cost its connection", res.ConnectionsOpened)
	}
}

// A server without HTTP/2 is refused before any load, in one line saying so.
func TestHTTP2NotOffered(t *testing.T) {
	for _, tlsOn := range []bool{true, false} {
		s := startH2Server(t, &h2Server{tls: tlsOn, noH2: true})
		cfg := h2Config(t, s)
		_, err := Run(t.Context(), cfg)
		// (h2c: an HTTP/1.1 server may take the preface for a request.)
		if err == nil || !strings.Contains(err.Error(), "HTTP/2") || strings.Contains(err.Error(), "\n") || tlsOn && s.other.Load()+s.h2.Load() != 0 {
			t.Errorf("tls %v: err %v, requests %d", tlsOn, err, s.other.Load()+s.h2.Load())
		}
	}
}

// h2FrameSpan finds whole frames in the bytes read so far (a header
// block's CONTINUATIONs are frames of their own).
func TestH2FrameSpan(t *testing.T) {
	frame := func(typ http2.FrameType, flags http2.Flags, payload int) []byte {
		b := []byte{byte(payload >> 16), byte(payload >> 8), byte(payload), byte(typ), byte(flags), 0, 0, 0, 1}
		return append(b, make([]byte, payload)...)
	}
	cat := func(bs ...[]byte) []byte {
		var out []byte
		for _, b := range bs {
			out = append(out, b...)
		}
		return out
	}
	data := frame(http2.FrameData, 0, 10)
	headers := frame(http2.FrameHeaders, http2.FlagHeadersEndHeaders, 5)
	open := frame(http2.FrameHeaders, 0, 5)
	cont := frame(http2.FrameContinuation, 0, 3)
	last := frame(http2.FrameContinuation, http2.FlagContinuationEndHeaders, 4)
	tests := []struct {
		name  string
		in    []byte
		total int
		ok    bool
	}{
		{"empty", nil, 0, false},
		{"part of a header", data[:5], 0, false},
		{"part of a payload", data[:15], 19, false},
		{"one frame", data, 19, true},
		{"one frame and more", cat(data, headers), 19, true},
		{"headers", headers, 14, true},
		{"headers before its continuation", cat(open, cont), 14, true},
		{"a continuation alone", cat(last, data), 13, true},
		{"too large", frame(http2.FrameData, 0, h2MaxFrame+1)[:9], -1, false},
	}
	for _, tt := range tests {
		total, ok := h2FrameSpan(tt.in)
		if ok != tt.ok || (tt.ok || tt.total < 0) && total != tt.total {
			t.Errorf("%s: total %d ok %v, want %d %v", tt.name, total, ok, tt.total, tt.ok)
		}
	}
}

// A listener that answers anything with garbage: the h2c preflight names
// what it got.
func TestHTTP2PreflightGarbage(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("SSH-2.0-x\r\n"))
			c.Close()
		}
	}()
	cfg := DefaultConfig()
	cfg.Port, cfg.HTTP2, cfg.Streams = ln.Addr().(*net.TCPAddr).Port, true, 1
	if _, err := Run(t.Context(), cfg); err == nil || !strings.Contains(err.Error(), `"SSH-2.0-x"`) {
		t.Errorf("err %v", err)
	}
}

// FuzzH2FrameSpan: any bytes: no panic, a whole span never runs past the
// data, and an incomplete one is incomplete in every prefix too.
func FuzzH2FrameSpan(f *testing.F) {
	f.Add([]byte{0, 0, 2, 1, 4, 0, 0, 0, 1, 0x88, 0x00})
	f.Add([]byte{0, 0, 1, 1, 0, 0, 0, 0, 1, 0x88, 0, 0, 0, 9, 4, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		total, ok := h2FrameSpan(data)
		if ok && (total < 9 || total > len(data)) {
			t.Fatalf("span %d of %d bytes", total, len(data))
		}
		if ok {
			if _, okPrefix := h2FrameSpan(data[:total-1]); okPrefix {
				t.Fatalf("a prefix one byte short is whole too")
			}
		}
	})
}

// Results of h2 runs over TLS read back and merge: the handshakes add up,
// the protocol and TLS stay named.
func TestMergeTLSAndHTTP2(t *testing.T) {
	s := startH2Server(t, &h2Server{tls: true})
	var inputs []result.MergeInput
	var handshakes int64
	for i := range 2 {
		cfg := h2Config(t, s)
		cfg.Duration = 300 * time.Millisecond
		res := runOK(t, cfg)
		var buf strings.Builder
		if err := result.WriteJSON(&buf, res); err != nil {
			t.Fatal(err)
		}
		back, err := result.ParseResult([]byte(buf.String()), "r.json")
		if err != nil {
			t.Fatal(err)
		}
		if back.TLS == nil || back.TLS.Hist() == nil || back.TLS.Hist().TotalCount() != res.TLS.Handshakes || back.Protocol != "h2" {
			t.Fatalf("read back: tls %+v protocol %q", back.TLS, back.Protocol)
		}
		handshakes += res.TLS.Handshakes
		inputs = append(inputs, result.MergeInput{Path: string(rune('a'+i)) + ".json", Result: back})
	}
	m, err := result.Merge(inputs)
	if err != nil {
		t.Fatal(err)
	}
	if m.TLS == nil || m.TLS.Handshakes != handshakes || m.TLS.Hist().TotalCount() != handshakes || m.TLS.ALPN != "h2" || m.Protocol != "h2" {
		t.Errorf("merged tls %+v protocol %q, want %d handshakes", m.TLS, m.Protocol, handshakes)
	}
}

// --check over HTTP/2 judges each stream's own response when it ends: its
// final status and header fields (not an interim response's, nor
// trailers'), however the block is split, and its body across DATA frames
// up to 1 MiB (the rest is not judged); a failing check fails the request
// with kind check.
func TestH2ChecksJudgeEachStream(t *testing.T) {
	type field = hpack.HeaderField
	headers := func(fr *http2.Framer, end bool, fields ...field) {
		var block bytes.Buffer
		enc := hpack.NewEncoder(&block)
		for _, f := range fields {
			enc.WriteField(f)
		}
		b := block.Bytes()
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: b[:len(b)/2], EndStream: end})
		fr.WriteContinuation(1, true, b[len(b)/2:])
	}
	ok, one := field{Name: ":status", Value: "200"}, field{Name: "x-a", Value: "one"}
	for _, tc := range []struct {
		name   string
		write  func(fr *http2.Framer)
		passed [3]bool // header, body, status
	}{
		{"a split block, the body in two frames", func(fr *http2.Framer) {
			headers(fr, false, ok, one)
			fr.WriteData(1, false, []byte("head-"))
			fr.WriteData(1, true, []byte("tail"))
		}, [3]bool{true, true, true}},
		{"an interim response's fields are not the response's", func(fr *http2.Framer) {
			headers(fr, false, field{Name: ":status", Value: "103"}, field{Name: "x-a", Value: "two"})
			headers(fr, false, ok, one)
			fr.WriteData(1, true, []byte("tail"))
		}, [3]bool{true, true, true}},
		{"trailers are not the response's fields", func(fr *http2.Framer) {
			headers(fr, false, ok, one)
			fr.WriteData(1, false, []byte("tail"))
			headers(fr, true, field{Name: "x-a", Value: "two"})
		}, [3]bool{true, true, true}},
		{"a body past 1 MiB is judged on its first MiB", func(fr *http2.Framer) {
			headers(fr, false, ok, one)
			fr.WriteData(1, false, make([]byte, 100)) // the frame that crosses the MiB has "tail" past it
			for range maxCheckedBody/h2MaxFrame - 1 {
				fr.WriteData(1, false, make([]byte, h2MaxFrame))
			}
			fr.WriteData(1, true, append(make([]byte, h2MaxFrame-4), "tail"...))
		}, [3]bool{true, false, true}},
		{"another status, no header", func(fr *http2.Framer) {
			headers(fr, true, field{Name: ":status", Value: "404"})
		}, [3]bool{false, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Checks = []string{`header[X-A] == "one"`, `body contains "tail"`, "status == 200"}
			th, c := newH2RenderThread(t, cfg)
			now := th.now()
			feed(th, c, h2Frames(func(fr *http2.Framer, _ *hpack.Encoder, _ *bytes.Buffer) {
				fr.WriteSettings()
			}), now)
			th.topUp(c, now)
			if c.inflight == 0 {
				t.Fatal("no request sent")
			}
			var out bytes.Buffer
			tc.write(http2.NewFramer(&out, nil))
			if !feed(th, c, out.Bytes(), now) {
				t.Fatal("the connection closed")
			}
			b := &th.acct.books
			if b.checkPass == nil {
				t.Fatal("no check judged")
			}
			allPass := true
			for i, want := range tc.passed {
				if got := b.checkPass[i] == 1 && b.checkFail[i] == 0; got != want {
					t.Errorf("check %s: passed %d, failed %d, want passed %v", cfg.Checks[i], b.checkPass[i], b.checkFail[i], want)
				}
				allPass = allPass && want
			}
			if failed := b.measured.failedBy[errCheck] == 1; failed == allPass || b.measured.requests != map[bool]int64{true: 1}[allPass] {
				t.Errorf("answered %d, failed by check %d: want the request %s", b.measured.requests, b.measured.failedBy[errCheck],
					map[bool]string{true: "answered", false: "failed"}[allPass])
			}
		})
	}
}
