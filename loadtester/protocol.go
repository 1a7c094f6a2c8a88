package loadtester

import "golang.org/x/sys/unix"

// The protocol seam: what a network thread's loop asks of a connection,
// modelled on the server's I/O backends (server/eventloop/backend.go). A
// connection has two parts, each chosen once, when its thread adopts it
// (transports.choose, requests.protocolFor), and never tested again on the hot
// path:
//
//   - its transport: how bytes move. A plain socket (socket.go), a socket
//     read with recvmsg for the kernel's receive stamps (rxstamp.go), or
//     TLS over the socket (tlsconn.go). Each reaches the socket through
//     the thread's engine (engine.go), except the stamped reads, which
//     only the epoll engine chooses.
//   - its protocol: what the bytes mean. HTTP/1.1 (http1.go), with one
//     static request or rendered ones, or HTTP/2 (h2conn.go, h2send.go,
//     h2headers.go), likewise static or rendered (h2render.go).
//
// They are two interfaces, not one, because every protocol runs on every
// transport (h2 over TLS and h2c, HTTP/1.1 over both): one interface over
// the pairs would repeat each half in each pair. The loop (loop.go) reads
// through the transport and hands the bytes to the protocol; the protocol
// reports what completed and what failed (connEvents), which the thread
// books (record.go, connlife.go), and says what to write, which goes out
// through the transport (write.go). Each
// call is per event or per batch of requests, never per byte: an
// interface call where a nil check was.
//
// Who owns what: a transport and a protocol are their connection's, so
// their network thread's loop's alone (thread.go).

// transport moves a connection's bytes through the thread's engine. A
// write or flush that fails reports it to the thread's connEvents
// (writeFailed), which fails the connection. A transport is given the
// engine and the events when it is chosen (transports.choose), so no
// read or write passes them.
type transport interface {
	// read reads into p: n > 0 bytes, with the kernel's arrival stamp on
	// the run's clock (0: none); or EAGAIN (nothing until the next edge)
	// or EINTR; or n == 0 and no errno at the end of the stream; or
	// another errno, which failure names.
	read(c *conn, p []byte) (n int, stamp int64, errno unix.Errno)
	// shortReadDrains reports whether a read shorter than its buffer
	// found the socket empty (a TLS read returns one record and does not).
	shortReadDrains() bool
	// failure is the error kind of a read's errno.
	failure(errno unix.Errno) errorKind
	// write sends out; what the socket does not take waits for EPOLLOUT.
	write(c *conn, out []byte)
	// flush writes what is owed (c.pending, and the transport's own).
	flush(c *conn)
	// owes reports bytes of its own waiting for the socket, past c.pending.
	owes() bool
	// buffered reports whether input may already wait in the transport,
	// with no edge to report it, when the connection comes up (TLS: the
	// handshake may have read past its end).
	buffered() bool
	// cut reports whether the stream's end may have cut what it
	// delimited (TLS without the server's close_notify).
	cut() bool
}

// protocol frames a connection's requests and responses. It reports what
// happened to them to its thread through connEvents and takes the
// requests it frames from a requestSource (requests.go); it never sees
// the thread itself, so a new protocol is one file behind these three
// interfaces (protocol_test.go holds the protocol files to that).
type protocol interface {
	// start runs when the connection comes up (h2: the preface).
	start(ev connEvents, c *conn)
	// consume handles the response bytes in data, read at now: it reports
	// each response that completed and fails the connection on bad
	// input. False means the connection closed.
	consume(ev connEvents, c *conn, data []byte, now int64) bool
	// eof handles the stream's end before the thread closes c: a
	// response delimited by the close completes, or is reported cut
	// (truncated, when the transport says the end may have cut it).
	eof(ev connEvents, c *conn, now int64) (truncated bool)
	// response is what the checks read of ring entry i's response: its
	// status, header lines and kept body (HTTP/1.1: the one just read).
	response(i int) (status int, head, body []byte)
	// room is how many more requests the server allows at once now.
	room() int
	// batch returns up to want closed-loop requests for c, the next n
	// ring entries' kinds noted; valid until the next call. n < want only
	// when the run's data file has no row left (t.rowsOut).
	batch(src requestSource, c *conn, want int) (out []byte, n int)
	// appendScheduled appends the open-loop schedule's k-th request for
	// c's next ring entry to dst; false, and dst as it was, when the run's
	// data file has no row left for it.
	appendScheduled(src requestSource, c *conn, dst []byte, k uint64) ([]byte, bool)
	// ended reports whether ring entry i ended out of order and is
	// already booked (h2: a stream that ended behind an open one).
	ended(c *conn, i int) bool
	// passEnded moves c's head past its entry if ended says so, and
	// reports whether it did.
	passEnded(c *conn) bool
}

// connEvents is what a protocol reports to its connection's thread,
// which books it (record.go, connlife.go), and the write path it sends
// through. A protocol that wants no new request sent on c (HTTP/1.1's
// Connection: close, h2's GOAWAY) sets c.noNew.
type connEvents interface {
	// answer books ring entry i's response, status, at now: answered, or
	// failed when a check refuses it (false; the checks read the response
	// through protocol.response). The protocol moves its ring past the
	// entry.
	answer(c *conn, i int, now int64, status int) bool
	// failEntry books ring entry i as failed with kind (a stream's
	// reset); failHead the oldest in flight, and moves the head past it.
	failEntry(c *conn, i int, now int64, kind errorKind)
	loseHead(c *conn, now int64, kind errorKind)
	// failConn closes a broken connection, failing what is in flight;
	// retire closes one that ended normally (its quota, the server's
	// close).
	failConn(c *conn, now int64, kind errorKind)
	retire(c *conn, now int64)
	// connError books a failure of the connection itself that does not
	// close it (h2: SETTINGS that refuse every request).
	connError(now int64, kind errorKind)
	// write sends out through c's transport; writeFailed is the
	// transport's report that a write failed with kind.
	write(c *conn, out []byte)
	writeFailed(c *conn, kind errorKind)
}

// transports are a thread's transports of its plain sockets, made once
// with the thread's engine and events (init), so that a read or a write
// passes neither: two interface arguments fewer on every response's
// path. They are the thread's loop's alone.
type transports struct {
	plain   plainIO
	stamped stampedIO
}

// init gives the transports eng and ev; stamped reads keep their stamps
// in rx, and turn them off for conns when the kernel stamps nothing.
func (ts *transports) init(eng engine, ev connEvents, rx *rxStamps, conns *[]*conn) {
	ts.plain = plainIO{eng: eng, ev: ev}
	ts.stamped = stampedIO{plainIO: &ts.plain, rx: rx, conns: conns}
}

// choose is h's connection c's transport: its TLS state, or the socket
// read with receive stamps while the thread takes them and the kernel
// agrees, or the plain socket.
func (ts *transports) choose(c *conn, h handoff) transport {
	rx := ts.stamped.rx
	switch {
	case h.tls != nil:
		h.tls.tr.eng, h.tls.tr.c = ts.plain.eng, c // its ciphertext moves through the thread's engine
		h.tls.ev = ts.plain.ev
		return h.tls
	case !rx.on:
		return &ts.plain
	case rx.enable(h.fd):
		return &ts.stamped
	}
	rx.stop(*ts.stamped.conns, &ts.plain) // the kernel refuses to stamp: none of the thread's reads are
	return &ts.plain
}
