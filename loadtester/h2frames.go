package loadtester

import (
	"encoding/binary"
	"errors"

	"golang.org/x/net/http2"
)

// The server's frames, read in place (RFC 9113 §4.1, §6). Hand-written
// because it is the client's hot path: x/net's Framer reads a frame
// through an io.Reader (copying the payload into its own buffer) and
// allocates a HeadersFrame for every response, ~44% of the instructions
// the client spent on an h2 response under callgrind. consume already
// holds every whole frame in memory (h2FrameSpan), so a frame here is a
// view of those bytes: nothing is copied or allocated.
//
// It rejects what the Framer rejects, no more and no less (the
// differential fuzz target FuzzH2FrameReader holds it to that): sizes per
// type, stream 0 or not per type, padding longer than the payload,
// SETTINGS' length and ACK, a WINDOW_UPDATE of 0, and the header block's
// order (after a HEADERS without END_HEADERS only CONTINUATION frames of
// that stream until one ends it). Unknown types are accepted (and
// ignored by the caller) outside a header block. The Framer still writes
// the client's own frames.
//
// Who owns what: an h2FrameReader is its connection's (its loop's alone);
// an h2InFrame is valid until the bytes it was read from are reused.

// Why a frame is rejected: sentinels, so a rejection allocates nothing.
var (
	errH2FrameTooLarge   = errors.New("http2 frame larger than SETTINGS_MAX_FRAME_SIZE")
	errH2FrameShort      = errors.New("http2 frame shorter than its header")
	errH2FrameSize       = errors.New("http2 frame's length wrong for its type")
	errH2StreamZero      = errors.New("http2 frame on stream 0 where its type needs a stream")
	errH2StreamNonZero   = errors.New("http2 frame on a stream where its type needs stream 0")
	errH2Padding         = errors.New("http2 frame's padding longer than its payload")
	errH2SettingsAck     = errors.New("http2 SETTINGS ACK with a payload")
	errH2SettingsWindow  = errors.New("http2 SETTINGS_INITIAL_WINDOW_SIZE over 2^31-1")
	errH2WindowZero      = errors.New("http2 WINDOW_UPDATE of 0")
	errH2ContinuationOut = errors.New("http2 CONTINUATION outside a header block")
	errH2BlockBroken     = errors.New("http2 header block interrupted by another frame or stream")
)

// Flags the client reads (they share bit values across types).
const (
	h2FlagEndStream  = 0x1 // DATA, HEADERS
	h2FlagAck        = 0x1 // SETTINGS, PING
	h2FlagEndHeaders = 0x4 // HEADERS, CONTINUATION, PUSH_PROMISE
	h2FlagPadded     = 0x8 // DATA, HEADERS, PUSH_PROMISE
	h2FlagPriority   = 0x20
)

// h2InFrame is one frame from the server, read in place.
type h2InFrame struct {
	typ    http2.FrameType
	flags  uint8
	stream uint32 // the reserved bit cleared
	length uint32 // the payload's length, padding included (what flow control counts)
	// body: DATA's data, HEADERS', CONTINUATION's and PUSH_PROMISE's
	// fragment (padding and priority removed), or the whole payload of
	// any other type.
	body []byte
}

func (f *h2InFrame) endStream() bool  { return f.flags&h2FlagEndStream != 0 }
func (f *h2InFrame) endHeaders() bool { return f.flags&h2FlagEndHeaders != 0 }
func (f *h2InFrame) ack() bool        { return f.flags&h2FlagAck != 0 }

// u32 is the big-endian word at off of the body, the reserved bit kept.
func (f *h2InFrame) u32(off int) uint32 { return binary.BigEndian.Uint32(f.body[off:]) }

// errCode is RST_STREAM's error code.
func (f *h2InFrame) errCode() http2.ErrCode { return http2.ErrCode(f.u32(0)) }

// increment is WINDOW_UPDATE's increment.
func (f *h2InFrame) increment() uint32 { return f.u32(0) & (1<<31 - 1) }

// pingData is PING's opaque data.
func (f *h2InFrame) pingData() (d [8]byte) {
	copy(d[:], f.body)
	return d
}

// goAway is GOAWAY's last stream ID and error code.
func (f *h2InFrame) goAway() (last uint32, code http2.ErrCode) {
	return f.u32(0) & (1<<31 - 1), http2.ErrCode(f.u32(4))
}

// settings is how many settings a SETTINGS frame carries; setting(i) the
// i-th of them.
func (f *h2InFrame) settings() int { return len(f.body) / 6 }

func (f *h2InFrame) setting(i int) http2.Setting {
	p := f.body[i*6:]
	return http2.Setting{ID: http2.SettingID(binary.BigEndian.Uint16(p)), Val: binary.BigEndian.Uint32(p[2:])}
}

// h2FrameReader reads a connection's frames one at a time; it remembers
// the header block left open.
type h2FrameReader struct {
	block uint32 // the stream whose header block awaits a CONTINUATION (0: none)
}

