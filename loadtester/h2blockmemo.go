package loadtester

import (
	"bytes"

	"golang.org/x/net/http2/hpack"
)

// h2BlockMemo is the last response header block a connection decoded, as
// one HEADERS frame, and what it said. A server answers a run's requests
// with the same block, byte for byte, for a second at least (nginx's
// changes with its date line): such a block is recognised by one
// comparison and its outcome reused, where decoding it again costs about
// 450 instructions a response, a third of the client's own work on h2,
// and several times that when its literals are Huffman-coded.
//
// The reuse is exact, for two kinds of block (hpackReuse):
//
//   - a block that leaves HPACK's dynamic table alone (indexed fields,
//     literals not indexed) decodes to a function of its bytes and of the
//     table, and the table changes only when a block adds to it or
//     resizes it, which is then decoded in full;
//   - a block that adds to the table but reads nothing of it (every index
//     in the static table) decodes to a function of its bytes alone. Its
//     effect on the table is the same each time: the entries it adds,
//     kept as plain literals (adds). Each reuse owes the table those
//     entries; the debt is paid before the next block decoded in full
//     (settle), by decoding the entries again, without Huffman coding and
//     with nothing emitted. nginx is the server this is for: it sends
//     server, date, content-type and content-length as literals with
//     incremental indexing in every response and never refers to them.
//
// A block too large, over the header list's limit, split over
// CONTINUATION frames, or that both reads and adds to the table is
// decoded every time.
//
// Who owns what: its h2Conn's, so the connection's loop's alone.
type h2BlockMemo struct {
	block  []byte // empty: none
	status string
	size   uint32
	lines  []byte
	// adds: the entries the block adds to the table, as literals with
	// incremental indexing and plain strings, nAdds of them; owed: the
	// times the block was reused since the table last had them.
	adds   []byte
	nAdds  int
	owed   int
	replay []byte // settle's scratch
}

// h2TableSize is the dynamic table size the client's decoder allows (the
// SETTINGS_HEADER_TABLE_SIZE it leaves at its initial value, RFC 9113
// §6.5.2): a server's table size updates can only lower it.
const h2TableSize = 4096

// hit reports whether frag is the block remembered; a hit owes the table
// the block's entries.
func (m *h2BlockMemo) hit(frag []byte) bool {
	if len(m.block) == 0 || !bytes.Equal(frag, m.block) {
		return false
	}
	if m.nAdds > 0 && m.owed < h2TableSize {
		m.owed++
	}
	return true
}

// restore sets hb as decoding the block would have (its stream, end and
// lines buffer already set).
func (m *h2BlockMemo) restore(hb *headerBlock) {
	hb.status, hb.size, hb.bytes = m.status, m.size, len(m.block)
	hb.lines = append(hb.lines, m.lines...)
}

// settle pays the table what the block's reuses owe it, then drops the
// block: one is about to be decoded in full, against the table as
// decoding every block would have left it. The table after n copies of
// the same entries is its longest suffix that fits, so no more copies are
// decoded than fill the largest table (an entry takes at least 32 bytes).
func (m *h2BlockMemo) settle(dec *hpack.Decoder) error {
	defer func() { m.block, m.owed = m.block[:0], 0 }()
	if m.owed == 0 {
		return nil
	}
	m.replay = m.replay[:0]
	for range min(m.owed, h2TableSize/(32*m.nAdds)+1) {
		m.replay = append(m.replay, m.adds...)
	}
	dec.SetEmitEnabled(false)
	defer dec.SetEmitEnabled(true)
	if _, err := dec.Write(m.replay); err != nil {
		return err
	}
	return dec.Close()
}

// remember keeps block, just decoded whole into hb, when its decoding can
// be reused (hpackReuse).
func (m *h2BlockMemo) remember(block []byte, hb *headerBlock) {
	if len(block) > maxMemoBlock || hb.size > h2MaxHeaderList {
		return
	}
	adds, n, ok := hpackReuse(block, m.adds[:0])
	if !ok {
		return
	}
	m.block = append(m.block[:0], block...)
	m.status, m.size = hb.status, hb.size
	m.lines = append(m.lines[:0], hb.lines...)
	m.adds, m.nAdds, m.owed = adds, n, 0
}
