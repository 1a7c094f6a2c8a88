package loadtester

import "golang.org/x/sys/unix"

// A connection's life on its network thread: adopted from a connect
// thread, brought up on its first event (where its protocol starts),
// retired, failed or timed out, closed and replaced after a back-off.
//
// Who owns what: loop thread only, like the rest of a conn; the books
// are written under accounts.mu, which the loop holds.

// adopt puts a handed-off connection in the table, then registers it
// (hazard #3: ADD reports readiness that already exists).
func (t *netThread) adopt(h handoff) {
	t.acct.books.measured.bookBackoff(h.backoff)
	if h.err != nil {
		t.connError(t.now(), connectErrorKind(h.err))
		t.r.requestConn(h.connSlot, h.failures+1)
		return
	}
	var slot int32
	if n := len(t.free); n > 0 {
		slot = t.free[n-1]
		t.free = t.free[:n-1]
	} else {
		slot = int32(len(t.conns))
		t.conns = append(t.conns, nil)
		t.gens = append(t.gens, 1)
	}
	ring := 1
	for ring < t.r.cfg.Pipeline {
		ring <<= 1
	}
	c := &conn{fd: h.fd, slot: slot, gen: t.gens[slot], connSlot: h.connSlot, failures: h.failures, state: connConnecting,
		sendTimes: make([]int64, ring), mask: ring - 1,
		connectDeadline: t.now() + int64(t.r.cfg.ConnectTimeout)}
	if t.mode.paced() {
		c.sentAt = make([]int64, ring)
	}
	if t.acct.kb != nil {
		c.kinds = make([]uint8, ring)
	}
	for _, k := range t.r.kinds {
		if k.referred {
			c.seqs = make([]uint64, ring)
			break
		}
	}
	c.quota = t.r.cfg.RequestsPerConn
	c.proto = t.protocolFor(c, ring)
	c.io = t.transports.choose(c, h)
	if h.tls != nil { // the handshake, done on the connect thread, is booked here
		tb := t.acct.books.tls
		tb.hist.RecordValue(max(1, int64(h.handshake)))
		tb.handshakes++
		if h.resumed {
			tb.resumed++
		}
	}
	t.conns[slot] = c
	if err := t.eng.add(c); err != nil {
		t.acct.books.measured.errors[errConnect]++
		t.closeConn(c, true)
	}
}

// finishConnect runs on the first event of a connecting socket.
func (t *netThread) finishConnect(c *conn) {
	soErr, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && soErr != 0 {
		err = unix.Errno(soErr)
	}
	if err != nil {
		kind := connectErrorKind(err)
		t.connError(t.now(), kind)
		t.closeConn(c, true)
		return
	}
	c.state = connActive
	t.acct.books.measured.connsOpened++
	t.acct.books.open++
	c.proto.start(t, c)
	if c.state != connActive {
		return
	}
	now := t.now()
	if c.io.buffered() {
		// The handshake may have read past its end: bytes the server sent
		// right after it (HTTP/2's SETTINGS) can wait in the tls.Conn
		// with the socket empty, where no edge would ever report them.
		t.onReadable(c)
		if c.state != connActive {
			return
		}
	}
	t.mode.connUp(c, now)
}

// retire closes a connection that finished normally (its quota, or the
// server's Connection: close); requests still in flight were not answered.
func (t *netThread) retire(c *conn, now int64) {
	t.lose(c, now, errEOF)
	t.closeConn(c, false)
}

// onEOF closes a connection at its stream's end, once its protocol has
// completed a response the close delimits (or reported it cut).
func (t *netThread) onEOF(c *conn, now int64) {
	truncated := c.proto.eof(t, c, now)
	t.lose(c, now, errEOF)
	t.closeConn(c, truncated)
}

// failConn closes a broken connection, charging its requests in flight (at
// least one error, so a failure is never silent).
func (t *netThread) failConn(c *conn, now int64, kind errorKind) {
	if c.inflight == 0 {
		t.connError(now, kind)
	}
	t.lose(c, now, kind)
	t.closeConn(c, true)
}

