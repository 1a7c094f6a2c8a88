package loadtester

import "math"

// HTTP/1.1, the protocol behind the seam (seam.go) for a connection
// without --http2, on a plain socket or over TLS alike: responses come
// back in order, parsed by respParser (response.go). Requests are
// pre-formatted bytes, in one of two variants chosen with the protocol:
// http1Static when the run has one kind whose bytes never change (the
// closed loop writes --pipeline copies of it from netThread.batch, no
// rendering), http1Rendered otherwise (each request's kind picked and,
// where it has placeholders, rendered).
//
// Who owns what: loop thread only, like the rest of a conn.

// http1 is what both variants share: no start, no limit on requests in
// flight but --pipeline, responses in order.
type http1 struct{}

func (http1) start(*netThread, *conn) {}
func (http1) room() int               { return math.MaxInt }
func (http1) ended(*conn, int) bool   { return false }
func (http1) passEnded(*conn) bool    { return false }

// consume parses responses from data; false means the connection closed.
func (http1) consume(t *netThread, c *conn, data []byte, now int64) bool {
	for len(data) > 0 {
		n, done, err := c.parser.feed(data)
		if err != nil {
			t.failConn(c, now, errParse)
			return false
		}
		data = data[n:]
		if done {
			if c.inflight == 0 { // a response nobody asked for
				t.failConn(c, now, errParse)
				return false
			}
			t.complete(c, now)
			if c.parser.close || t.quotaDone(c) {
				t.retire(c, now)
				return false
			}
			continue
		}
		if n == 0 {
			if len(data) >= maxHeaderBytes {
				t.failConn(c, now, errParse)
				return false
			}
			c.partial = append(c.partial, data...)
			break
		}
	}
	return true
}

// appendOne appends one request of kind to dst, with its {{seq}} (0 for
// a kind whose bytes never change).
func (t *netThread) appendOne(dst []byte, kind uint8) ([]byte, uint64) {
	tm := t.r.kinds[kind].tmpl
	if !tm.dynamic() {
		return append(dst, tm.static...), 0
	}
	return t.rend.appendRequest(dst, tm)
}

// setKind notes the kind and {{seq}} of the request in ring entry i.
func (c *conn) setKind(i int, kind uint8, seq uint64) {
	if c.kinds != nil {
		c.kinds[i] = kind
	}
	if c.seqs != nil {
		c.seqs[i] = seq
	}
}

// http1Static is HTTP/1.1 with one kind whose bytes never change.
type http1Static struct{ http1 }

// batch is want copies of the request, sliced from the thread's batch.
func (http1Static) batch(t *netThread, _ *conn, want int) []byte {
	return t.batch[:want*len(t.r.tmpl.static)]
}

func (http1Static) appendScheduled(t *netThread, _ *conn, dst []byte, _ uint64) []byte {
	return append(dst, t.r.tmpl.static...)
}

// http1Rendered is HTTP/1.1 with kinds picked per request (a workload)
// or bytes rendered per request (placeholders).
type http1Rendered struct{ http1 }

// batch renders want requests into the thread's wbuf, the closed loop's
// kinds picked in turn from the thread's count of sends.
func (http1Rendered) batch(t *netThread, c *conn, want int) []byte {
	t.wbuf = t.wbuf[:0]
	for j := range want {
		kind := t.r.kindOf(t.kindNext)
		t.kindNext++
		var seq uint64
		t.wbuf, seq = t.appendOne(t.wbuf, kind)
		c.setKind((c.head+c.inflight+j)&c.mask, kind, seq)
	}
	return t.wbuf
}

// appendScheduled renders the schedule's k-th request, of the kind k picks.
func (http1Rendered) appendScheduled(t *netThread, c *conn, dst []byte, k uint64) []byte {
	kind := t.r.kindOf(k)
	dst, seq := t.appendOne(dst, kind)
	c.setKind((c.head+c.inflight)&c.mask, kind, seq)
	return dst
}

// consume parses responses from data (the protocol's consume; a test
// feeds a connection through it); false means the connection closed.
func (t *netThread) consume(c *conn, data []byte, now int64) bool {
	return c.proto.consume(t, c, data, now)
}
