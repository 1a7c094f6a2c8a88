package http1

import (
	"fmt"
	"testing"
)

// FuzzParse checks that Parse never panics, never claims more bytes than it
// was given, and parses a stream of pipelined requests the same whether the
// bytes arrive whole or in two pieces split anywhere.
func FuzzParse(f *testing.F) {
	for _, tc := range parseCases {
		f.Add([]byte(tc.in), uint16(len(tc.in)/2)|0x8000)
	}
	for _, tc := range hostCases {
		f.Add([]byte(tc.in), uint16(len(tc.in)/3))
	}
	f.Add([]byte(getOKRequest+getOKRequest), uint16(7))
	f.Add([]byte(chunkedRequest), uint16(90))
	f.Fuzz(func(t *testing.T, data []byte, split uint16) {
		if len(data) > 1<<14 {
			return
		}
		// The top bit of split picks the framing-only parser (Host not
		// required), so the corpus of framing cases reaches past the Host
		// check as well as into it.
		hostOptional := split&0x8000 != 0
		k := int(split&0x7fff) % (len(data) + 1)
		newParser := func() *Parser { p := fuzzParser(); p.hostOptional = hostOptional; return p }
		whole := parseStream(newParser(), data, []int{len(data)})
		for _, r := range whole {
			if r.Status < 0 {
				t.Fatalf("bad result %+v", r)
			}
		}
		pieces := parseStream(newParser(), data, []int{k, len(data)})
		if fmt.Sprint(pieces) != fmt.Sprint(whole) {
			t.Fatalf("split at %d:\n got %+v\nwant %+v", k, pieces, whole)
		}
	})
}

// fuzzParser has small limits, so the fuzzer reaches them.
func fuzzParser() *Parser {
	p := NewParser(600)
	p.SetMaxHeaderBytes(300)
	return p
}
