package loadtester

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// hpackReuse tells the blocks whose decoding can be reused, and replays
// what one adds to the table: decoded into a fresh table, the block and
// its additions leave the same entries.
func TestHPACKReuse(t *testing.T) {
	enc := func(fs ...hpack.HeaderField) []byte {
		var b bytes.Buffer
		e := hpack.NewEncoder(&b)
		for _, f := range fs {
			e.WriteField(f)
		}
		return b.Bytes()
	}
	xa := hpack.HeaderField{Name: "x-a", Value: "1"}
	long := hpack.HeaderField{Name: "x-long", Value: "a value long enough to be Huffman-coded"}
	cases := []struct {
		name  string
		block []byte
		ok    bool
		n     int // entries added, when ok
	}{
		{"empty", nil, true, 0},
		{":status 200, static", []byte{0x88}, true, 0},
		{"indexed dynamic entry", []byte{0x88, 0xbe}, true, 0},
		{"never indexed literal", enc(hpack.HeaderField{Name: "x-a", Value: "1", Sensitive: true}), true, 0},
		{"without indexing, indexed name", append([]byte{0x0f, 0x10, 0x03}, "abc"...), true, 0}, // index 31 (4-bit prefix continued)
		{"incrementally indexed literal", enc(xa), true, 1},
		{"Huffman-coded name and value", enc(long, xa), true, 2},
		{"a value of 200 bytes", enc(hpack.HeaderField{Name: "x-b", Value: string(bytes.Repeat([]byte{'~'}, 200))}), true, 1},
		{"nginx's block", nginxBlock, true, 4},
		{"adds and reads the table", append([]byte{0xbe}, enc(xa)...), false, 0},
		{"adds with a dynamic name", []byte{0x7e, 0x01, '1'}, false, 0},
		{"index 0", []byte{0x80}, false, 0},
		{"table size update", []byte{0x3f, 0xe1, 0x1f, 0x88}, false, 0},
		{"string cut short", []byte{0x00, 0x05, 'a'}, false, 0},
		{"added string cut short", []byte{0x40, 0x05, 'a'}, false, 0},
		{"bad Huffman code", []byte{0x40, 0x01, 'a', 0x81, 0xff}, false, 0},
		{"integer cut short", []byte{0xff}, false, 0},
		{"huge integer", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, false, 0},
	}
	for _, c := range cases {
		adds, n, ok := hpackReuse(c.block, nil)
		if ok != c.ok || ok && n != c.n {
			t.Errorf("%s (% x): reusable %v adding %d, want %v adding %d", c.name, c.block, ok, n, c.ok, c.n)
			continue
		}
		if !ok || n == 0 {
			continue
		}
		if got, want := tableAfter(t, adds, n), tableAfter(t, c.block, n); got != want {
			t.Errorf("%s: its additions replayed leave %s, the block %s", c.name, got, want)
		}
	}
}

// tableAfter decodes block into a fresh table, then reads its n newest
// entries (indexed fields 62 on), and says what they hold.
func tableAfter(t *testing.T, block []byte, n int) string {
	t.Helper()
	var got []string
	d := hpack.NewDecoder(4096, func(f hpack.HeaderField) { got = append(got, f.Name+": "+f.Value) })
	if _, err := d.Write(block); err != nil {
		t.Fatalf("% x: %v", block, err)
	}
	got = got[:0]
	for i := range min(n, 64) { // one byte an index: 62 to 125
		if _, err := d.Write([]byte{0x80 | byte(hpackStaticEntries+1+i)}); err != nil {
			got = append(got, fmt.Sprintf("no entry %d", i)) // evicted, by a larger entry or the table's size
			break
		}
	}
	return fmt.Sprint(got)
}

