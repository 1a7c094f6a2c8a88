package loadtester

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"weaseldb/loadtester/check"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// HTTP/2 (--http2): h2 over TLS by ALPN, h2c by prior knowledge on
// plaintext. The server's frames are read in place (h2frames.go), the
// client's written by golang.org/x/net/http2's Framer, and HPACK is its
// hpack; this file gathers whole frames (the loop's reads end anywhere),
// reads them one at a time, and maps streams to the connection's ring. Response header blocks are h2headers.go's; what the client sends,
// within the server's windows and SETTINGS, is h2send.go's; the requests
// themselves, static or rendered, h2render.go's.
//
// Who owns what: an h2Conn is its connection's, so its network thread's
// loop's alone, like the rest of the conn.
//
// Streams end in any order, but the engine's ring (the send times, the
// sweep's oldest request at the head, the tail's unfinished requests)
// assumes order. So a stream that ends is recorded at once, at its own
// time, and marked done in the ring; the head then moves past every done
// entry. The ring's inflight therefore counts the streams still open and
// the done ones behind an open one; lose and finish skip the done ones.
// Stream n (from 0) of a connection has ID 2n+1 and ring entry n & mask,
// as requests take ring entries in the order they are sent.

const (
	h2MaxFrame     = 16384    // SETTINGS_MAX_FRAME_SIZE we accept (the default: we advertise no other)
	h2Window       = 1 << 30  // the receive window we give each stream and the connection
	h2WindowRefill = 1 << 29  // connection bytes received before the window is topped up again
	h2MaxPartial   = 32 << 10 // bytes of an incomplete frame kept between reads (one frame: at most 9 + h2MaxFrame)
)

// h2StreamIDs is how many streams a client may open on one connection:
// its identifiers are the odd ones of 31 bits, 1 to 2^31-1 (RFC 9113
// §5.1.1). A connection that used them all opens no new stream and is
// retired once its streams end; a fresh connection goes on. A variable so
// a test can run out of them in a few requests.
var h2StreamIDs = 1 << 30

// h2Conn is a connection's HTTP/2 state.
type h2Conn struct {
	fr      *http2.Framer // writes the client's frames into out
	in      h2FrameReader // reads the server's
	frame   h2InFrame     // the frame being handled
	out     bytes.Buffer  // frames written, for the next write
	dec     *hpack.Decoder
	hb      headerBlock // the response header block being read (h2headers.go)
	memo    h2BlockMemo // the last block decoded, while it left the table alone (h2blockmemo.go)
	done    []bool      // ring: the stream ended (recorded or failed), not yet passed by the head
	final   []uint16    // ring: the stream's final status
	open    int         // streams open
	max     int         // streams the server allows: 0 until its first SETTINGS, then its SETTINGS_MAX_CONCURRENT_STREAMS (at most the ring's size)
	idsLeft int         // stream identifiers not yet used (h2StreamIDs)
	ring    int
	unacked int64  // connection bytes received since the last WINDOW_UPDATE
	send    h2Send // what the server's windows and SETTINGS allow (h2send.go)
	maxList uint32 // the server's SETTINGS_MAX_HEADER_LIST_SIZE (0: none)
	// ev: the connection's thread, as a protocol sees it, kept from the
	// last start or consume for the frames' handlers (one load where a
	// parameter went through every call).
	ev connEvents
	// staticBlock, staticBody: h2Static's one request (protocolFor).
	staticBlock, staticBody []byte
	// listSize bounds our requests' header lists (h2Requests.listSize),
	// for the server's SETTINGS_MAX_HEADER_LIST_SIZE.
	listSize uint32
	// What --check reads of each stream's response, kept only when a
	// check reads it (keepHead, keepBody), and judged at the stream's end
	// (h2End): rings of the final response's header lines ("name:
	// value\r\n", as check.Response has them) and of its body's first
	// maxCheckedBody bytes, emptied when the stream closes.
	keepHead, keepBody bool
	heads, bodies      [][]byte
}

// newH2Conn is a connection's HTTP/2 state, ring entries deep; of each
// response it keeps what the checks read (needs).
func newH2Conn(ring int, needs check.Needs) *h2Conn {
	// No stream before the server's SETTINGS: streams past its limit would
	// be refused (RST_STREAM), and it sends its SETTINGS first thing.
	h := &h2Conn{done: make([]bool, ring), final: make([]uint16, ring), ring: ring, send: newH2Send(ring),
		keepHead: needs.Header, keepBody: needs.Body, heads: make([][]byte, ring), bodies: make([][]byte, ring),
		idsLeft: h2StreamIDs}
	h.fr = http2.NewFramer(&h.out, nil)
	h.dec = newH2Decoder(&h.hb, needs.Header)
	return h
}

// writePreface writes what a client sends first: the preface, its
// settings (no push, a large stream window, the header list it accepts)
// and a large connection window.
func (h *h2Conn) writePreface() {
	h.out.WriteString(http2.ClientPreface)
	h.fr.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2Window},
		http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: h2MaxHeaderList})
	h.fr.WriteWindowUpdate(0, h2Window-65535)
}

