package loadtester

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"golang.org/x/net/http2"
)

// rawFrame is one frame's bytes: its header from the fields, then payload.
func rawFrame(typ http2.FrameType, flags uint8, stream uint32, payload []byte) []byte {
	p := []byte{byte(len(payload) >> 16), byte(len(payload) >> 8), byte(len(payload)), byte(typ), flags, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(p[5:], stream)
	return append(p, payload...)
}

// framerLike is x/net's Framer as h2conn.go used it for reading: frames
// reused, none larger than h2MaxFrame, each read from its own bytes.
type framerLike struct {
	rd bytes.Reader
	fr *http2.Framer
}

func newFramerLike() *framerLike {
	x := &framerLike{}
	x.fr = http2.NewFramer(nil, &x.rd)
	x.fr.SetReuseFrames()
	x.fr.SetMaxReadFrameSize(h2MaxFrame)
	return x
}

func (x *framerLike) read(p []byte) (http2.Frame, error) {
	x.rd.Reset(p)
	return x.fr.ReadFrame()
}

// compareFrames reports where the reader's frame and the Framer's differ
// ("" when they agree on every field the client reads).
func compareFrames(g h2InFrame, f http2.Frame) string {
	h := f.Header()
	if g.typ != h.Type || g.flags != uint8(h.Flags) || g.stream != h.StreamID || g.length != h.Length {
		return "header"
	}
	switch f := f.(type) {
	case *http2.DataFrame:
		if !bytes.Equal(g.body, f.Data()) || g.endStream() != f.StreamEnded() {
			return "DATA"
		}
	case *http2.HeadersFrame:
		if !bytes.Equal(g.body, f.HeaderBlockFragment()) || g.endStream() != f.StreamEnded() || g.endHeaders() != f.HeadersEnded() {
			return "HEADERS"
		}
	case *http2.ContinuationFrame:
		if !bytes.Equal(g.body, f.HeaderBlockFragment()) || g.endHeaders() != f.HeadersEnded() {
			return "CONTINUATION"
		}
	case *http2.PushPromiseFrame:
		if !bytes.Equal(g.body, f.HeaderBlockFragment()) || g.endHeaders() != f.HeadersEnded() {
			return "PUSH_PROMISE"
		}
	case *http2.RSTStreamFrame:
		if g.errCode() != f.ErrCode {
			return "RST_STREAM"
		}
	case *http2.SettingsFrame:
		if g.ack() != f.IsAck() || g.settings() != f.NumSettings() {
			return "SETTINGS"
		}
		for i := range g.settings() {
			if g.setting(i) != f.Setting(i) {
				return "SETTINGS' setting"
			}
		}
	case *http2.WindowUpdateFrame:
		if g.increment() != f.Increment {
			return "WINDOW_UPDATE"
		}
	case *http2.PingFrame:
		if g.pingData() != f.Data || g.ack() != f.IsAck() {
			return "PING"
		}
	case *http2.GoAwayFrame:
		if last, code := g.goAway(); last != f.LastStreamID || code != f.ErrCode {
			return "GOAWAY"
		}
	}
	return ""
}

// compactFrames cuts fuzz bytes into frames: each is a type, flags, a
// stream byte (its high bit sets the reserved bit of a stream ID of the
// low 7 bits), a length and that many payload bytes; an incomplete tail
// is left out. Lengths are right by construction, so the fuzzer explores
// the frames' contents and order.
func compactFrames(data []byte) [][]byte {
	var frames [][]byte
	for len(data) >= 4 {
		n := int(data[3])
		if len(data) < 4+n {
			break
		}
		stream := uint32(data[2]&0x7f) | uint32(data[2]&0x80)<<24
		frames = append(frames, rawFrame(http2.FrameType(data[0]), data[1], stream, data[4:4+n]))
		data = data[4+n:]
	}
	return frames
}

// compact is a frame in compactFrames' form (payloads under 256 bytes).
func compact(typ http2.FrameType, flags uint8, stream byte, payload []byte) []byte {
	return append([]byte{byte(typ), flags, stream, byte(len(payload))}, payload...)
}

// FuzzH2FrameReader: a stream of frames is rejected by the reader exactly
// where x/net's Framer rejects it, and where both accept a frame they
// agree on every field the client reads.
func FuzzH2FrameReader(f *testing.F) {
	f.Add(bytes.Join([][]byte{
		compact(http2.FrameSettings, 0, 0, []byte{0, 3, 0, 0, 0, 100, 0, 4, 0, 1, 0, 0}),
		compact(http2.FrameHeaders, 0x4|0x1, 1, []byte{0x88}),
		compact(http2.FrameHeaders, 0x8|0x20, 3, []byte{2, 0, 0, 0, 1, 16, 0x88, 0, 0}),
		compact(http2.FrameContinuation, 0x4, 3, []byte{0x82}),
		compact(http2.FrameData, 0x8|0x1, 3, []byte{3, 'o', 'k', 0, 0, 0}),
		compact(http2.FrameWindowUpdate, 0, 0, []byte{0, 0, 1, 0}),
		compact(http2.FramePing, 0x1, 0, []byte("12345678")),
		compact(http2.FrameRSTStream, 0, 5, []byte{0, 0, 0, 7}),
		compact(http2.FramePriority, 0, 5, []byte{0, 0, 0, 1, 9}),
		compact(http2.FrameType(0xfa), 0, 0, []byte("x")),
		compact(http2.FramePushPromise, 0x4, 1, []byte{0, 0, 0, 2, 0x82}),
		compact(http2.FrameGoAway, 0, 0, []byte{0, 0, 0, 3, 0, 0, 0, 0, 'd'}),
		compact(http2.FramePriorityUpdate, 0, 0, []byte{0, 0, 0, 1, 'u', '=', '1'}),
	}, nil))
	f.Add(compact(http2.FrameHeaders, 0, 0x81, []byte{0x88}))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r h2FrameReader
		x := newFramerLike()
		for i, p := range compactFrames(data) {
			var g h2InFrame
			gerr := r.read(p, &g)
			xf, xerr := x.read(p)
			if (gerr != nil) != (xerr != nil) {
				t.Fatalf("frame %d %x: reader says %v, Framer %v", i, p, gerr, xerr)
			}
			if gerr != nil {
				return // the connection is done
			}
			if d := compareFrames(g, xf); d != "" {
				t.Fatalf("frame %d %x: %s differs", i, p, d)
			}
		}
	})
}

