package loadtester

// The write path: a connection's bytes go out through its transport
// (protocol.go). What is sent is the load mode's (mode.go).
//
// Who owns what: loop thread only, like the rest of a conn.

// write sends out through c's transport, which keeps what the socket does
// not take for EPOLLOUT.
func (t *netThread) write(c *conn, out []byte) {
	t.acct.books.measured.bytesOut += int64(len(out))
	c.io.write(c, out)
}

// writeFailed fails c, whose transport could not write.
func (t *netThread) writeFailed(c *conn, kind errorKind) { t.failConn(c, t.now(), kind) }

// flush writes owed bytes after EPOLLOUT or for an open-loop turn.
func (t *netThread) flush(c *conn) { c.io.flush(c) }
