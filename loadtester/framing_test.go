package loadtester

import (
	"bufio"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The framing of a response as RFC 9112 §6.3 has a client find its body's
// length, rule by rule, each response fed split at every byte (and a byte at
// a time), the way the loop delivers it.
//
// untilClose: after the whole stream the parser still waits for the
// server's close, which ends one more response (on a connection never
// reused: close is set).
func TestResponseFramingRFC9112(t *testing.T) {
	const ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
	tests := []struct {
		rule       string
		stream     string
		headOnly   bool
		want       []parsed
		untilClose bool
		wantErr    bool
	}{
		// §6.3 rule 1: HEAD, 1xx, 204 and 304 end at the header block.
		{"1: HEAD ignores Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n" + "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", true, []parsed{{200, false}, {200, false}}, false, false},
		{"1: HEAD ignores chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + "HTTP/1.1 200 OK\r\n\r\n", true, []parsed{{200, false}, {200, false}}, false, false},
		{"1: 100 then final", "HTTP/1.1 100 Continue\r\n\r\n" + ok, false, []parsed{{200, false}}, false, false},
		{"1: 103 with headers then final", "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\nContent-Length: 5\r\n\r\n" + ok, false, []parsed{{200, false}}, false, false},
		{"1: 204 ignores Content-Length", "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n" + ok, false, []parsed{{204, false}, {200, false}}, false, false},
		{"1: 304 ignores Content-Length", "HTTP/1.1 304 Not Modified\r\nContent-Length: 7\r\n\r\n" + ok, false, []parsed{{304, false}, {200, false}}, false, false},
		{"1: 304 ignores chunked", "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n" + ok, false, []parsed{{304, false}, {200, false}}, false, false},
		// Rule 3: a final coding of chunked frames a chunked body; any other
		// final coding reads until the server closes.
		{"3: chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n" + ok, false, []parsed{{200, false}, {200, false}}, false, false},
		{"3: chunked, any case, OWS", "HTTP/1.1 200 OK\r\nTransfer-Encoding: \t ChUnKeD \t\r\n\r\n0\r\n\r\n" + ok, false, []parsed{{200, false}, {200, false}}, false, false},
		{"3: gzip, chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip ,chunked\r\n\r\n0\r\n\r\n" + ok, false, []parsed{{200, false}, {200, false}}, false, false},
		{"3: chunked then empty list elements", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, ,\r\n\r\n0\r\n\r\n" + ok, false, []parsed{{200, false}, {200, false}}, false, false},
		{"3: codings over two lines, chunked last", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + ok, false, []parsed{{200, false}, {200, false}}, false, false},
		{"3: chunked overrides Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n" + ok, false, []parsed{{200, false}, {200, false}}, false, false},
		{"3: chunkedchunked is not chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunkedchunked\r\n\r\n0\r\n\r\n" + ok, false, nil, true, false},
		{"3: xchunked is not chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n", false, nil, true, false},
		{"3: gzip final", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n" + ok, false, nil, true, false},
		{"3: chunked, gzip", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n", false, nil, true, false},
		{"3: chunked line then gzip line", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n0\r\n\r\n", false, nil, true, false},
		{"3: chunked with a parameter", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked;x=1\r\n\r\n0\r\n\r\n", false, nil, true, false},
		{"3: other final coding overrides Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: gzip\r\n\r\n" + ok, false, nil, true, false},
		// Rule 5: a valid Content-Length; a list of one value repeated is that value.
		{"5: Content-Length", ok + ok, false, []parsed{{200, false}, {200, false}}, false, false},
		{"5: Content-Length 0", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n" + ok, false, []parsed{{200, false}, {200, false}}, false, false},
		{"5: repeated in a list", "HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok" + ok, false, []parsed{{200, false}, {200, false}}, false, false},
		{"5: repeated over two lines", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\ncontent-length: 2\r\n\r\nok" + ok, false, []parsed{{200, false}, {200, false}}, false, false},
		// Rule 4: without Transfer-Encoding, an invalid Content-Length is an error.
		{"4: conflicting lines", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok", false, nil, false, true},
		{"4: conflicting list", "HTTP/1.1 200 OK\r\nContent-Length: 2, 3\r\n\r\nok", false, nil, false, true},
		{"4: not a number", "HTTP/1.1 200 OK\r\nContent-Length: two\r\n\r\nok", false, nil, false, true},
		{"4: signed", "HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok", false, nil, false, true},
		{"4: negative", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", false, nil, false, true},
		{"4: empty", "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n", false, nil, false, true},
		{"4: empty list element", "HTTP/1.1 200 OK\r\nContent-Length: 2,\r\n\r\nok", false, nil, false, true},
		// Rule 7 (a response): neither header, the body runs until the close.
		{"7: no length", "HTTP/1.1 200 OK\r\n\r\n" + ok, false, nil, true, false},
		{"7: no length, HTTP/1.0", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\nbody", false, nil, true, false},
		// §6.1: Transfer-Encoding in an HTTP/1.0 response: framed by it, and
		// the connection is not reused.
		{"6.1: chunked in HTTP/1.0", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", false, []parsed{{200, true}}, false, false},
	}
	for _, tt := range tests {
		for split := 0; split <= len(tt.stream); split++ {
			for _, chunk := range []int{1 << 20, 1} {
				name := fmt.Sprintf("%s/split %d/chunk %d", tt.rule, split, chunk)
				p := respParser{headOnly: tt.headOnly}
				got, err := parseSplit(&p, []byte(tt.stream), split, chunk)
				if (err != nil) != tt.wantErr {
					t.Fatalf("%s: err %v, wantErr %v", name, err, tt.wantErr)
				}
				if tt.wantErr {
					continue
				}
				if !equalParsed(got, tt.want) {
					t.Fatalf("%s: got %v, want %v", name, got, tt.want)
				}
				if eof := p.finishAtEOF(); eof != tt.untilClose {
					t.Fatalf("%s: the close ends a response: %v, want %v", name, eof, tt.untilClose)
				}
				if tt.untilClose && !p.close {
					t.Fatalf("%s: a body read until the close must not leave the connection for reuse", name)
				}
			}
		}
	}
}

// parseSplit feeds stream[:split] and then stream[split:], each in pieces
// of at most chunk bytes, keeping an incomplete head between pieces as the
// loop does.
func parseSplit(p *respParser, stream []byte, split, chunk int) ([]parsed, error) {
	var out []parsed
	var partial []byte
	for _, part := range [][]byte{stream[:split], stream[split:]} {
		for len(part) > 0 {
			n := min(chunk, len(part))
			data := append(partial, part[:n]...)
			part = part[n:]
			partial = nil
			for len(data) > 0 {
				used, done, err := p.feed(data)
				if err != nil {
					return out, err
				}
				data = data[used:]
				if done {
					out = append(out, parsed{p.status, p.close})
					continue
				}
				if used == 0 {
					partial = append([]byte(nil), data...)
					break
				}
			}
		}
	}
	return out, nil
}

// TestFinalCodingNotChunkedEndsAtClose: a response whose final coding only
// ends in the letters "chunked" has its body run until the server closes,
// so the client sends nothing more on that connection (it used to read
// "0\r\n\r\n" as the chunked end and send on).
func TestFinalCodingNotChunkedEndsAtClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var most, answered atomic.Int64
	var wg sync.WaitGroup
	defer wg.Wait()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				r := bufio.NewReader(c)
				c.SetReadDeadline(time.Now().Add(150 * time.Millisecond))
				n := int64(0)
				for {
					if _, _, err := readRequestLine(r); err != nil {
						break
					}
					if n++; n == 1 {
						c.Write([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunkedchunked\r\n\r\n0\r\n\r\n"))
						answered.Add(1)
					}
				}
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
			}()
		}
	}()
	cfg := DefaultConfig()
	cfg.Port = ln.Addr().(*net.TCPAddr).Port
	cfg.Concurrency, cfg.Duration, cfg.Timeout = 2, 400*time.Millisecond, 2*time.Second
	cfg.StatsInterval = 100 * time.Millisecond
	res := runOK(t, cfg)
	if got := most.Load(); got != 1 {
		t.Errorf("most requests on one connection %d, want 1 (the body runs until the close)", got)
	}
	if res.Requests == 0 || res.Errors != 0 {
		t.Errorf("requests %d errors %v: each response should complete at the close", res.Requests, res.ErrorsByKind)
	}
}
