package http1

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"testing"
)

func TestKnownName(t *testing.T) {
	cases := []struct {
		in    string
		id    headerID
		colon int
	}{
		{"Host: x", headerHost, 4},
		{"hOST:", headerHost, 4},
		{"Host :", headerOther, -1},
		{"Hostx:", headerOther, -1},
		{"Hos", headerOther, -1},
		{"Content-Length: 5", headerContentLength, 14},
		{"content-length:", headerContentLength, 14},
		{"Content\rLength:", headerOther, -1}, // CR | 0x20 is '-': the mask must not fold it
		{"Content-Lengt:", headerOther, -1},
		{"Content-Type: a", headerContentType, 12},
		{"CONNECTION:close", headerConnection, 10},
		{"X-Request-Id:", headerRequestID, 12},
		{"X-Request\rId:", headerOther, -1},
		{"Transfer-Encoding:", headerTransferEncoding, 17},
		{"transfer-encodinG:", headerTransferEncoding, 17},
		{"Expect:", headerExpect, 6},
		{"Expect", headerOther, -1},
		{"User-Agent: x", headerOther, -1},
		{"", headerOther, -1},
	}
	for _, tc := range cases {
		id, colon := knownName([]byte(tc.in))
		if id != tc.id || colon != tc.colon {
			t.Errorf("knownName(%q) = %d, %d; want %d, %d", tc.in, id, colon, tc.id, tc.colon)
		}
	}
}

// TestKnownNameMatchesHeaderIDOf: every name knownName matches is the one
// headerIDOf gives the same bytes, whatever byte stands at each place.
func TestKnownNameMatchesHeaderIDOf(t *testing.T) {
	for _, name := range []string{"host", "expect", "connection", "content-type", "x-request-id", "content-length", "transfer-encoding"} {
		line := []byte(name + ":")
		for i := range line {
			orig := line[i]
			for c := 0; c < 256; c++ {
				line[i] = byte(c)
				id, colon := knownName(line)
				if colon < 0 {
					continue
				}
				if line[colon] != ':' || headerIDOf(line[:colon]) != id || !bytes.EqualFold(line[:colon], []byte(name)) {
					t.Fatalf("knownName(%q) = %d, %d", line, id, colon)
				}
			}
			line[i] = orig
		}
	}
}

// TestControlBytes: the lowest flag is the first byte a value cannot hold,
// for every byte at every place of a word of value bytes.
func TestControlBytes(t *testing.T) {
	for pos := 0; pos < 8; pos++ {
		for c := 0; c < 256; c++ {
			word := []byte("a\t\x80b cd\xff")
			word[pos] = byte(c)
			m := controlBytes(binary.LittleEndian.Uint64(word))
			want := 8
			for i, b := range word {
				if !isValueChar[b] || b == '\t' {
					want = i
					break
				}
			}
			got := 8
			if m != 0 {
				got = bits.TrailingZeros64(m) >> 3
			}
			if got != want {
				t.Fatalf("controlBytes(%q): first flag at %d, want %d", word, got, want)
			}
		}
	}
}

func TestValueEnd(t *testing.T) {
	cases := []struct {
		in string
		at int
		ok bool
	}{
		{"\r\n", 0, true},
		{"abc\r\n", 3, true},
		{"0123456789abcdef\r", 16, true},
		{"01234567\t89\tab\r", 14, true},
		{"0123456789\x7f\r", 10, false},
		{"0123\x00\r", 4, false},
		{"0123456789a\nb\r", 11, false},
		{"0123456789abcdef", 16, false},
		{"01", 2, false},
		{"\x80\xff\x80\xff\x80\xff\x80\xff\x80 \r", 10, true},
	}
	for _, tc := range cases {
		at, ok := valueEnd([]byte(tc.in), 0)
		if at != tc.at || ok != tc.ok {
			t.Errorf("valueEnd(%q) = %d, %t; want %d, %t", tc.in, at, ok, tc.at, tc.ok)
		}
	}
}