// TestH2FrameReaderRejects: each rejection, after the frames before it
// were accepted; the Framer rejects each too.
func TestH2FrameReaderRejects(t *testing.T) {
	headersOpen := rawFrame(http2.FrameHeaders, 0, 1, []byte{0x88})
	for _, tc := range []struct {
		name   string
		before [][]byte
		frame  []byte
		want   error
	}{
		{"too large", nil, rawFrame(http2.FrameData, 0, 1, make([]byte, h2MaxFrame+1)), errH2FrameTooLarge},
		{"DATA on stream 0", nil, rawFrame(http2.FrameData, 0, 0, nil), errH2StreamZero},
		{"DATA padded, no pad length", nil, rawFrame(http2.FrameData, 0x8, 1, nil), errH2FrameSize},
		{"DATA padding too long", nil, rawFrame(http2.FrameData, 0x8, 1, []byte{2, 'x'}), errH2Padding},
		{"HEADERS on stream 0", nil, rawFrame(http2.FrameHeaders, 0x4, 0, []byte{0x88}), errH2StreamZero},
		{"HEADERS priority short", nil, rawFrame(http2.FrameHeaders, 0x4|0x20, 1, []byte{0, 0, 0, 0}), errH2FrameSize},
		{"HEADERS padding too long", nil, rawFrame(http2.FrameHeaders, 0x4|0x8|0x20, 1, []byte{2, 0, 0, 0, 0, 16, 0x88}), errH2Padding},
		{"CONTINUATION outside a block", nil, rawFrame(http2.FrameContinuation, 0x4, 1, []byte{0x88}), errH2ContinuationOut},
		{"CONTINUATION after a block ended", [][]byte{rawFrame(http2.FrameHeaders, 0x4, 1, []byte{0x88})},
			rawFrame(http2.FrameContinuation, 0x4, 1, []byte{0x88}), errH2ContinuationOut},
		{"CONTINUATION of another stream", [][]byte{headersOpen}, rawFrame(http2.FrameContinuation, 0x4, 3, nil), errH2BlockBroken},
		{"DATA inside a block", [][]byte{headersOpen}, rawFrame(http2.FrameData, 0, 1, nil), errH2BlockBroken},
		{"unknown type inside a block", [][]byte{headersOpen}, rawFrame(0xfa, 0, 0, nil), errH2BlockBroken},
		{"PING inside a block", [][]byte{headersOpen, rawFrame(http2.FrameContinuation, 0, 1, nil)},
			rawFrame(http2.FramePing, 0, 0, make([]byte, 8)), errH2BlockBroken},
		{"PRIORITY on stream 0", nil, rawFrame(http2.FramePriority, 0, 0, make([]byte, 5)), errH2StreamZero},
		{"PRIORITY of 4 bytes", nil, rawFrame(http2.FramePriority, 0, 1, make([]byte, 4)), errH2FrameSize},
		{"RST_STREAM on stream 0", nil, rawFrame(http2.FrameRSTStream, 0, 0, make([]byte, 4)), errH2StreamZero},
		{"RST_STREAM of 5 bytes", nil, rawFrame(http2.FrameRSTStream, 0, 1, make([]byte, 5)), errH2FrameSize},
		{"SETTINGS on a stream", nil, rawFrame(http2.FrameSettings, 0, 1, nil), errH2StreamNonZero},
		{"SETTINGS of 5 bytes", nil, rawFrame(http2.FrameSettings, 0, 0, make([]byte, 5)), errH2FrameSize},
		{"SETTINGS ACK with a payload", nil, rawFrame(http2.FrameSettings, 0x1, 0, make([]byte, 6)), errH2SettingsAck},
		{"SETTINGS initial window over 2^31-1", nil, rawFrame(http2.FrameSettings, 0, 0, []byte{0, 4, 0x80, 0, 0, 0}), errH2SettingsWindow},
		{"PUSH_PROMISE on stream 0", nil, rawFrame(http2.FramePushPromise, 0x4, 0, make([]byte, 4)), errH2StreamZero},
		{"PUSH_PROMISE short", nil, rawFrame(http2.FramePushPromise, 0x4, 1, make([]byte, 3)), errH2FrameSize},
		{"PUSH_PROMISE padding too long", nil, rawFrame(http2.FramePushPromise, 0x4|0x8, 1, []byte{1, 0, 0, 0, 2}), errH2Padding},
		{"PING on a stream", nil, rawFrame(http2.FramePing, 0, 1, make([]byte, 8)), errH2StreamNonZero},
		{"PING of 7 bytes", nil, rawFrame(http2.FramePing, 0, 0, make([]byte, 7)), errH2FrameSize},
		{"GOAWAY on a stream", nil, rawFrame(http2.FrameGoAway, 0, 1, make([]byte, 8)), errH2StreamNonZero},
		{"GOAWAY of 7 bytes", nil, rawFrame(http2.FrameGoAway, 0, 0, make([]byte, 7)), errH2FrameSize},
		{"WINDOW_UPDATE of 0", nil, rawFrame(http2.FrameWindowUpdate, 0, 1, []byte{0x80, 0, 0, 0}), errH2WindowZero},
		{"WINDOW_UPDATE of 0 on the connection", nil, rawFrame(http2.FrameWindowUpdate, 0, 0, make([]byte, 4)), errH2WindowZero},
		{"WINDOW_UPDATE of 3 bytes", nil, rawFrame(http2.FrameWindowUpdate, 0, 0, []byte{0, 0, 1}), errH2FrameSize},
		{"PRIORITY_UPDATE on a stream", nil, rawFrame(http2.FramePriorityUpdate, 0, 1, []byte{0, 0, 0, 1}), errH2StreamNonZero},
		{"PRIORITY_UPDATE of 3 bytes", nil, rawFrame(http2.FramePriorityUpdate, 0, 0, []byte{0, 0, 1}), errH2FrameSize},
		{"PRIORITY_UPDATE of stream 0", nil, rawFrame(http2.FramePriorityUpdate, 0, 0, []byte{0x80, 0, 0, 0}), errH2StreamZero},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r h2FrameReader
			x := newFramerLike()
			for _, p := range tc.before {
				if err := r.read(p, new(h2InFrame)); err != nil {
					t.Fatalf("reader rejects %x: %v", p, err)
				}
				if _, err := x.read(p); err != nil {
					t.Fatalf("Framer rejects %x: %v", p, err)
				}
			}
			if err := r.read(tc.frame, new(h2InFrame)); !errors.Is(err, tc.want) {
				t.Errorf("reader: %v, want %v", err, tc.want)
			}
			if _, err := x.read(tc.frame); err == nil {
				t.Errorf("the Framer accepts it")
			}
		})
	}
}

