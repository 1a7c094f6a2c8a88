package http1

import (
	"fmt"
	"strings"
	"testing"
)

// chunkLineCases are chunk-size lines (without their CRLF) against RFC
// 9112 §7.1's grammar: size is the chunk size, or -1 for a 400.
var chunkLineCases = []struct {
	name string
	line string
	size int64
}{
	{"size alone", "5", 5},
	{"upper and lower hex", "aB", 0xab},
	{"15 hex digits", "00000000000000f", 15},
	{"name", "5;x", 5},
	{"name and token value", "5;name=value", 5},
	{"two extensions", "5;a=1;b", 5},
	{"BWS before semicolon", "5 \t;x", 5},
	{"BWS after semicolon", "5; \tx", 5},
	{"BWS around equals", "5;x \t= \ty", 5},
	{"BWS everywhere", "5 ; a = 1 ; b ; c = \"q\"", 5},
	{"quoted value", "5;x=\"y z\"", 5},
	{"quoted value with specials", "5;x=\"(a),;=b\"", 5},
	{"quoted empty", "5;x=\"\"", 5},
	{"quoted pair", "5;x=\"a\\\"b\\\\\"", 5},
	{"quoted obs-text", "5;x=\"\x80\xff\"", 5},
	{"token specials in name", "5;!#$%&'*+-.^_`|~=v", 5},

	{"empty", "", -1},
	{"not hex", "zz", -1},
	{"16 hex digits", "0000000000000005", -1},
	{"leading space", " 5", -1},
	{"trailing space", "5 ", -1},
	{"trailing tab", "5\t", -1},
	{"space then text", "5 x", -1},
	{"text after size", "5x", -1},
	{"empty name", "5;", -1},
	{"empty name before next", "5;;x", -1},
	{"empty name with BWS", "5; ", -1},
	{"empty name with value", "5;=v", -1},
	{"non-token name", "5;(x)", -1},
	{"name with slash", "5;a/b", -1},
	{"space inside name", "5;a b", -1},
	{"trailing space after name", "5;x ", -1},
	{"trailing space after value", "5;x=y ", -1},
	{"trailing space after quoted", "5;x=\"y\" ", -1},
	{"equals without value", "5;x=", -1},
	{"equals, BWS, no value", "5;x= ", -1},
	{"non-token value", "5;x=a/b", -1},
	{"value then junk", "5;x=y z", -1},
	{"unterminated quote", "5;x=\"abc", -1},
	{"quote ends in backslash", "5;x=\"abc\\", -1},
	{"quoted control char", "5;x=\"a\x01\"", -1},
	{"quoted DEL", "5;x=\"a\x7f\"", -1},
	{"quoted pair control char", "5;x=\"\\\x01\"", -1},
	{"junk after quoted", "5;x=\"y\"z", -1},
	{"control char in name", "5;a\x01", -1},
	{"NUL", "5\x00", -1},
	{"comma", "5,x", -1},
}

func TestChunkSizeLine(t *testing.T) {
	for _, tc := range chunkLineCases {
		t.Run(tc.name, func(t *testing.T) {
			n, err := chunkSize([]byte(tc.line))
			switch {
			case tc.size < 0 && err == nil:
				t.Fatalf("chunkSize(%q) = %d, want 400", tc.line, n)
			case tc.size < 0 && err.Status != 400:
				t.Fatalf("chunkSize(%q): status %d, want 400", tc.line, err.Status)
			case tc.size >= 0 && err != nil:
				t.Fatalf("chunkSize(%q): %v, want %d", tc.line, err, tc.size)
			case tc.size >= 0 && n != tc.size:
				t.Fatalf("chunkSize(%q) = %d, want %d", tc.line, n, tc.size)
			}
		})
	}
}

// chunkedWith is a whole chunked request whose first chunk-size line is line
// and whose first chunk carries size bytes.
func chunkedWith(line string, size int64) string {
	body := ""
	if size > 0 {
		body = strings.Repeat("x", int(size)) + "\r\n0\r\n"
	}
	return "POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + line + "\r\n" + body + "\r\n"
}

// Through the parser, each line inside a request split at every byte gives
// the same verdict as the line alone: 400, or the body it announces.
func TestChunkSizeLineSplitAnywhere(t *testing.T) {
	for _, tc := range chunkLineCases {
		t.Run(tc.name, func(t *testing.T) {
			size := tc.size
			if size < 0 {
				size = 5 // a body a lax parser would read
			}
			in := []byte(chunkedWith(tc.line, size))
			for k := 0; k <= len(in); k++ {
				got := parseStream(newTestParser(), in, []int{k, len(in)})
				if len(got) != 1 {
					t.Fatalf("split at %d: %d results %+v, want 1", k, len(got), got)
				}
				switch {
				case tc.size < 0 && got[0].Status != 400:
					t.Fatalf("split at %d: %+v, want 400", k, got[0])
				case tc.size >= 0 && (got[0].Status != 0 || got[0].Body != strings.Repeat("x", int(size))):
					t.Fatalf("split at %d: %+v, want body of %d bytes", k, got[0], size)
				}
			}
		})
	}
}

// FuzzChunkSizeLine checks that the chunk-size line never panics, that an
// accepted line announces the size its hex digits say, and that the parser
// gives the same verdict inside a request, whole or split anywhere.
func FuzzChunkSizeLine(f *testing.F) {
	for _, tc := range chunkLineCases {
		f.Add(tc.line, uint16(len(tc.line)))
	}
	f.Fuzz(func(t *testing.T, line string, split uint16) {
		if len(line) > 512 || strings.ContainsAny(line, "\r\n") {
			return
		}
		n, err := chunkSize([]byte(line))
		if err == nil {
			var want int64
			if _, scanErr := fmt.Sscanf(line, "%x", &want); scanErr != nil || want != n {
				t.Fatalf("chunkSize(%q) = %d, hex prefix reads %d (%v)", line, n, want, scanErr)
			}
		}
		if err == nil && n > 64 {
			return // a body too large for the test parser's limit
		}
		size := n
		if err != nil {
			size = 5
		}
		in := []byte(chunkedWith(line, size))
		k := int(split) % (len(in) + 1)
		for _, cuts := range [][]int{{len(in)}, {k, len(in)}} {
			got := parseStream(newTestParser(), in, cuts)
			if len(got) != 1 {
				t.Fatalf("%q cut %v: %d results %+v", line, cuts, len(got), got)
			}
			if (err != nil) != (got[0].Status == 400) || (err == nil && got[0].Status != 0) {
				t.Fatalf("%q cut %v: parser %+v, line alone err=%v", line, cuts, got[0], err)
			}
		}
	})
}