// read reads the one whole frame in p (as h2FrameSpan cut it) into f
// (filled in place: the hot path copies no frame around).
func (r *h2FrameReader) read(p []byte, f *h2InFrame) error {
	if len(p) < 9 {
		return errH2FrameShort
	}
	length := uint32(p[0])<<16 | uint32(p[1])<<8 | uint32(p[2])
	if length > h2MaxFrame {
		return errH2FrameTooLarge
	}
	if int(length) != len(p)-9 {
		return errH2FrameShort
	}
	f.typ, f.flags, f.stream, f.length, f.body = http2.FrameType(p[3]), p[4], binary.BigEndian.Uint32(p[5:])&(1<<31-1), length, p[9:]
	if err := r.order(f); err != nil {
		return err
	}
	return f.check()
}

// order holds a header block together: once a HEADERS or CONTINUATION
// leaves it open, only a CONTINUATION of its stream may come next.
func (r *h2FrameReader) order(f *h2InFrame) error {
	if r.block != 0 {
		if f.typ != http2.FrameContinuation || f.stream != r.block {
			return errH2BlockBroken
		}
	} else if f.typ == http2.FrameContinuation {
		return errH2ContinuationOut
	}
	if f.typ == http2.FrameHeaders || f.typ == http2.FrameContinuation {
		r.block = 0
		if !f.endHeaders() {
			r.block = f.stream
		}
	}
	return nil
}

// check validates the frame for its type and trims its body.
func (f *h2InFrame) check() error {
	switch f.typ {
	case http2.FrameData:
		return f.checkPadded(f.flags&h2FlagPadded != 0, 0)
	case http2.FrameHeaders:
		prio := 0
		if f.flags&h2FlagPriority != 0 {
			prio = 5
		}
		return f.checkPadded(f.flags&h2FlagPadded != 0, prio)
	case http2.FramePushPromise:
		return f.checkPadded(f.flags&h2FlagPadded != 0, 4)
	case http2.FrameContinuation:
		return f.needStream(true)
	case http2.FramePriority:
		return f.checkFixed(true, 5)
	case http2.FrameRSTStream:
		return f.checkFixed(true, 4)
	case http2.FramePing:
		return f.checkFixed(false, 8)
	case http2.FrameWindowUpdate:
		if len(f.body) != 4 {
			return errH2FrameSize
		}
		if f.increment() == 0 {
			return errH2WindowZero
		}
		return nil
	case http2.FrameSettings:
		return f.checkSettings()
	case http2.FrameGoAway:
		if err := f.needStream(false); err != nil {
			return err
		}
		if len(f.body) < 8 {
			return errH2FrameSize
		}
		return nil
	case http2.FramePriorityUpdate:
		if err := f.needStream(false); err != nil {
			return err
		}
		if len(f.body) < 4 {
			return errH2FrameSize
		}
		if f.u32(0)&(1<<31-1) == 0 {
			return errH2StreamZero
		}
		return nil
	}
	return nil // unknown types are ignored (§5.5)
}

// needStream: the type needs a stream (want) or stream 0.
func (f *h2InFrame) needStream(want bool) error {
	switch {
	case want && f.stream == 0:
		return errH2StreamZero
	case !want && f.stream != 0:
		return errH2StreamNonZero
	}
	return nil
}

// checkFixed: a frame of one length, on a stream or on stream 0.
func (f *h2InFrame) checkFixed(stream bool, length int) error {
	if len(f.body) != length {
		return errH2FrameSize
	}
	return f.needStream(stream)
}

// checkPadded: a frame on a stream, with skip bytes (priority, promised
// stream) after its optional pad length; the body keeps what is between
// them and the padding.
func (f *h2InFrame) checkPadded(padded bool, skip int) error {
	if f.stream == 0 {
		return errH2StreamZero
	}
	if !padded && skip == 0 { // most frames: the body is the payload
		return nil
	}
	pad := 0
	if padded {
		if len(f.body) < 1 {
			return errH2FrameSize
		}
		pad, f.body = int(f.body[0]), f.body[1:]
	}
	if len(f.body) < skip {
		return errH2FrameSize
	}
	if f.body = f.body[skip:]; pad > len(f.body) {
		return errH2Padding
	}
	f.body = f.body[:len(f.body)-pad]
	return nil
}

// checkSettings: on stream 0, an ACK empty, settings of 6 bytes each, and
// the first SETTINGS_INITIAL_WINDOW_SIZE within 2^31-1 (as the Framer
// rejects it; every setting's value is h2Settings' to check).
func (f *h2InFrame) checkSettings() error {
	if f.ack() && len(f.body) > 0 {
		return errH2SettingsAck
	}
	if err := f.needStream(false); err != nil {
		return err
	}
	if len(f.body)%6 != 0 {
		return errH2FrameSize
	}
	for i := range f.settings() {
		if s := f.setting(i); s.ID == http2.SettingInitialWindowSize {
			if s.Val > 1<<31-1 {
				return errH2SettingsWindow
			}
			break
		}
	}
	return nil
}
