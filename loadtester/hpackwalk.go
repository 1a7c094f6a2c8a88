package loadtester

import "golang.org/x/net/http2/hpack"

// What the header block memo (h2blockmemo.go) needs to know of an HPACK
// block (RFC 7541 §6) without decoding it: whether its decoding can be
// reused, and the entries it adds to the dynamic table. Pure functions of
// the bytes.

// hpackStaticEntries is the static table's size (RFC 7541 Appendix A):
// an index above it names a dynamic table entry.
const hpackStaticEntries = 61

// hpackReuse walks block and reports whether decoding it again can be
// replaced by its first decoding: true when it neither resizes the table
// nor both reads and adds to it. Where it adds (every index then static),
// its additions are appended to adds as literals with incremental
// indexing whose strings are plain (Huffman-decoded), n of them. A block
// it cannot walk is not reusable.
func hpackReuse(block, adds []byte) (_ []byte, n int, ok bool) {
	reads := false
	for b := block; len(b) > 0; {
		var index uint64
		switch c := b[0]; {
		case c&0x80 != 0: // indexed field (§6.1)
			if index, b, ok = hpackInt(b, 7); !ok || index == 0 {
				return adds, 0, false
			}
			reads = reads || index > hpackStaticEntries
		case c&0xe0 == 0x20: // table size update (§6.3)
			return adds, 0, false
		case c&0xc0 == 0x40: // literal with incremental indexing (§6.2.1)
			if index, b, ok = hpackInt(b, 6); !ok {
				return adds, 0, false
			}
			reads = reads || index > hpackStaticEntries
			if adds, b, ok = hpackAppendAdded(adds, index, b); !ok {
				return adds, 0, false
			}
			n++
		default: // literal without indexing or never indexed (§6.2.2, §6.2.3)
			if index, b, ok = hpackInt(b, 4); ok && index == 0 {
				b, ok = hpackSkipString(b)
			}
			if ok {
				b, ok = hpackSkipString(b)
			}
			if !ok {
				return adds, 0, false
			}
			reads = reads || index > hpackStaticEntries
		}
	}
	if n > 0 && reads { // its reads depend on what the table holds at each copy
		return adds, 0, false
	}
	return adds, n, true
}

// hpackAppendAdded appends to adds one literal with incremental indexing,
// its name by the static index given (or, index 0, the literal name at
// b's start) and its value the string that follows, both plain; it
// returns what follows in b.
func hpackAppendAdded(adds []byte, index uint64, b []byte) ([]byte, []byte, bool) {
	if index > hpackStaticEntries { // a dynamic name: the block is not reusable anyway
		return adds, nil, false
	}
	adds = append(adds, 0x40|byte(index)) // 61 < 63: the 6-bit prefix holds it
	var s string
	var ok bool
	if index == 0 {
		if s, b, ok = hpackString(b); !ok {
			return adds, nil, false
		}
		adds = hpackAppendPlain(adds, s)
	}
	if s, b, ok = hpackString(b); !ok {
		return adds, nil, false
	}
	return hpackAppendPlain(adds, s), b, true
}

// hpackString reads a string literal (§5.2) from b's start, Huffman-
// decoded where it is coded.
func hpackString(b []byte) (string, []byte, bool) {
	if len(b) == 0 {
		return "", nil, false
	}
	huffman := b[0]&0x80 != 0
	n, rest, ok := hpackInt(b, 7)
	if !ok || n > uint64(len(rest)) {
		return "", nil, false
	}
	raw := rest[:n]
	if !huffman {
		return string(raw), rest[n:], true
	}
	s, err := hpack.HuffmanDecodeToString(raw)
	return s, rest[n:], err == nil
}

// hpackAppendPlain appends s as a string literal without Huffman coding:
// its length as an integer with a 7-bit prefix (§5.1), then its bytes.
func hpackAppendPlain(dst []byte, s string) []byte {
	n := uint64(len(s))
	if n < 0x7f {
		dst = append(dst, byte(n))
	} else {
		dst = append(dst, 0x7f)
		for n -= 0x7f; n >= 0x80; n >>= 7 {
			dst = append(dst, byte(n)|0x80)
		}
		dst = append(dst, byte(n))
	}
	return append(dst, s...)
}

// hpackInt reads an integer with an n-bit prefix (§5.1) from b's start.
func hpackInt(b []byte, n uint) (uint64, []byte, bool) {
	mask := uint64(1)<<n - 1
	v := uint64(b[0]) & mask
	b = b[1:]
	if v < mask {
		return v, b, true
	}
	for shift := uint(0); len(b) > 0 && shift < 56; shift += 7 {
		c := b[0]
		b = b[1:]
		v += uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, b, true
		}
	}
	return 0, nil, false
}

// hpackSkipString skips a string literal (§5.2): a length with a 7-bit
// prefix, then that many bytes.
func hpackSkipString(b []byte) ([]byte, bool) {
	if len(b) == 0 {
		return nil, false
	}
	n, rest, ok := hpackInt(b, 7)
	if !ok || n > uint64(len(rest)) {
		return nil, false
	}
	return rest[n:], true
}
