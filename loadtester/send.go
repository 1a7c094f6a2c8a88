package loadtester

import (
	"math"
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
	if c.noNew { // its protocol sends nothing new on it (the response being read ends it, a GOAWAY)
		return
	}
	if t.unwanted(c) { // the ramp went below its slot: it closes once nothing is in flight
		if c.inflight == 0 {
			t.closeConn(c, false)
		}
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
	want = min(want, c.proto.room())
	if refillAt := max(1, depth/2); c.inflight > 0 && want < refillAt && quotaLeft >= refillAt || want <= 0 {
		return
	}
	out, n := c.proto.batch(&t.requests, c, want)
	for range n {
		c.sendTimes[(c.head+c.inflight)&c.mask] = now
		c.inflight++
	}
	c.sent += n
	t.phase(now).sent += int64(n)
	if len(out) > 0 {
		t.write(c, out)
	}
	if n < want {
		t.rowsOut(now)
	}
}

// write sends out through c's transport, which keeps what the socket does
// not take for EPOLLOUT.
func (t *netThread) write(c *conn, out []byte) {
	t.books.measured.bytesOut += int64(len(out))
	if kind, failed := c.io.write(t.eng, c, out); failed {
		t.failConn(c, t.now(), kind)
	}
}

// flush writes owed bytes after EPOLLOUT or for an open-loop turn.
func (t *netThread) flush(c *conn) {
	if kind, failed := c.io.flush(t.eng, c); failed {
		t.failConn(c, t.now(), kind)
	}
}
