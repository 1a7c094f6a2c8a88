package loadtester

import (
	"math"

	"golang.org/x/sys/unix"
)

// What the loop sends: the closed loop's pipeline top-up and the write and
// flush of a connection's bytes, which go through its transport
// (seam.go). The open loop's sends are openloop.go's.
//
// Who owns what: loop thread only, like the rest of a conn.

// topUp keeps up to --pipeline requests in flight (closed loop). A
// pipelined connection is refilled once at least half its depth is free, in
// one write: measured against nginx at depth 16, that cut the client's CPU
// per request by about a sixth and raised req/s, since fewer, larger writes
// mean fewer segments for both ends to process (wrk's Lua pipelining refills
// only when all 16 are answered).
func (t *netThread) topUp(c *conn, now int64) {
	if now >= t.win.closeAt { // the window has closed: nothing new is sent
		return
	}
	if c.parser.close { // the response being read ends the connection: never reused
		return
	}
	depth := t.r.cfg.Pipeline
	want := depth - c.inflight
	quotaLeft := math.MaxInt
	if q := t.r.cfg.RequestsPerConn; q > 0 {
		quotaLeft = q - c.sent
		want = min(want, quotaLeft)
	}
	if want <= 0 {
		return
	}
	if c.h2 != nil {
		want = min(want, c.h2.room())
	}
	if refillAt := max(1, depth/2); c.inflight > 0 && want < refillAt && quotaLeft >= refillAt || want <= 0 {
		return
	}
	var out []byte
	if c.h2 != nil {
		t.wbuf = t.appendH2Requests(t.wbuf[:0], c, want)
		out = t.wbuf
	} else if t.fast {
		out = t.batch[:want*len(t.r.tmpl.static)]
	} else {
		t.wbuf = t.wbuf[:0]
		for j := range want {
			kind := t.r.kindOf(t.kindNext)
			t.kindNext++
			var seq uint64
			t.wbuf, seq = t.appendOne(t.wbuf, kind)
			c.setKind((c.head+c.inflight+j)&c.mask, kind, seq)
		}
		out = t.wbuf
	}
	for range want {
		c.sendTimes[(c.head+c.inflight)&c.mask] = now
		c.inflight++
	}
	c.sent += want
	t.phase(now).sent += int64(want)
	t.write(c, out)
}

// write sends out, keeping what the socket does not take for EPOLLOUT.
func (t *netThread) write(c *conn, out []byte) {
	t.books.measured.bytesOut += int64(len(out))
	if c.tls != nil {
		t.writeTLS(c, out)
		return
	}
	if len(c.pending) > 0 {
		c.pending = append(c.pending, out...)
		return
	}
	n, errno := rawWrite(c.fd, out)
	switch {
	case errno == unix.EAGAIN || errno == unix.EINTR:
		n = 0
	case errno != 0:
		t.failConn(c, t.now(), errnoKind(errno))
		return
	}
	if n < len(out) {
		c.pending = append(c.pending[:0], out[n:]...)
	}
}

// flush writes owed bytes after EPOLLOUT or for an open-loop turn.
func (t *netThread) flush(c *conn) {
	if c.tls != nil {
		t.flushTLS(c)
		return
	}
	n, errno := rawWrite(c.fd, c.pending)
	switch {
	case errno == unix.EAGAIN || errno == unix.EINTR:
		return
	case errno != 0:
		t.failConn(c, t.now(), errnoKind(errno))
		return
	}
	rest := copy(c.pending, c.pending[n:])
	c.pending = c.pending[:rest]
}