// The memo never changes what a block says: blocks decoded with it and
// without it (forgotten before every frame) agree field for field, where
// a block that adds to the table shifts what an index means between two
// copies of the same indexed block.
func TestH2BlockMemoAgreesWithDecoding(t *testing.T) {
	var dyn bytes.Buffer
	e := hpack.NewEncoder(&dyn)
	add := func(value string) []byte { // :status 200 and x-a: value, added to the table (index 62)
		dyn.Reset()
		e.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
		e.WriteField(hpack.HeaderField{Name: "x-a", Value: value})
		return append([]byte(nil), dyn.Bytes()...)
	}
	indexed := []byte{0x88, 0xbe}                // :status 200 and the table's newest entry
	other := []byte{0x8d, 0x0f, 0x10, 0x01, 'z'} // :status 404 and a literal (index 31) without indexing
	blocks := [][]byte{add("1"), indexed, indexed, indexed, add("2"), indexed, indexed, other, other, indexed, []byte{0x88}, []byte{0x88}}
	for _, keepHead := range []bool{false, true} {
		with, without := decodeBlocks(t, blocks, keepHead, true), decodeBlocks(t, blocks, keepHead, false)
		for i := range with {
			if with[i] != without[i] {
				t.Errorf("keepHead %v, block %d: with the memo %q, without %q", keepHead, i, with[i], without[i])
			}
		}
		if keepHead && !bytes.Contains([]byte(with[5]), []byte("x-a: 2")) {
			t.Errorf("the indexed block after the table changed reads %q", with[5])
		}
	}
}

// A block that adds to the table without reading it, reused many times
// over (as nginx's is), owes the table its entries: blocks that read the
// table afterwards, at its newest entry, its oldest, one past it, and an
// entry from before the reuses, decode as if every copy had been decoded.
func TestH2BlockMemoPaysWhatReusesAdd(t *testing.T) {
	var b bytes.Buffer
	e := hpack.NewEncoder(&b)
	block := func(fs ...hpack.HeaderField) []byte {
		b.Reset()
		for _, f := range fs {
			e.WriteField(f)
		}
		return append([]byte(nil), b.Bytes()...)
	}
	status := hpack.HeaderField{Name: ":status", Value: "200"}
	// 36 and 37 bytes an entry: 56 pairs fill the table, 112 entries
	// (indices 62 to 173); 4096/(32×2)+1 = 65 copies are replayed at most.
	pair := block(status, hpack.HeaderField{Name: "x-a", Value: "1"}, hpack.HeaderField{Name: "x-b", Value: "22"})
	old := block(status, hpack.HeaderField{Name: "x-old", Value: "kept"})
	read := func(index int) []byte { return append([]byte{0x88, 0xff}, byte(index-127)) } // :status 200, entry index (7-bit prefix continued)
	copies := func(n int) [][]byte { return slices.Repeat([][]byte{pair}, n) }
	scenarios := map[string][][]byte{
		"200 copies, newest and oldest": slices.Concat(copies(200), [][]byte{{0x88, 0xbe, 0xbf}, read(173)}),
		"200 copies, one past the end":  slices.Concat(copies(200), [][]byte{read(174)}),
		"3 copies after an older entry": slices.Concat([][]byte{old}, copies(3), [][]byte{{0x88, 0xc4}}), // index 68: x-old
		"a copy between reads":          slices.Concat(copies(2), [][]byte{{0x88, 0xbe}}, copies(2), [][]byte{{0x88, 0xbf}}),
	}
	for name, blocks := range scenarios {
		for _, keepHead := range []bool{false, true} {
			with, without := decodeBlocks(t, blocks, keepHead, true), decodeBlocks(t, blocks, keepHead, false)
			if fmt.Sprint(with) != fmt.Sprint(without) {
				t.Errorf("%s, keepHead %v: with the memo %q, without %q", name, keepHead, with[len(with)-2:], without[len(without)-2:])
			}
			if keepHead && name == "3 copies after an older entry" && !strings.Contains(with[len(with)-1], "x-old: kept") {
				t.Errorf("%s: the last block reads %q", name, with[len(with)-1])
			}
		}
	}
}