// room is how many more streams the server allows now.
func (h *h2Conn) room() int { return min(h.max-h.open, h.idsLeft) }

// HTTP/2 behind the protocol seam (protocol.go): an h2Conn is its
// connection's protocol.

// start writes the preface on a connection that just came up.
func (h *h2Conn) start(ev connEvents, c *conn) {
	h.ev = ev
	h.writePreface()
	h.ev.write(c, h.out.Bytes())
	h.out.Reset()
}

// ended reports a stream that ended behind an open one (booked then).
func (h *h2Conn) ended(_ *conn, i int) bool { return h.done[i] }

// passEnded moves the head past such a stream.
func (h *h2Conn) passEnded(c *conn) bool {
	if !h.done[c.head] {
		return false
	}
	h.done[c.head] = false
	c.head = (c.head + 1) & c.mask
	c.inflight--
	return true
}

// streamState is what a stream ID names on a connection.
type streamState uint8

const (
	streamOpen   streamState = iota
	streamClosed             // opened by us, ended since (answered, failed or reset)
	streamIdle               // never opened by us: a server's frame on it is a protocol error
)

// h2Entry is the ring entry of stream id and the stream's state; the
// entry means something only for an open stream.
func (h *h2Conn) h2Entry(c *conn, id uint32) (int, streamState) {
	if id == 0 || id%2 == 0 {
		return 0, streamIdle
	}
	n := int(id-1) / 2
	switch {
	case n >= c.sent:
		return 0, streamIdle
	case n < c.sent-c.inflight:
		return 0, streamClosed
	}
	i := n & c.mask
	if h.done[i] {
		return i, streamClosed
	}
	return i, streamOpen
}

// h2End books stream entry i as answered at now, or as failed with kind
// check when its response fails a check (the thread's answer). A
// response may end before its request's body is all sent (§8.1): the
// rest is not sent, and RST_STREAM tells the server so.
func (h *h2Conn) h2End(c *conn, i int, now int64) {
	if h.bodyLeft(i) {
		h.fr.WriteRSTStream(h.send.ids[i], http2.ErrCodeCancel)
	}
	h.ev.answer(c, i, now, int(h.final[i]))
	h.h2Close(c, i)
}

// response is what the checks read of stream entry i's final response.
func (h *h2Conn) response(i int) (int, []byte, []byte) {
	return int(h.final[i]), h.heads[i], h.bodies[i]
}

// eof: a stream's end delimits no response (each ends with its stream).
func (h *h2Conn) eof(connEvents, *conn, int64) bool { return false }

// keepData keeps a DATA frame's bytes for the checks, up to
// maxCheckedBody of ring entry i's body (the rest is not kept).
func (h *h2Conn) keepData(i int, data []byte) {
	if b := h.bodies[i]; len(b) < maxCheckedBody {
		h.bodies[i] = append(b, data[:min(len(data), maxCheckedBody-len(b))]...)
	}
}

// h2Fail counts stream entry i as failed with kind (RST_STREAM, a GOAWAY
// that did not process it, a check), in the books of the phase it was
// due in and of its kind.
func (h *h2Conn) h2Fail(c *conn, i int, now int64, kind errorKind) {
	h.ev.failEntry(c, i, now, kind)
	h.h2Close(c, i)
}

// h2Close marks entry i done and moves the head past the done entries.
// The entry's response is forgotten: the next stream on it has no status,
// header lines or body until its own arrive (a check or the books must
// never read this one's).
func (h *h2Conn) h2Close(c *conn, i int) {
	h.dropBody(i)
	h.final[i], h.heads[i], h.bodies[i] = 0, h.heads[i][:0], h.bodies[i][:0]
	h.done[i] = true
	h.open--
	for c.inflight > 0 && h.done[c.head] {
		h.done[c.head] = false
		c.head = (c.head + 1) & c.mask
		c.inflight--
	}
}

// consume handles the whole frames in data and keeps a partial one;
// false means the connection closed.
func (h *h2Conn) consume(ev connEvents, c *conn, data []byte, now int64) bool {
	h.ev = ev
	for {
		total, ok := h2FrameSpan(data)
		if total < 0 {
			h.ev.failConn(c, now, errParse)
			return false
		}
		if !ok {
			break
		}
		if err := h.in.read(data[:total], &h.frame); err != nil {
			h.ev.failConn(c, now, errParse)
			return false
		}
		data = data[total:]
		if !h.h2Frame(c, &h.frame, now) {
			return false
		}
	}
	if len(data) > 0 {
		if len(data) > h2MaxPartial {
			h.ev.failConn(c, now, errParse)
			return false
		}
		c.partial = append(c.partial, data...)
	}
	if h.out.Len() > 0 { // acknowledgements and window updates
		h.ev.write(c, h.out.Bytes())
		h.out.Reset()
		if c.state != connActive {
			return false
		}
	}
	if h.open == 0 && (c.noNew || c.quota > 0 && c.sent >= c.quota || h.idsLeft == 0) { // GOAWAY, the quota or the stream identifiers used up, and answered
		h.ev.retire(c, now)
		return false
	}
	return true
}

