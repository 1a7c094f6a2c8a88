package loadtester

import (
	"bytes"
	"testing"

	"weaseldb/loadtester/check"

	"golang.org/x/net/http2"
)

// A request's frames, written by hand (writeFrame), read back by x/net's
// Framer as the server would: a block over the server's frame size split
// into HEADERS and CONTINUATION, END_HEADERS on the last, END_STREAM on
// HEADERS only without a body, the body's DATA within the frame size with
// END_STREAM on the last.
func TestH2RequestFramesReadBack(t *testing.T) {
	cases := []struct {
		name             string
		block, body      int
		maxFrame         int
		wantTypes        []http2.FrameType
		endStreamOnFrame int // index of the frame with END_STREAM
	}{
		{"small GET", 20, 0, 16384, []http2.FrameType{http2.FrameHeaders}, 0},
		{"block split", 40, 0, 16, []http2.FrameType{http2.FrameHeaders, http2.FrameContinuation, http2.FrameContinuation}, 0},
		{"POST", 10, 30, 16, []http2.FrameType{http2.FrameHeaders, http2.FrameData, http2.FrameData}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newH2Conn(4, check.Needs{})
			h.send.maxFrame = c.maxFrame
			h.send.connWin = 1 << 20
			h.send.initWin = 1 << 20
			block, body := bytes.Repeat([]byte{0x82}, c.block), bytes.Repeat([]byte("b"), c.body)
			if left := h.writeRequest(0, 7, block, body); left {
				t.Fatal("body left waiting with open windows")
			}
			fr := http2.NewFramer(nil, bytes.NewReader(h.out.Bytes()))
			var gotBlock, gotBody []byte
			for i, want := range c.wantTypes {
				f, err := fr.ReadFrame()
				if err != nil {
					t.Fatalf("frame %d: %v", i, err)
				}
				if f.Header().Type != want || f.Header().StreamID != 7 || int(f.Header().Length) > c.maxFrame {
					t.Fatalf("frame %d: %v, want %v on stream 7 within %d bytes", i, f.Header(), want, c.maxFrame)
				}
				last := i == len(c.wantTypes)-1
				switch f := f.(type) {
				case *http2.HeadersFrame:
					gotBlock = append(gotBlock, f.HeaderBlockFragment()...)
					if f.HeadersEnded() != (len(c.wantTypes) == 1 || c.wantTypes[1] != http2.FrameContinuation) {
						t.Errorf("HEADERS END_HEADERS %v", f.HeadersEnded())
					}
					if f.StreamEnded() != (c.endStreamOnFrame == i) {
						t.Errorf("HEADERS END_STREAM %v", f.StreamEnded())
					}
				case *http2.ContinuationFrame:
					gotBlock = append(gotBlock, f.HeaderBlockFragment()...)
					if f.HeadersEnded() != last {
						t.Errorf("CONTINUATION %d END_HEADERS %v", i, f.HeadersEnded())
					}
				case *http2.DataFrame:
					gotBody = append(gotBody, f.Data()...)
					if f.StreamEnded() != (c.endStreamOnFrame == i) {
						t.Errorf("DATA %d END_STREAM %v", i, f.StreamEnded())
					}
				}
			}
			if _, err := fr.ReadFrame(); err == nil {
				t.Error("more frames than expected")
			}
			if !bytes.Equal(gotBlock, block) || !bytes.Equal(gotBody, body) {
				t.Errorf("block %d bytes, body %d bytes read back; want %d, %d", len(gotBlock), len(gotBody), c.block, c.body)
			}
		})
	}
}

func TestParseStatusCode(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"200", 200, true}, {"100", 100, true}, {"999", 999, true}, {"404", 404, true},
		{"099", 0, false}, {"0200", 0, false}, {"+20", 0, false}, {"20", 0, false}, {"2x0", 0, false}, {"", 0, false}, {"20 ", 0, false},
	} {
		if got, ok := parseStatusCode(c.in); got != c.want || ok != c.ok {
			t.Errorf("parseStatusCode(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
