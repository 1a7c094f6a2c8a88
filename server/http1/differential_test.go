package http1

import (
	"bytes"
	"fmt"
	"testing"
)

// refParser is the parser before its rewrite (oldparser_test.go); these tests
// hold the rewrite to it call by call.

// parseCall is everything one Parse call tells its caller: its results, the
// request's every field (content, nil-ness and capacity, since fields are
// capacity-limited) and the parser's answers about the request in progress.
type parseCall struct {
	N                               int
	Err                             *Error
	Req                             string
	HeadDone, WantsContinue, IsHead bool
}

func describeField(b []byte) string {
	if b == nil {
		return "nil"
	}
	return fmt.Sprintf("%q/cap=%d", b, cap(b)-len(b))
}

func describeRequest(r *Request) string {
	return fmt.Sprintf("M=%s T=%s P=%s Q=%s V=%d KA=%t ID=%s CT=%s CL=%d CH=%t EC=%t B=%s RH=%s",
		describeField(r.Method), describeField(r.Target), describeField(r.Path), describeField(r.Query),
		r.Version, r.KeepAlive, describeField(r.RequestID), describeField(r.ContentType),
		r.ContentLength, r.Chunked, r.ExpectContinue, describeField(r.Body), describeField(r.RawHeaders))
}

// anyParser is what both parsers offer.
type anyParser interface {
	Parse(buf []byte, req *Request) (int, error)
	HeadDone() bool
	WantsContinue() bool
	RefusedHead() bool
}

// feed gives p the bytes of data as a server would: the buffer holds what
// arrived up to each cut (cuts may go back, as a caller that drops bytes
// would), requests are consumed as they complete, and parsing stops at the
// first refusal.
func feed(p anyParser, data []byte, cuts []int) []parseCall {
	var out []parseCall
	var req Request
	start := 0
	for _, cut := range cuts {
		if cut < start {
			cut = start
		}
		received := append([]byte(nil), data[:cut]...)
		for start <= len(received) {
			req = Request{}
			n, err := p.Parse(received[start:], &req)
			call := parseCall{N: n, HeadDone: p.HeadDone(), WantsContinue: p.WantsContinue()}
			if err != nil {
				call.Err = err.(*Error)
				call.IsHead = p.RefusedHead()
			}
			if n > 0 {
				call.Req = describeRequest(&req)
			}
			out = append(out, call)
			if err != nil {
				return out
			}
			if n == 0 {
				break
			}
			start += n
		}
	}
	return out
}

// cutsFrom turns seed into up to eight cut points of data (the last one is
// always the whole of it); mode 3 gives every byte alone.
func cutsFrom(n int, seed uint64, mode uint8) []int {
	if mode&3 == 3 && n <= 512 {
		cuts := make([]int, 0, n+1)
		for i := 0; i <= n; i++ {
			cuts = append(cuts, i)
		}
		return cuts
	}
	var cuts []int
	for k := int(mode & 7); k > 0 && seed != 0; k-- {
		cuts = append(cuts, int(seed%uint64(n+1)))
		seed /= uint64(n + 1)
	}
	return append(cuts, n)
}

// limitsFrom picks the parsers' limits: small ones reach the 413, 414 and
// 431 refusals with short inputs.
func limitsFrom(mode uint8) (maxRequest, maxHeader int, hostOptional bool) {
	hostOptional = mode&0x80 != 0
	switch (mode >> 4) & 3 {
	case 0:
		return 600, 300, hostOptional
	case 1:
		return 4096, 1024, hostOptional
	case 2:
		return 64, 48, hostOptional
	}
	return 0, 0, hostOptional
}