// h2FrameSpan is the length of the frame at the start of data; ok is
// false while it is incomplete, total < 0 for a frame larger than we
// accept. A header block's CONTINUATION frames are frames of their own:
// the block is decoded as they come (h2headers.go).
func h2FrameSpan(data []byte) (total int, ok bool) {
	if len(data) < 9 {
		return 0, false
	}
	length := int(data[0])<<16 | int(data[1])<<8 | int(data[2])
	if length > h2MaxFrame {
		return -1, false
	}
	total = 9 + length
	return total, len(data) >= total
}

// h2Frame handles one frame from the server; false means the connection
// closed.
func (h *h2Conn) h2Frame(c *conn, f *h2InFrame, now int64) bool {
	switch f.typ {
	case http2.FrameHeaders:
		return h.h2HeadersFrame(c, f, now)
	case http2.FrameContinuation: // the reader checks it follows its HEADERS
		return h.h2Fragment(c, f.body, f.endHeaders(), now)
	case http2.FrameData:
		return h.h2Data(c, f, now)
	case http2.FrameRSTStream:
		if i, st := h.h2Entry(c, f.stream); st == streamOpen {
			h.h2Fail(c, i, now, errReset)
		}
	case http2.FrameSettings:
		if f.ack() {
			return true
		}
		return h.h2Settings(c, f, now)
	case http2.FrameWindowUpdate:
		return h.h2WindowUpdate(c, f.stream, f.increment(), now)
	case http2.FramePing:
		if !f.ack() {
			h.fr.WritePing(true, f.pingData())
		}
	case http2.FrameGoAway:
		last, _ := f.goAway()
		h.h2GoAway(c, last, now)
	case http2.FramePushPromise:
		h.ev.failConn(c, now, errParse) // push is off (our SETTINGS)
		return false
	}
	return true
}

// h2Data handles a DATA frame: flow control, the body's bytes for the
// checks, the stream's end; false means the connection closed (a frame on
// a stream never opened).
func (h *h2Conn) h2Data(c *conn, f *h2InFrame, now int64) bool {
	if h.unacked += int64(f.length); h.unacked >= h2WindowRefill {
		h.fr.WriteWindowUpdate(0, uint32(h.unacked))
		h.unacked = 0
	}
	i, st := h.h2Entry(c, f.stream)
	switch st {
	case streamIdle:
		h.ev.failConn(c, now, errParse)
		return false
	case streamOpen:
		if h.keepBody {
			h.keepData(i, f.body)
		}
		if f.endStream() {
			h.h2End(c, i, now)
		}
	}
	return true
}

// h2GoAway: no new stream on this connection (topUp, hasRoom), and the
// streams past last failed: the server never processed them.
func (h *h2Conn) h2GoAway(c *conn, last uint32, now int64) {
	c.noNew = true
	// From the newest down: failing the head moves it past the done
	// entries above, which must all be done by then.
	for n := c.sent - 1; n >= c.sent-c.inflight; n-- {
		if id := uint32(2*n + 1); id > last {
			if i := n & c.mask; !h.done[i] {
				h.h2Fail(c, i, now, errEOF)
			}
		}
	}
}

// h2Preflight checks, before any load, that the target speaks HTTP/2:
// over TLS the preflight's ALPN (tlsPreflight), here h2c by prior
// knowledge: the preface and our SETTINGS get the server's SETTINGS.
func h2Preflight(cfg *Config, req *h2Requests) error {
	network, address := cfg.dialTarget()
	nc, err := net.DialTimeout(network, address, cfg.ConnectTimeout)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Err != nil {
			err = op.Err
		}
		return fmt.Errorf("cannot connect to %s %s: %w", network, address, err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(cfg.ConnectTimeout))
	h := newH2Conn(1, check.Needs{})
	h.writePreface()
	if _, err := nc.Write(h.out.Bytes()); err != nil {
		return fmt.Errorf("%s %s: HTTP/2 preface: %w", network, address, err)
	}
	var head [9]byte
	n, err := io.ReadFull(nc, head[:])
	if err == nil && http2.FrameType(head[3]) == http2.FrameSettings {
		f, err := http2.NewFramer(nil, io.MultiReader(bytes.NewReader(head[:]), nc)).ReadFrame()
		if err != nil {
			return fmt.Errorf("%s %s: the server's SETTINGS: %w", network, address, err)
		}
		if sf, ok := f.(*http2.SettingsFrame); ok {
			if err := h2SettingsAllow(sf, req); err != nil {
				return fmt.Errorf("%s %s: %w", network, address, err)
			}
		}
		return nil
	}
	return fmt.Errorf("%s %s does not speak HTTP/2 with prior knowledge (h2c): to the preface it answered %q%s",
		network, address, head[:n], errSuffix(err))
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return " (" + err.Error() + ")"
}
