package loadtester

import (
	"fmt"

	"golang.org/x/net/http2"
)

// What the client sends over HTTP/2 and what the server allows it to
// (RFC 9113 §5.2, §6.5.2, §6.9): the request's header block split to the
// server's SETTINGS_MAX_FRAME_SIZE, its body in DATA frames no larger and
// never past the server's windows, the connection's and each stream's.
// A body that finds a window shut waits: WINDOW_UPDATE and a larger
// SETTINGS_INITIAL_WINDOW_SIZE send what they allow, oldest stream first.
// A change of SETTINGS_INITIAL_WINDOW_SIZE moves every open stream's
// window by the difference, so a window may go negative (§6.9.2), and
// that stream then waits for the updates that bring it above zero.
//
// Who owns what: like the rest of an h2Conn, its loop's alone. The
// per-stream state is in rings beside the others (h2Conn.done), indexed
// by ring entry; nothing is allocated per request once each entry's
// buffer has grown to the bodies it keeps.
//
// A stream's body is a slice in the ring (body): a body without
// placeholders is the kind's own bytes, shared and never copied; a
// rendered one is in the thread's scratch, which the next request
// reuses, so when it must wait for a window it is copied into its ring
// entry's own buffer (keep, keepWaiting), and only then.

const (
	h2DefaultWindow = 65535 // a window before any SETTINGS or WINDOW_UPDATE (§6.9.2)
	h2MaxWindow     = 1<<31 - 1
)

// h2Send is a connection's send side.
type h2Send struct {
	connWin  int64    // the server's connection window: what may still be sent
	initWin  int64    // the server's SETTINGS_INITIAL_WINDOW_SIZE
	maxFrame int      // the server's SETTINGS_MAX_FRAME_SIZE
	win      []int64  // ring: the stream's window
	sent     []int    // ring: body bytes sent
	ids      []uint32 // ring: the stream's ID
	body     [][]byte // ring: the stream's body (its first sent bytes already sent)
	keep     [][]byte // ring: a rendered body's copy while it waits for a window
	waiting  int      // streams whose body is not all sent
}

func newH2Send(ring int) h2Send {
	return h2Send{connWin: h2DefaultWindow, initWin: h2DefaultWindow, maxFrame: h2MaxFrame,
		win: make([]int64, ring), sent: make([]int, ring), ids: make([]uint32, ring),
		body: make([][]byte, ring), keep: make([][]byte, ring)}
}

// writeRequest writes a request on stream id, ring entry i, into h.out:
// its header block, then as much of its body as the windows allow. It
// reports whether some of the body waits for a window (then body must
// stay as it is, or be kept: keepWaiting).
func (h *h2Conn) writeRequest(i int, id uint32, block, body []byte) bool {
	h.idsLeft--
	h.writeBlock(id, block, len(body) == 0)
	s := &h.send
	s.ids[i], s.win[i], s.sent[i], s.body[i] = id, s.initWin, 0, body
	if len(body) == 0 {
		return false
	}
	s.waiting++
	h.writeBody(i)
	return h.bodyLeft(i)
}

// keepWaiting copies ring entry i's body into the entry's own buffer, which
// it keeps from one request to the next.
func (h *h2Conn) keepWaiting(i int) {
	s := &h.send
	s.keep[i] = append(s.keep[i][:0], s.body[i]...)
	s.body[i] = s.keep[i]
}

// writeBlock writes a header block as a HEADERS frame and as many
// CONTINUATION frames as the server's frame size needs.
func (h *h2Conn) writeBlock(id uint32, block []byte, endStream bool) {
	first := block[:min(len(block), h.send.maxFrame)]
	rest := block[len(first):]
	var flags http2.Flags
	if endStream {
		flags |= http2.FlagHeadersEndStream
	}
	if len(rest) == 0 {
		flags |= http2.FlagHeadersEndHeaders
	}
	h.writeFrame(http2.FrameHeaders, flags, id, first)
	for len(rest) > 0 {
		frag := rest[:min(len(rest), h.send.maxFrame)]
		rest = rest[len(frag):]
		flags = 0
		if len(rest) == 0 {
			flags = http2.FlagContinuationEndHeaders
		}
		h.writeFrame(http2.FrameContinuation, flags, id, frag)
	}
}

// writeFrame appends one frame of a request (HEADERS, CONTINUATION, DATA)
// to h.out: its 9-byte header, then payload. Hand-written where the
// Framer's WriteHeaders and WriteData cost about 250 instructions a
// request (a parameter struct, checks of what the caller guarantees: a
// payload within the server's frame size, an odd stream identifier below
// 2^31, which h2StreamIDs bounds); the connection's other frames, rare,
// still go through the Framer.
func (h *h2Conn) writeFrame(typ http2.FrameType, flags http2.Flags, id uint32, payload []byte) {
	n := len(payload)
	hdr := [9]byte{byte(n >> 16), byte(n >> 8), byte(n), byte(typ), byte(flags), byte(id >> 24), byte(id >> 16), byte(id >> 8), byte(id)}
	h.out.Write(hdr[:])
	h.out.Write(payload)
}