// lose counts every request in flight on c as failed with kind, in the
// books of the phase it was due in.
func (t *netThread) lose(c *conn, now int64, kind errorKind) {
	for c.inflight > 0 {
		t.loseHead(c, now, kind)
	}
}

// loseHead counts the oldest request in flight on c as failed with kind,
// or passes it if it is a stream that already ended (booked then).
func (t *netThread) loseHead(c *conn, now int64, kind errorKind) {
	if c.proto.passEnded(c) { // a stream that ended behind an open one: already booked
		return
	}
	t.failEntry(c, c.head, now, kind)
	c.head = (c.head + 1) & c.mask
	c.inflight--
}

// failEntry counts the request in ring entry i of c as failed with kind,
// in the books of the phase it was due in and of its kind (loseHead, and
// HTTP/2's streams, which fail out of order: h2Fail).
func (t *netThread) failEntry(c *conn, i int, now int64, kind errorKind) {
	start := c.sendTimes[i]
	t.acct.phase(start).failedBy[kind]++
	if start >= t.acct.win.start {
		var reqKind uint8
		if c.kinds != nil {
			reqKind = c.kinds[i]
			t.acct.kb[reqKind].failed++
		}
		if t.acct.sb != nil {
			t.acct.sb[t.acct.stageOf(start)].failed++
		}
		t.acct.sampleRequestError(now, start, kind, reqKind)
	}
}

// closeConn unregisters and closes c and asks for its replacement, after
// a back-off if c failed or never got a response (retryFailures).
func (t *netThread) closeConn(c *conn, failed bool) {
	if c.state == connActive {
		t.acct.books.open--
	}
	c.state = connClosed
	t.eng.remove(c)
	t.conns[c.slot] = nil
	t.gens[c.slot]++
	t.free = append(t.free, c.slot)
	// While draining, a connection is still replaced when requests due in
	// the window wait for one (a --requests-per-conn quota, a reset):
	// they are owed a send before the drain ends.
	if !t.stopping.Load() && (!t.acct.win.closing || t.backlog()) {
		t.r.reconnect(c.connSlot, c.retryFailures(failed))
	}
}

// retryFailures is the failure count c's replacement starts from. A
// response (any status) proves that the slot's connect and handshake
// work, so the back-off starts over: none after a normal close, the first
// step after a failure. A connection that never got one adds to its slot's
// count however it ended (a refused connect, a handshake or certificate
// the server rejects on the first read, a close right after accept), so a
// target that refuses every connection sees the back-off grow to its cap;
// so does an HTTP/2 connection whose server's SETTINGS refuse the request
// (h2Settings), answers or not: its replacement would meet the same.
func (c *conn) retryFailures(failed bool) int {
	switch {
	case c.received == 0, c.refused:
		return c.failures + 1
	case failed:
		return 1
	}
	return 0
}

// sweep enforces the connect timeout and the response timeout. The oldest
// request in flight on a connection is at the head of its ring, so one look
// per connection finds a request past its own deadline (--timeout from its
// own send). A connection cannot skip a response, so it is closed, and the
// requests behind the late one fail with it.
func (t *netThread) sweep(now int64) {
	timeout := int64(t.r.cfg.Timeout)
	for _, c := range t.conns {
		switch {
		case c == nil:
		case c.state == connConnecting && now > c.connectDeadline:
			t.connError(now, errConnectTimeout)
			t.closeConn(c, true)
		case c.state == connActive && c.inflight > 0 && now-c.sentAtOf(c.head) > timeout:
			t.lose(c, now, errTimeout)
			t.closeConn(c, true)
		}
	}
}

// sentAtOf is when ring entry i was written.
func (c *conn) sentAtOf(i int) int64 {
	if c.sentAt != nil {
		return c.sentAt[i]
	}
	return c.sendTimes[i]
}

// shutdown closes every connection and fd; later handoffs are refused.
func (t *netThread) shutdown() {
	for _, h := range t.inbox.close() {
		if h.err == nil {
			unix.Close(h.fd)
		}
	}
	t.acct.mu.Lock()
	for _, c := range t.conns { // books.open keeps the count at the end, for the last interval
		if c != nil {
			unix.Close(c.fd)
		}
	}
	t.conns = nil
	t.acct.mu.Unlock()
	t.eng.close()
}
