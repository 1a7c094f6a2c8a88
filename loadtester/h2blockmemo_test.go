package loadtester

import (
	"bytes"
	"fmt"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

func TestHPACKKeepsTable(t *testing.T) {
	enc := func(f hpack.HeaderField) []byte {
		var b bytes.Buffer
		hpack.NewEncoder(&b).WriteField(f)
		return b.Bytes()
	}
	cases := []struct {
		name  string
		block []byte
		want  bool
	}{
		{"empty", nil, true},
		{":status 200, static", []byte{0x88}, true},
		{"indexed dynamic entry", []byte{0x88, 0xbe}, true},
		{"incrementally indexed literal", enc(hpack.HeaderField{Name: "x-a", Value: "1"}), false},
		{"never indexed literal", enc(hpack.HeaderField{Name: "x-a", Value: "1", Sensitive: true}), true},
		{"without indexing, indexed name", append([]byte{0x0f, 0x10, 0x03}, "abc"...), true}, // index 31 (4-bit prefix continued)
		{"table size update", []byte{0x3f, 0xe1, 0x1f, 0x88}, false},
		{"string cut short", []byte{0x00, 0x05, 'a'}, false},
		{"integer cut short", []byte{0xff}, false},
		{"huge integer", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, false},
	}
	for _, c := range cases {
		if got := hpackKeepsTable(c.block); got != c.want {
			t.Errorf("%s (% x): %v, want %v", c.name, c.block, got, c.want)
		}
	}
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
			h.memo.forget()
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
