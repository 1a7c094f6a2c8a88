package loadtester

// HTTP/1.1, the protocol behind the seam (seam.go) for a connection
// without --http2, on a plain socket or over TLS alike: requests are
// pre-formatted bytes (one static batch, or rendered per request), and
// responses come back in order, parsed by respParser (response.go).
//
// Who owns what: loop thread only, like the rest of a conn.

// consume parses responses from data; false means the connection closed.
func (t *netThread) consume(c *conn, data []byte, now int64) bool {
	if c.h2 != nil {
		return t.consumeH2(c, data, now)
	}
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
