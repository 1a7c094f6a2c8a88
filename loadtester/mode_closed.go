package loadtester

import "math"

// The closed loop, the load mode (mode.go) without --rate: each
// connection keeps up to --pipeline requests in flight, refilled as
// responses come back, so the server's pace sets the client's.
//
// Who owns what: loop thread only, like the rest of a netThread.

// closedLoop is the closed loop of its thread.
type closedLoop struct{ t *netThread }

func (l *closedLoop) paced() bool               { return false }
func (l *closedLoop) connUp(c *conn, now int64) { l.served(c, now) }
func (l *closedLoop) turn(int64)                {}

// topUp is served, for a test that fills a pipeline.
func (l *closedLoop) topUp(c *conn, now int64) { l.served(c, now) }

// served keeps up to --pipeline requests in flight (closed loop). A
// pipelined connection is refilled once at least half its depth is free, in
// one write: measured against nginx at depth 16, that cut the client's CPU
// per request by about a sixth and raised req/s, since fewer, larger writes
// mean fewer segments for both ends to process (wrk's Lua pipelining refills
// only when all 16 are answered).
func (l *closedLoop) served(c *conn, now int64) {
	t := l.t
	if now >= t.acct.win.closeAt { // the window has closed: nothing new is sent
		return
	}
	if c.noNew { // its protocol sends nothing new on it (the response being read ends it, a GOAWAY)
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
	t.acct.phase(now).sent += int64(n)
	if len(out) > 0 {
		t.write(c, out)
	}
	if n < want {
		t.acct.rowsOut(now)
	}
}