// TestH2FrameReaderReads: frames the Framer writes are read with the same
// fields, padding and priority removed, the reserved bit cleared.
func TestH2FrameReaderReads(t *testing.T) {
	var out bytes.Buffer
	w := http2.NewFramer(&out, nil)
	for _, tc := range []struct {
		name  string
		write func()
	}{
		{"DATA", func() { w.WriteData(1, true, []byte("ok")) }},
		{"DATA padded", func() { w.WriteDataPadded(1, false, []byte("ok"), []byte{0, 0, 0}) }},
		{"HEADERS", func() {
			w.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: []byte{0x88}, EndStream: true, EndHeaders: true})
		}},
		{"HEADERS padded with priority", func() {
			w.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: []byte{0x88, 0x82}, EndHeaders: true,
				PadLength: 4, Priority: http2.PriorityParam{StreamDep: 1, Weight: 9, Exclusive: true}})
		}},
		{"RST_STREAM", func() { w.WriteRSTStream(5, http2.ErrCodeRefusedStream) }},
		{"SETTINGS", func() {
			w.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 100},
				http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 20})
		}},
		{"SETTINGS ACK", func() { w.WriteSettingsAck() }},
		{"WINDOW_UPDATE", func() { w.WriteWindowUpdate(0, 1<<30) }},
		{"PING", func() { w.WritePing(true, [8]byte{1, 2, 3, 4, 5, 6, 7, 8}) }},
		{"GOAWAY", func() { w.WriteGoAway(7, http2.ErrCodeEnhanceYourCalm, []byte("calm")) }},
		{"PUSH_PROMISE", func() {
			w.WritePushPromise(http2.PushPromiseParam{StreamID: 1, PromiseID: 2, BlockFragment: []byte{0x82}, EndHeaders: true, PadLength: 2})
		}},
		{"unknown", func() { w.WriteRawFrame(0xfa, 0x3, 9, []byte("?")) }},
		{"reserved bit", func() { w.WriteRawFrame(http2.FrameRSTStream, 0, 1<<31|5, []byte{0, 0, 0, 8}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out.Reset()
			tc.write()
			p := bytes.Clone(out.Bytes())
			var r h2FrameReader
			var g h2InFrame
			if err := r.read(p, &g); err != nil {
				t.Fatal(err)
			}
			xf, err := newFramerLike().read(p)
			if err != nil {
				t.Fatal(err)
			}
			if d := compareFrames(g, xf); d != "" {
				t.Fatalf("%s differs: %+v", d, g)
			}
		})
	}
}

// TestH2FrameReaderAllocatesNothing: reading a response's frames, and a
// rejection, allocates nothing.
func TestH2FrameReaderAllocatesNothing(t *testing.T) {
	frames := [][]byte{
		rawFrame(http2.FrameHeaders, 0x4, 1, []byte{0x88}),
		rawFrame(http2.FrameData, 0x1, 1, []byte(`{"status":"ok"}`)),
		rawFrame(http2.FrameSettings, 0, 0, []byte{0, 3, 0, 0, 0, 100}),
		rawFrame(http2.FramePing, 0, 0, make([]byte, 8)),
		rawFrame(http2.FramePing, 0, 0, make([]byte, 7)),
	}
	var r h2FrameReader
	var f h2InFrame
	if n := testing.AllocsPerRun(100, func() {
		for _, p := range frames {
			r.read(p, &f)
		}
	}); n != 0 {
		t.Fatalf("%v allocations a run", n)
	}
}