func compareParsers(t *testing.T, data []byte, seed uint64, mode uint8) {
	t.Helper()
	maxRequest, maxHeader, hostOptional := limitsFrom(mode)
	np := NewParser(maxRequest)
	rp := refNewParser(maxRequest)
	if maxHeader > 0 {
		np.SetMaxHeaderBytes(maxHeader)
		rp.SetMaxHeaderBytes(maxHeader)
	}
	np.hostOptional, rp.hostOptional = hostOptional, hostOptional
	cuts := cutsFrom(len(data), seed, mode)
	got, want := feed(np, data, cuts), feed(rp, data, cuts)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("input %q, cuts %v, limits %d/%d host optional %t:\n got %+v\nwant %+v",
			data, cuts, maxRequest, maxHeader, hostOptional, got, want)
	}
}

// differentialSeeds are the inputs of every table of this package's tests,
// alone and pipelined behind a plain request.
func differentialSeeds() [][]byte {
	var seeds [][]byte
	for _, tc := range parseCases {
		seeds = append(seeds, []byte(tc.in))
	}
	for _, tc := range hostCases {
		seeds = append(seeds, []byte(tc.in))
	}
	seeds = append(seeds, []byte(getOKRequest), []byte(chunkedRequest), []byte(gateOKRequest),
		bytes.Repeat([]byte(gateOKRequest), 3),
		[]byte("POST /v1/commit HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nExpect: 100-continue\r\nConnection: keep-alive, close\r\n\r\nhello"),
		[]byte("HEAD http://h/x?y HTTP/1.0\r\nConnection: keep-alive\r\nX-Request-Id: \t a b\t\r\nContent-Type: text/plain\r\n\r\n"),
		[]byte("\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n"),
		// Every kind of byte a value may or may not hold, before, at and
		// after eight bytes into it (the one-pass reader takes eight at once).
		[]byte("GET / HTTP/1.1\r\nHost: a\x7fb\r\nX: 0123456789\t\x80\xff 01234\x7f5\r\n\r\n"),
		[]byte("GET / HTTP/1.1\r\nHost: 01234567\x00\r\nX: 01234567890\rx\r\n\r\n"),
		[]byte("GET / HTTP/1.1\r\nHost: 0123456789abcdef\x1f\r\nX: a\nb\r\n\r\n"),
		[]byte("GET /a?b?c HTTP/1.1\r\nHost:\t0123456789abcdef\t \r\nX:\r\nY: \r\n\r\n"),
		// Targets longer than a word, with a byte to refuse or a '?' past it.
		[]byte("GET /0123456789\x7fabc HTTP/1.1\r\nHost: a\r\n\r\n"),
		[]byte("GET /0123456789?ab?cdefghi\x80 HTTP/1.1\r\nHost: a\r\n\r\n"),
		[]byte("GET /0123456789abcdef?q=0123456789\x00 HTTP/1.1\r\nHost: a\r\n\r\n"),
		[]byte("GET /v1/status?request_id=gate-status-7-0000000 HTTP/1.1\r\nHost: a\r\n\r\n"),
		[]byte("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3;a=\"q\\\"\" ; b\r\nabc\r\n0\r\nT: v\r\n\r\n"),
	)
	return seeds
}

func TestParserMatchesReference(t *testing.T) {
	for _, data := range differentialSeeds() {
		// Each set of limits, Host required or not, and three ways to cut:
		// one cut, every byte alone, six cuts.
		for _, limits := range []uint8{0x00, 0x10, 0x20, 0x30, 0x80, 0x90, 0xa0, 0xb0} {
			for _, cuts := range []uint8{1, 3, 6} {
				mode := limits | cuts
				compareParsers(t, data, 0x9e3779b97f4a7c15, mode)
				compareParsers(t, append(append([]byte(gateOKRequest), data...), gateOKRequest...), 12345, mode)
			}
		}
	}
}

// FuzzParserMatchesReference feeds the same bytes, split at the same points
// and pipelined, to the parser and to its reference, and requires the same
// answer from every call.
func FuzzParserMatchesReference(f *testing.F) {
	for i, data := range differentialSeeds() {
		f.Add(data, uint64(i)*0x9e3779b97f4a7c15, uint8(i*37))
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64, mode uint8) {
		if len(data) > 1<<13 {
			return
		}
		compareParsers(t, data, seed, mode)
	})
}
