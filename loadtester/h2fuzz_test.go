package loadtester

import (
	"bytes"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// newH2TestConn builds a network thread whose run POSTs body over HTTP/2
// with up to 8 streams, and one connection to it on a socket pair (the
// peer never reads: what the socket does not take waits in c.pending),
// its preface written.
func newH2TestConn(t *testing.T, body int) (*netThread, *conn) {
	t.Helper()
	th := newTestThread(t)
	cfg := &th.r.cfg
	cfg.HTTP2, cfg.Streams, cfg.Pipeline, cfg.Method, cfg.Body = true, 8, 8, "POST", bytes.Repeat([]byte("b"), body)
	req, err := newH2Requests(cfg, "run")
	if err != nil {
		t.Fatal(err)
	}
	th.r.h2req = req
	th.r.afterBackoff = func(time.Duration, func()) {} // a closed connection is not replaced
	mine, _ := socketPair(t)
	th.adopt(handoff{fd: mine})
	c := th.conns[0]
	th.finishConnect(c)
	if c.state != connActive {
		t.Fatalf("the connection did not come up")
	}
	return th, c
}

// h2Frames is a server's frames, built with x/net's Framer.
func h2Frames(write func(fr *http2.Framer, enc *hpack.Encoder, block *bytes.Buffer)) []byte {
	var out, block bytes.Buffer
	fr := http2.NewFramer(&out, nil)
	write(fr, hpack.NewEncoder(&block), &block)
	return out.Bytes()
}

// checkH2Invariants: the counts the connection keeps agree with its ring.
func checkH2Invariants(t *testing.T, c *conn) {
	t.Helper()
	if c.state != connActive {
		return
	}
	h := c.h2
	if h.open < 0 || h.open > c.inflight || c.inflight > len(h.done) {
		t.Fatalf("open %d, inflight %d, ring %d", h.open, c.inflight, len(h.done))
	}
	if h.send.waiting < 0 || h.send.waiting > h.open {
		t.Fatalf("%d bodies waiting, %d streams open", h.send.waiting, h.open)
	}
	if h.send.connWin > h2MaxWindow {
		t.Fatalf("connection window %d", h.send.connWin)
	}
}

// FuzzH2Consume feeds any bytes as a server's frames to a connection with
// requests in flight, their bodies waiting on the windows: no panic, and
// the connection's counts stay consistent whatever the server sends.
func FuzzH2Consume(f *testing.F) {
	f.Add(h2Frames(func(fr *http2.Framer, enc *hpack.Encoder, block *bytes.Buffer) {
		enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
		enc.WriteField(hpack.HeaderField{Name: "x-pad", Value: "0123456789"})
		b := block.Bytes()
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: b[:3]})
		fr.WriteContinuation(1, false, b[3:6])
		fr.WriteContinuation(1, true, b[6:])
		fr.WriteData(1, true, []byte("ok"))
	}))
	f.Add(h2Frames(func(fr *http2.Framer, _ *hpack.Encoder, _ *bytes.Buffer) {
		fr.WriteWindowUpdate(0, 1<<20)
		fr.WriteWindowUpdate(3, 100)
		fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 10}, http2.Setting{ID: http2.SettingMaxFrameSize, Val: 20000})
		fr.WriteRSTStream(5, http2.ErrCodeRefusedStream)
		fr.WriteGoAway(7, http2.ErrCodeNo, nil)
	}))
	f.Add(h2Frames(func(fr *http2.Framer, _ *hpack.Encoder, _ *bytes.Buffer) {
		fr.WriteSettings(http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: 10})
		fr.WriteWindowUpdate(1, 1<<31-1)
	}))
	settings := h2Frames(func(fr *http2.Framer, _ *hpack.Encoder, _ *bytes.Buffer) {
		fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1000})
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		th, c := newH2TestConn(t, 3000)
		now := th.now()
		if !feed(th, c, settings, now) {
			t.Fatalf("the server's SETTINGS closed the connection")
		}
		th.topUp(c, now)
		checkH2Invariants(t, c)
		if feed(th, c, data, now) {
			th.topUp(c, now)
		}
		checkH2Invariants(t, c)
	})
}

// A request and its response, with and without a body, cost one
// allocation: the HeadersFrame x/net's Framer makes for every HEADERS
// frame it reads (it reuses DATA frames only). Flow control, the header
// block's CONTINUATION handling and its limit add none.
func TestH2AllocsPerRequest(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, body := range []int{0, 3000} {
		th, c := newH2TestConn(t, body)
		th.r.cfg.Pipeline = 1 // one request at a time: each turn sends one, reads one
		now := th.now()
		feed(th, c, h2Frames(func(fr *http2.Framer, _ *hpack.Encoder, _ *bytes.Buffer) {
			fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 30})
			fr.WriteWindowUpdate(0, 1<<30)
		}), now)
		th.topUp(c, now)
		var out, block bytes.Buffer
		fr := http2.NewFramer(&out, nil)
		hpack.NewEncoder(&block).WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
		id := uint32(1)
		allocs := testing.AllocsPerRun(1000, func() {
			out.Reset()
			fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndHeaders: true})
			fr.WriteData(id, true, []byte("ok"))
			feed(th, c, out.Bytes(), now)
			th.topUp(c, now)
			c.pending = c.pending[:0] // the peer never reads: forget what the socket did not take
			id += 2
		})
		if c.state != connActive || c.received < 1000 {
			t.Fatalf("body %d: state %v, %d answered", body, c.state, c.received)
		}
		if allocs > 1 {
			t.Errorf("body %d: %.1f allocations per request, want at most 1", body, allocs)
		}
	}
}