// decodeBlocks feeds each block as a response's HEADERS frame (END_HEADERS,
// END_STREAM) on a fresh connection's streams in turn, and returns what
// each said (:status, the kept lines, the list's size); without memo the
// connection forgets its last block before every frame. nil: a block
// closed the connection (from then on nothing is compared).
func decodeBlocks(t *testing.T, blocks [][]byte, keepHead, memo bool) []string {
	th, c := newH2TestConn(t, 0)
	c.h2.keepHead, c.h2.dec = keepHead, newH2Decoder(&c.h2.hb, keepHead)
	now := th.now()
	feed(th, c, h2Frames(func(fr *http2.Framer, _ *hpack.Encoder, _ *bytes.Buffer) {
		fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 100})
	}), now)
	th.topUp(c, now)
	h := c.h2
	var got []string
	for i, b := range blocks {
		if !memo {
			if err := h.memo.settle(h.dec); err != nil {
				t.Fatal(err)
			}
		}
		frame := h2Frames(func(fr *http2.Framer, _ *hpack.Encoder, _ *bytes.Buffer) {
			fr.WriteHeaders(http2.HeadersFrameParam{StreamID: uint32(2*i + 1), BlockFragment: b, EndHeaders: true, EndStream: true})
		})
		if !feed(th, c, frame, now) {
			return append(got, "closed")
		}
		got = append(got, fmt.Sprintf("%s|%s|%d", h.hb.status, h.hb.lines, h.hb.size))
		th.topUp(c, now)
	}
	return got
}

// FuzzH2BlockMemo: any blocks, the memo agrees with decoding each in full.
// The input is cut into blocks at each 0xff 0x00 pair; every block is
// sent twice, so each has its chance to be remembered and reused.
func FuzzH2BlockMemo(f *testing.F) {
	f.Add([]byte{0x88, 0xff, 0x00, 0x40, 0x03, 'x', '-', 'a', 0x01, '1', 0xff, 0x00, 0x88, 0xbe})
	f.Add([]byte{0x0f, 0x10, 0x01, 'z', 0xff, 0x00, 0x3f, 0xe1, 0x1f, 0x88})
	f.Add(slices.Concat(nginxBlock, []byte{0xff, 0x00}, nginxBlock, []byte{0xff, 0x00, 0x88, 0xbe, 0xbf, 0xc0, 0xc1})) // reused additions, then read
	f.Fuzz(func(t *testing.T, data []byte) {
		var blocks [][]byte
		for _, b := range bytes.Split(data, []byte{0xff, 0x00}) {
			if len(blocks) < 16 {
				blocks = append(blocks, b, b)
			}
		}
		for _, keepHead := range []bool{false, true} {
			with, without := decodeBlocks(t, blocks, keepHead, true), decodeBlocks(t, blocks, keepHead, false)
			if fmt.Sprint(with) != fmt.Sprint(without) {
				t.Fatalf("keepHead %v: with the memo %q, without %q", keepHead, with, without)
			}
		}
	})
}

// FuzzHPACKReuse: any bytes walk without a panic, and a block said to be
// reusable that decodes leaves the same newest entries as its replayed
// additions, emitting the same fields each time it is decoded.
func FuzzHPACKReuse(f *testing.F) {
	f.Add(nginxBlock)
	f.Add([]byte{0x88, 0xbe})
	f.Add([]byte{0x40, 0x81, 0xff})
	f.Fuzz(func(t *testing.T, block []byte) {
		adds, n, ok := hpackReuse(block, nil)
		if !ok || n == 0 {
			return
		}
		var first []string
		d := hpack.NewDecoder(4096, func(f hpack.HeaderField) { first = append(first, f.Name+": "+f.Value) })
		if _, err := d.Write(block); err != nil || d.Close() != nil {
			return // not a block a server could have sent whole
		}
		if got, want := tableAfter(t, adds, n), tableAfter(t, block, n); got != want {
			t.Fatalf("% x: its additions replayed leave %s, the block %s", block, got, want)
		}
		var again []string
		d.SetEmitFunc(func(f hpack.HeaderField) { again = append(again, f.Name+": "+f.Value) })
		if _, err := d.Write(block); err != nil || fmt.Sprint(again) != fmt.Sprint(first) {
			t.Fatalf("% x: decoded again %q (%v), first %q: the block read the table it changed", block, again, err, first)
		}
	})
}
