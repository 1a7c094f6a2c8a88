package loadtester

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

type parsed struct {
	status int
	close  bool
}

// parseAll feeds stream in pieces of at most chunk bytes, the way the loop
// does (keeping an incomplete head and extending it), and returns the
// responses it completed, whether it ended mid-response, and any error.
func parseAll(p *respParser, stream []byte, chunk int) (out []parsed, err error) {
	return parseAllMemo(p, stream, chunk, true)
}

// parseAllMemo is parseAll; without memo the parser forgets the last
// header block before every feed, so each is parsed line by line (the
// reference the memo must agree with).
func parseAllMemo(p *respParser, stream []byte, chunk int, memo bool) (out []parsed, err error) {
	var partial []byte
	for len(stream) > 0 {
		n := min(chunk, len(stream))
		data := append(partial, stream[:n]...)
		stream = stream[n:]
		partial = nil
		for len(data) > 0 {
			if !memo {
				p.memo = headerMemo{}
			}
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
	return out, nil
}

func TestResponseParser(t *testing.T) {
	tests := []struct {
		name     string
		stream   string
		headOnly bool
		want     []parsed
		wantErr  bool
	}{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false, []parsed{{200, false}}, false},
		{"pipelined", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n", false, []parsed{{200, false}, {404, false}}, false},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\nA\r\n0123456789\r\n0\r\nTrailer: v\r\n\r\n", false, []parsed{{200, false}}, false},
		{"connection close", "HTTP/1.1 503 Busy\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx", false, []parsed{{503, true}}, false},
		{"http/1.0 default close", "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false, []parsed{{200, true}}, false},
		{"http/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n", false, []parsed{{200, false}}, false},
		{"no reason phrase", "HTTP/1.1 204\r\n\r\n", false, []parsed{{204, false}}, false},
		{"interim 100", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", false, []parsed{{201, false}}, false},
		{"head", "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", true, []parsed{{200, false}, {200, false}}, false},
		{"bare LF", "HTTP/1.1 200 OK\nContent-Length: 1\n\nx", false, []parsed{{200, false}}, false},
		{"not http", "SSH-2.0-OpenSSH\r\n\r\n", false, nil, true},
		{"bad status", "HTTP/1.1 2x0 OK\r\n\r\n", false, nil, true},
		{"bad length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", false, nil, true},
		{"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", false, nil, true},
		{"chunk without CRLF", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nxyz", false, nil, true},
		{"header without colon", "HTTP/1.1 200 OK\r\nBroken\r\n\r\n", false, nil, true},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 3, 7, 1 << 20} {
			p := respParser{headOnly: tt.headOnly}
			got, err := parseAll(&p, []byte(tt.stream), chunk)
			if (err != nil) != tt.wantErr {
				t.Errorf("%s/chunk %d: err %v, wantErr %v", tt.name, chunk, err, tt.wantErr)
				continue
			}
			if !tt.wantErr && !equalParsed(got, tt.want) {
				t.Errorf("%s/chunk %d: got %v, want %v", tt.name, chunk, got, tt.want)
			}
		}
	}
}

func equalParsed(a, b []parsed) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestResponseParserUntilClose(t *testing.T) {
	p := respParser{}
	got, err := parseAll(&p, []byte("HTTP/1.1 200 OK\r\n\r\nbody of unknown length"), 4)
	if err != nil || len(got) != 0 {
		t.Fatalf("got %v err %v before EOF", got, err)
	}
	if !p.finishAtEOF() || !p.close {
		t.Fatalf("EOF should end a body without length and mark the connection closing")
	}
}

func TestResponseParserHeaderTooLarge(t *testing.T) {
	p := respParser{}
	head := append([]byte("HTTP/1.1 200 OK\r\nX: "), bytes.Repeat([]byte("a"), maxHeaderBytes)...)
	if _, _, err := p.feed(head); err == nil {
		t.Fatalf("a %d-byte head without end should fail", len(head))
	}
}

func TestResponseParserAllocatesNothing(t *testing.T) {
	resp := []byte("HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/plain\r\nContent-Length: 15\r\nConnection: keep-alive\r\n\r\n{\"status\":\"ok\"}")
	p := respParser{}
	allocs := testing.AllocsPerRun(1000, func() {
		if _, done, err := p.feed(resp); !done || err != nil {
			t.Fatal("parse failed")
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per response, want 0", allocs)
	}
}

// FuzzResponseParser: any bytes in any split never panic, and a split stream
// parses to the same responses as the whole.
func FuzzResponseParser(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"), uint8(3))
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"), uint8(1))
	f.Add([]byte("HTTP/1.0 100 Continue\r\n\r\nHTTP/1.1 204\r\n\r\n"), uint8(5))
	f.Fuzz(func(t *testing.T, stream []byte, chunk uint8) {
		whole, errWhole := parseAll(&respParser{}, stream, len(stream)+1)
		split, errSplit := parseAll(&respParser{}, stream, int(chunk)+1)
		if (errWhole == nil) != (errSplit == nil) {
			// A split may stop at an error the whole stream reaches later
			// (or vice versa) only if the responses before it agree.
			if len(whole) > len(split) {
				whole = whole[:len(split)]
			} else {
				split = split[:len(whole)]
			}
		}
		if errWhole == nil && errSplit == nil && !equalParsed(whole, split) {
			t.Fatalf("whole %v, split by %d %v", whole, int(chunk)+1, split)
		}
		// The last header block's memo changes nothing: the stream read
		// with it (twice over, so every block repeats) parses as without.
		twice := append(append([]byte(nil), stream...), stream...)
		for _, c := range []int{len(twice) + 1, int(chunk) + 1} {
			with, errWith := parseAllMemo(&respParser{}, twice, c, true)
			without, errWithout := parseAllMemo(&respParser{}, twice, c, false)
			if (errWith == nil) != (errWithout == nil) || !equalParsed(with, without) {
				t.Fatalf("split by %d: with the memo %v (%v), without %v (%v)", c, with, errWith, without, errWithout)
			}
		}
	})
}

// A header block that repeats the last one is reused (the memo), and one
// that differs in any byte, or came cut short, is parsed anew: what the
// checks read (the header lines) and the body's framing follow each block.
func TestResponseParserMemo(t *testing.T) {
	const ok15 = "HTTP/1.1 200 OK\r\nX-Id: 7\r\nContent-Length: 15\r\n\r\n{\"status\":\"ok\"}"
	cases := []struct {
		name     string
		stream   string
		headOnly bool
		want     []parsed
		heads    []string // the header lines the checks saw, per response
	}{
		{"the same block three times", ok15 + ok15 + ok15, false, []parsed{{200, false}, {200, false}, {200, false}},
			[]string{"X-Id: 7\r\nContent-Length: 15\r\n\r\n", "X-Id: 7\r\nContent-Length: 15\r\n\r\n", "X-Id: 7\r\nContent-Length: 15\r\n\r\n"}},
		{"a longer length after a shorter", ok15 + "HTTP/1.1 200 OK\r\nX-Id: 7\r\nContent-Length: 150\r\n\r\n" + string(bytes.Repeat([]byte("x"), 150)) + ok15,
			false, []parsed{{200, false}, {200, false}, {200, false}}, nil},
		{"a close after the same status", ok15 + "HTTP/1.1 200 OK\r\nX-Id: 7\r\nContent-Length: 15\r\nConnection: close\r\n\r\n{\"status\":\"ok\"}",
			false, []parsed{{200, false}, {200, true}}, nil},
		{"another header value", ok15 + "HTTP/1.1 200 OK\r\nX-Id: 8\r\nContent-Length: 15\r\n\r\n{\"status\":\"ok\"}", false,
			[]parsed{{200, false}, {200, false}}, []string{"X-Id: 7\r\nContent-Length: 15\r\n\r\n", "X-Id: 8\r\nContent-Length: 15\r\n\r\n"}},
		{"blocks that keep changing, then repeat", func() string {
			var b strings.Builder
			for i := range 2*memoMisses + 3 {
				fmt.Fprintf(&b, "HTTP/1.1 200 OK\r\nX-Id: %d\r\nContent-Length: 1\r\n\r\nx", i)
			}
			return b.String() + ok15 + ok15
		}(), false, nil, nil},
		{"HEAD: no body either time", "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n", true,
			[]parsed{{200, false}, {200, false}}, nil},
	}
	for _, c := range cases {
		for _, chunk := range []int{1, 5, 1 << 20} {
			p := respParser{headOnly: c.headOnly, keepHead: true}
			var heads []string
			var got []parsed
			data := []byte(c.stream)
			var partial []byte
			for len(data) > 0 {
				n := min(chunk, len(data))
				buf := append(partial, data[:n]...)
				data, partial = data[n:], nil
				for len(buf) > 0 {
					used, done, err := p.feed(buf)
					if err != nil {
						t.Fatalf("%s/chunk %d: %v", c.name, chunk, err)
					}
					buf = buf[used:]
					if done {
						got = append(got, parsed{p.status, p.close})
						heads = append(heads, string(p.head))
						continue
					}
					if used == 0 {
						partial = append([]byte(nil), buf...)
						break
					}
				}
			}
			if c.want == nil { // every response a 200 that stays open
				c.want = make([]parsed, strings.Count(c.stream, "HTTP/1.1 200"))
				for i := range c.want {
					c.want[i] = parsed{200, false}
				}
			}
			if !equalParsed(got, c.want) {
				t.Errorf("%s/chunk %d: %v, want %v", c.name, chunk, got, c.want)
			}
			for i, h := range c.heads {
				if i >= len(heads) || heads[i] != h {
					t.Errorf("%s/chunk %d: the checks saw header lines %q, want %q at %d", c.name, chunk, heads, h, i)
					break
				}
			}
		}
	}
}

func BenchmarkResponseParser(b *testing.B) {
	resp := []byte("HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Mon, 30 Nov 2026 01:27:44 GMT\r\nContent-Type: text/plain\r\nContent-Length: 15\r\nConnection: keep-alive\r\n\r\n{\"status\":\"ok\"}")
	p := respParser{}
	b.SetBytes(int64(len(resp)))
	for b.Loop() {
		p.feed(resp)
	}
}

// BenchmarkResponseParserChanging: every response's header block differs
// from the last (a request id), so the memo never hits: what it costs
// where it cannot help.
func BenchmarkResponseParserChanging(b *testing.B) {
	resps := [][]byte{
		[]byte("HTTP/1.1 200 OK\r\nX-Request-Id: 1\r\nContent-Length: 15\r\n\r\n{\"status\":\"ok\"}"),
		[]byte("HTTP/1.1 200 OK\r\nX-Request-Id: 2\r\nContent-Length: 15\r\n\r\n{\"status\":\"ok\"}"),
	}
	p := respParser{}
	i := 0
	for b.Loop() {
		p.feed(resps[i&1])
		i++
	}
}
