package loadtester

import "bytes"

// h2BlockMemo is the last response header block a connection decoded, as
// one HEADERS frame, and what it said, while that block left HPACK's
// dynamic table as it found it. A server answers a run's requests with
// the same block, byte for byte, for a second at least (nginx's changes
// with its date line): such a block is recognised by one comparison and
// its outcome reused, where decoding it again costs about 450
// instructions a response, a third of the client's own work on h2.
//
// The reuse is exact: a block whose representations are all indexed
// fields or literals that are not indexed (hpackKeepsTable) decodes to a
// function of its bytes and the dynamic table, and the table changes
// only when a block adds to it or resizes it; any block decoded in full
// forgets the memo first, so the table is the one the memo's block was
// decoded against. A block too large, over the header list's limit, or
// split over CONTINUATION frames is decoded every time.
//
// Who owns what: its h2Conn's, so the connection's loop's alone.
type h2BlockMemo struct {
	block  []byte // empty: none
	status string
	size   uint32
	lines  []byte
}

// hit reports whether frag is the block remembered.
func (m *h2BlockMemo) hit(frag []byte) bool {
	return len(m.block) > 0 && bytes.Equal(frag, m.block)
}

// restore sets hb as decoding the block would have (its stream, end and
// lines buffer already set).
func (m *h2BlockMemo) restore(hb *headerBlock) {
	hb.status, hb.size, hb.bytes = m.status, m.size, len(m.block)
	hb.lines = append(hb.lines, m.lines...)
}

// forget drops the block: one is about to be decoded, which may change
// the dynamic table.
func (m *h2BlockMemo) forget() { m.block = m.block[:0] }

// remember keeps block, just decoded whole into hb, when its decoding is
// a function of its bytes and of a table it left unchanged.
func (m *h2BlockMemo) remember(block []byte, hb *headerBlock) {
	if len(block) > maxMemoBlock || hb.size > h2MaxHeaderList || !hpackKeepsTable(block) {
		return
	}
	m.block = append(m.block[:0], block...)
	m.status, m.size = hb.status, hb.size
	m.lines = append(m.lines[:0], hb.lines...)
}

// hpackKeepsTable reports whether an HPACK block (RFC 7541 §6) holds only
// indexed fields and literals without indexing or never indexed: none
// adds to the dynamic table or resizes it. A block it cannot walk is
// reported as changing it.
func hpackKeepsTable(b []byte) bool {
	for len(b) > 0 {
		var ok bool
		switch c := b[0]; {
		case c&0x80 != 0: // indexed field (§6.1)
			_, b, ok = hpackInt(b, 7)
		case c&0xc0 == 0x40, c&0xe0 == 0x20: // literal with incremental indexing (§6.2.1), table size update (§6.3)
			return false
		default: // literal without indexing or never indexed (§6.2.2, §6.2.3)
			var index uint64
			if index, b, ok = hpackInt(b, 4); ok && index == 0 {
				b, ok = hpackSkipString(b)
			}
			if ok {
				b, ok = hpackSkipString(b)
			}
		}
		if !ok {
			return false
		}
	}
	return true
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