// writeBody writes what the windows allow of ring entry i's body.
func (h *h2Conn) writeBody(i int) {
	s := &h.send
	body := s.body[i]
	for off := s.sent[i]; off < len(body) && s.connWin > 0 && s.win[i] > 0; off = s.sent[i] {
		n := int(min(int64(len(body)-off), int64(s.maxFrame), s.connWin, s.win[i]))
		end := off+n == len(body)
		var flags http2.Flags
		if end {
			flags = http2.FlagDataEndStream
		}
		h.writeFrame(http2.FrameData, flags, s.ids[i], body[off:off+n])
		s.sent[i] += n
		s.connWin -= int64(n)
		s.win[i] -= int64(n)
		if end {
			s.waiting--
		}
	}
}

// bodyLeft reports whether ring entry i's body is not all sent.
func (h *h2Conn) bodyLeft(i int) bool { return h.send.sent[i] < len(h.send.body[i]) }

// dropBody forgets the rest of ring entry i's body: its stream ended.
func (h *h2Conn) dropBody(i int) {
	if h.bodyLeft(i) {
		h.send.sent[i] = len(h.send.body[i])
		h.send.waiting--
	}
}

// h2WriteWaiting writes what the windows now allow of the bodies
// waiting, oldest stream first.
func (h *h2Conn) h2WriteWaiting(c *conn) {
	for j := 0; j < c.inflight && h.send.waiting > 0 && h.send.connWin > 0; j++ {
		i := (c.head + j) & c.mask
		if !h.done[i] && h.bodyLeft(i) {
			h.writeBody(i)
		}
	}
}

// h2WindowUpdate adds a server's WINDOW_UPDATE to its window; false means
// the connection closed. A window past 2^31-1 is a flow-control error:
// the connection's fails the connection, a stream's the stream.
func (h *h2Conn) h2WindowUpdate(c *conn, stream, increment uint32, now int64) bool {
	s := &h.send
	inc := int64(increment)
	if stream == 0 {
		if s.connWin += inc; s.connWin > h2MaxWindow {
			h.ev.failConn(c, now, errParse)
			return false
		}
		h.h2WriteWaiting(c)
		return true
	}
	i, st := h.h2Entry(c, stream)
	switch st {
	case streamIdle:
		h.ev.failConn(c, now, errParse)
		return false
	case streamClosed:
		return true
	}
	if s.win[i] += inc; s.win[i] > h2MaxWindow {
		h.fr.WriteRSTStream(stream, http2.ErrCodeFlowControl)
		h.h2Fail(c, i, now, errParse)
		return true
	}
	if h.bodyLeft(i) {
		h.writeBody(i)
	}
	return true
}

// h2Settings applies the server's SETTINGS and acknowledges them before
// any DATA they allow; false means the connection closed.
func (h *h2Conn) h2Settings(c *conn, f *h2InFrame, now int64) bool {
	if h.max == 0 {
		h.max = h.ring
	}
	ok := true
	for n := range f.settings() {
		st := f.setting(n)
		if st.Valid() != nil {
			ok = false
			continue
		}
		switch st.ID {
		case http2.SettingMaxConcurrentStreams:
			h.max = int(min(st.Val, uint32(h.ring)))
		case http2.SettingMaxFrameSize:
			h.send.maxFrame = int(st.Val)
		case http2.SettingInitialWindowSize:
			ok = ok && h.h2InitialWindow(c, int64(st.Val))
		case http2.SettingMaxHeaderListSize:
			h.maxList = st.Val
		}
	}
	if !ok {
		h.ev.failConn(c, now, errParse)
		return false
	}
	h.fr.WriteSettingsAck()
	if h.maxList != 0 && h.listSize > h.maxList && !c.noNew {
		// The bound holds for every request: none can be sent on this
		// connection without risking one over the limit.
		c.noNew, c.refused = true, true
		h.ev.connError(now, errHeaderTooLarge)
	}
	h.h2WriteWaiting(c)
	return true
}

// h2SettingsAllow checks, before any load, that the server's first
// SETTINGS allow the requests: their header lists within the server's
// SETTINGS_MAX_HEADER_LIST_SIZE (a later, smaller one is met in the loop).
// With placeholders the size is the bound (h2render.go).
func h2SettingsAllow(f *http2.SettingsFrame, req *h2Requests) error {
	if v, ok := f.Value(http2.SettingMaxHeaderListSize); ok && req != nil && req.listSize > v {
		return fmt.Errorf("the request's header list takes up to %d bytes (RFC 9113 §6.5.2: names, values and 32 a field; a placeholder counts its longest value), over the server's SETTINGS_MAX_HEADER_LIST_SIZE of %d: shorten --header or --url's path", req.listSize, v)
	}
	return nil
}

// h2InitialWindow applies a new SETTINGS_INITIAL_WINDOW_SIZE to every open
// stream (§6.9.2); false when a window would pass 2^31-1.
func (h *h2Conn) h2InitialWindow(c *conn, v int64) bool {
	delta := v - h.send.initWin
	h.send.initWin = v
	for j := range c.inflight {
		i := (c.head + j) & c.mask
		if h.done[i] {
			continue
		}
		if h.send.win[i] += delta; h.send.win[i] > h2MaxWindow {
			return false
		}
	}
	return true
}
