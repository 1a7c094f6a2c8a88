package loadtester

import (
	"errors"
	"strings"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Response header blocks (RFC 9113 §4.3, §6.2, §6.10): a HEADERS frame
// and any number of CONTINUATION frames, each handled as it arrives (the
// frame reader checks that nothing comes between them: h2frames.go). The block is decoded
// fragment by fragment into the connection's one HPACK decoder, keeping
// only :status and the size of the header list.
//
// Who owns what: like the rest of an h2Conn, its loop's alone.
//
// The limit: a header list (§6.5.2's size: each field's name and value
// and 32) over h2MaxHeaderList, the SETTINGS_MAX_HEADER_LIST_SIZE the
// client advertises, fails its stream alone as header_too_large. The
// block is still decoded to its end, with nothing kept: HPACK's dynamic
// table is the connection's, and a block left undecoded would leave every
// later response misread. Decoding costs the client what the server sends,
// so a block over h2MaxHeaderBlock encoded bytes, or a single string
// longer than that, fails the connection instead (as Go's own client
// gives up on a block far past its limit).

const (
	// h2MaxHeaderList is 64 KiB: a response header list is a few hundred
	// bytes from nginx and Go's server alike, and even large cookies and
	// security policies stay far below; Go's server accepts 1 MiB of
	// request headers, its client 10 MiB of response headers, numbers
	// meant for proxies, not for a load tester's own responses.
	h2MaxHeaderList = 64 << 10
	// h2MaxHeaderBlock bounds the encoded bytes of one block decoded for
	// nothing (one over the limit): past it the connection fails.
	h2MaxHeaderBlock = 1 << 20
)

// headerBlock is the response header block being read.
type headerBlock struct {
	stream uint32 // the stream it belongs to
	ends   bool   // its HEADERS frame ends the stream
	status string // :status, if the list is within the limit
	size   uint32 // the header list's size so far (§6.5.2)
	bytes  int    // encoded bytes so far
	// lines: the regular fields as "name: value\r\n", the form
	// check.Response has, when a check reads headers (the buffer is kept
	// from block to block).
	lines []byte
}

// newH2Decoder is the connection's HPACK decoder, emitting into hb (the
// regular fields too, when keepHead). A string longer than
// h2MaxHeaderBlock is an error before it is buffered.
func newH2Decoder(hb *headerBlock, keepHead bool) *hpack.Decoder {
	dec := hpack.NewDecoder(4096, func(f hpack.HeaderField) {
		hb.size += f.Size()
		switch {
		case hb.size > h2MaxHeaderList:
		case f.Name == ":status":
			hb.status = f.Value
		case keepHead && !strings.HasPrefix(f.Name, ":"):
			hb.lines = append(append(append(append(hb.lines, f.Name...), ": "...), f.Value...), "\r\n"...)
		}
	})
	dec.SetMaxStringLength(h2MaxHeaderBlock)
	return dec
}

// h2HeadersFrame starts a header block.
func (h *h2Conn) h2HeadersFrame(c *conn, f *h2InFrame, now int64) bool {
	h.hb = headerBlock{stream: f.stream, ends: f.endStream(), lines: h.hb.lines[:0]}
	if f.endHeaders() && h.memo.hit(f.body) {
		h.memo.restore(&h.hb)
		return h.h2Headers(c, now)
	}
	if err := h.memo.settle(h.dec); err != nil {
		h.ev.failConn(c, now, decodeErrorKind(err))
		return false
	}
	return h.h2Fragment(c, f.body, f.endHeaders(), now)
}

// h2Fragment decodes one fragment of the block; end: the block is whole.
// False means the connection closed.
func (h *h2Conn) h2Fragment(c *conn, frag []byte, end bool, now int64) bool {
	if h.hb.bytes += len(frag); h.hb.bytes > h2MaxHeaderBlock {
		h.ev.failConn(c, now, errHeaderTooLarge)
		return false
	}
	if h.hb.size > h2MaxHeaderList {
		h.dec.SetEmitEnabled(false) // over the limit: decoded for the table's sake alone
	}
	if _, err := h.dec.Write(frag); err != nil {
		h.ev.failConn(c, now, decodeErrorKind(err))
		return false
	}
	if !end {
		return true
	}
	h.dec.SetEmitEnabled(true)
	if err := h.dec.Close(); err != nil {
		h.ev.failConn(c, now, decodeErrorKind(err))
		return false
	}
	if h.hb.bytes == len(frag) { // the whole block came in its HEADERS frame
		h.memo.remember(frag, &h.hb)
	}
	return h.h2Headers(c, now)
}

// decodeErrorKind names an HPACK decoding failure: a string too long to
// decode is a header block too large, anything else a broken one.
func decodeErrorKind(err error) errorKind {
	if errors.Is(err, hpack.ErrStringLength) {
		return errHeaderTooLarge
	}
	return errParse
}

// h2Headers handles a header block just decoded: its :status for the
// stream, and the stream's end if the block ends it. A block over the
// limit fails its stream (and asks the server to stop sending on it).
func (h *h2Conn) h2Headers(c *conn, now int64) bool {
	hb := &h.hb
	i, st := h.h2Entry(c, hb.stream)
	switch st {
	case streamIdle:
		h.ev.failConn(c, now, errParse)
		return false
	case streamClosed: // reset by us, or a server's late frame: ignored (decoded all the same)
		return true
	}
	if hb.size > h2MaxHeaderList {
		if !hb.ends || h.bodyLeft(i) { // the server would go on sending, or wait for the body
			h.fr.WriteRSTStream(hb.stream, http2.ErrCodeCancel)
		}
		h.h2Fail(c, i, now, errHeaderTooLarge)
		return true
	}
	if hb.status != "" {
		code, ok := parseStatusCode(hb.status)
		if !ok {
			h.ev.failConn(c, now, errParse)
			return false
		}
		if code < 200 && !hb.ends { // interim: the final response follows
			return true
		}
		h.final[i] = uint16(min(code, maxStatus))
		h.heads[i] = append(h.heads[i][:0], hb.lines...) // the final response's, for the checks
	}
	if hb.ends {
		h.h2End(c, i, now)
	}
	return true
}

// parseStatusCode reads a :status value: three digits, 100 to 999 (RFC
// 9113 §8.3.2 gives the code alone; RFC 9110 §15 its three digits).
// Hand-written: strconv.Atoi took about 80 instructions a response and
// accepted a sign and leading zeros.
func parseStatusCode(s string) (int, bool) {
	if len(s) != 3 || s[0] < '1' || s[0] > '9' || s[1] < '0' || s[1] > '9' || s[2] < '0' || s[2] > '9' {
		return 0, false
	}
	return int(s[0]-'0')*100 + int(s[1]-'0')*10 + int(s[2]-'0'), true
}
