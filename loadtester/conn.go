package loadtester

import "time"

// A connection as its network thread sees it: its descriptor and slot, its
// transport and protocol (protocol.go), the ring of its requests in
// flight, and the handoff that brings it from a connect thread
// (connect.go). Its life on the thread is connlife.go's.
//
// Who owns what: a conn is its network thread's loop's alone
// (thread.go); a handoff is the connect thread's until the inbox takes it.

type connState uint8

const (
	connConnecting connState = iota
	connActive
	connClosed
)

// conn is one connection, owned by one network thread (loop thread only).
type conn struct {
	fd       int
	slot     int32 // index in the thread's table
	gen      int32 // generation of the slot when this conn took it
	connSlot int   // which of the --concurrency connections this is
	failures int   // consecutive failed attempts of its slot before it (back-off: retryFailures)
	state    connState
	io       transport // how its bytes move, chosen at adopt (protocol.go)
	proto    protocol  // what they mean, chosen at adopt (protocol.go)
	// h2: proto when it is HTTP/2 (nil otherwise), kept for the tests
	// that look inside a connection's streams; the engine never tests it.
	h2 *h2Conn
	// refused: the server's limits refuse the request (h2Settings), so
	// its replacement would meet the same (retryFailures).
	refused bool
	// noNew: its protocol sends no new request on it (HTTP/1.1: the
	// response being read ends the connection; h2: GOAWAY).
	noNew bool
	quota int // --requests-per-conn (0: none)

	// Rings over the requests in flight, oldest at head. sendTimes: when
	// each was due (open loop: its intended send time; closed loop: its
	// send). sentAt, open loop only: when it was written, for the service
	// time and --timeout.
	sendTimes []int64
	sentAt    []int64
	kinds     []uint8  // workload: each request's kind (kinds.go)
	seqs      []uint64 // a kind is referred to by {{answered:...}}: each request's {{seq}}
	mask      int
	head      int
	inflight  int
	sent      int
	received  int

	pending         []byte // request bytes the socket has not taken yet
	partial         []byte // an incomplete response head, kept between reads
	connectDeadline int64
	inFreeList      bool // open loop: on the thread's list of connections with room
	onReadyList     bool // used its read budget with bytes maybe left (hazard #5)
	peerClosed      bool // RDHUP/HUP seen: read on to EOF, short reads included
	dirty           bool // open loop: has requests to flush this turn

	uringConn // its state under the io_uring engine (engine_uring.go)
}

// popHead moves c's head past its oldest request in flight, whose ring
// entry it returns.
func (c *conn) popHead() int {
	i := c.head
	c.head = (i + 1) & c.mask
	c.inflight--
	return i
}

// quotaDone reports whether c has had its --requests-per-conn responses.
func (c *conn) quotaDone() bool { return c.quota > 0 && c.received >= c.quota }

// setKind notes the kind and {{seq}} of the request in ring entry i.
func (c *conn) setKind(i int, kind uint8, seq uint64) {
	if c.kinds != nil {
		c.kinds[i] = kind
	}
	if c.seqs != nil {
		c.seqs[i] = seq
	}
}

// handoff carries a connection (or a failed attempt) from a connect thread.
type handoff struct {
	fd       int
	connSlot int
	failures int           // consecutive failed attempts for this slot, for back-off
	backoff  time.Duration // how long the slot backed off before this attempt (connect.go)
	err      error         // the attempt failed before reaching the loop
	// https: the connection's TLS state, its handshake's length and
	// whether it resumed a session.
	tls       *tlsConn
	handshake time.Duration
	resumed   bool
}
