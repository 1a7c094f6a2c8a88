package loadtester

import (
	"math"

	"weaseldb/loadtester/check"
)

// HTTP/1.1, the protocol behind the seam (protocol.go) for a connection
// without --http2, on a plain socket or over TLS alike: responses come
// back in order, parsed by its respParser (response.go), which no other
// protocol reads. Requests are pre-formatted bytes, in one of two variants
// chosen with the protocol: http1Static when the run has one kind whose
// bytes never change (the closed loop writes --pipeline copies of it, no
// rendering), http1Rendered otherwise (each request's kind picked and,
// where it has placeholders, rendered).
//
// Who owns what: loop thread only, like the rest of a conn.

// http1 is what both variants share: no start, no limit on requests in
// flight but --pipeline, responses in order.
type http1 struct {
	parser respParser
	// repeated: http1Static's request --pipeline times, one's bytes each.
	repeated []byte
	one      int
}

// newHTTP1 is a connection's HTTP/1.1 state: its responses have no body
// (headOnly: HEAD requests), and it keeps what the checks read (needs).
func newHTTP1(headOnly bool, needs check.Needs) *http1 {
	h := &http1{}
	h.parser.headOnly = headOnly
	h.parser.keepHead, h.parser.keepBody = needs.Header, needs.Body
	return h
}

func (*http1) start(connEvents, *conn) {}
func (*http1) room() int               { return math.MaxInt }
func (*http1) ended(*conn, int) bool   { return false }
func (*http1) passEnded(*conn) bool    { return false }

// response is the response just read, whichever entry asks.
func (h *http1) response(int) (int, []byte, []byte) {
	return h.parser.status, h.parser.head, h.parser.body
}

// consume parses responses from data; false means the connection closed.
func (h *http1) consume(ev connEvents, c *conn, data []byte, now int64) bool {
	for len(data) > 0 {
		n, done, err := h.parser.feed(data)
		if err != nil {
			ev.failConn(c, now, errParse)
			return false
		}
		data = data[n:]
		if done {
			if c.inflight == 0 { // a response nobody asked for
				ev.failConn(c, now, errParse)
				return false
			}
			ev.answer(c, c.popHead(), now, h.parser.status)
			if h.parser.close || c.quotaDone() {
				ev.retire(c, now)
				return false
			}
			continue
		}
		if n == 0 {
			if len(data) >= maxHeaderBytes {
				ev.failConn(c, now, errParse)
				return false
			}
			c.partial = append(c.partial, data...)
			break
		}
	}
	c.noNew = h.parser.close // the response being read ends the connection: never reused
	return true
}

// eof completes a response whose body the close delimits. Over TLS such a
// body is complete only after the server's close_notify (RFC 9112 §9.8):
// a bare close may have cut it, and counting it answered would hide a
// broken server.
func (h *http1) eof(ev connEvents, c *conn, now int64) bool {
	if !h.parser.finishAtEOF() || c.inflight == 0 {
		return false
	}
	if c.io.cut() {
		ev.loseHead(c, now, errTruncated)
		return true
	}
	ev.answer(c, c.popHead(), now, h.parser.status)
	return false
}

// http1Static is HTTP/1.1 with one kind whose bytes never change.
type http1Static struct{ *http1 }

// batch is want copies of the request (kept from the source's first
// --pipeline copies: protocolFor).
func (h http1Static) batch(_ requestSource, _ *conn, want int) ([]byte, int) {
	return h.repeated[:want*h.one], want
}

func (http1Static) appendScheduled(src requestSource, _ *conn, dst []byte, _ uint64) ([]byte, bool) {
	return append(dst, src.repeated(1)...), true
}

// http1Rendered is HTTP/1.1 with kinds picked per request (a workload)
// or bytes rendered per request (placeholders).
type http1Rendered struct{ *http1 }

// batch renders up to want requests into the source's scratch, the
// closed loop's kinds picked in turn.
func (http1Rendered) batch(src requestSource, c *conn, want int) ([]byte, int) {
	buf := src.scratch()
	out := (*buf)[:0]
	n := want
	for j := range want {
		kind := src.closedKind(j)
		var seq uint64
		var ok bool
		if out, seq, ok = src.appendRequest(out, kind); !ok {
			n = j
			break
		}
		c.setKind((c.head+c.inflight+j)&c.mask, kind, seq)
	}
	src.tookClosed(n)
	*buf = out
	return out, n
}

// appendScheduled renders the schedule's k-th request, of the kind k picks.
func (http1Rendered) appendScheduled(src requestSource, c *conn, dst []byte, k uint64) ([]byte, bool) {
	kind := src.scheduledKind(k)
	dst, seq, ok := src.appendRequest(dst, kind)
	if ok {
		c.setKind((c.head+c.inflight)&c.mask, kind, seq)
	}
	return dst, ok
}
