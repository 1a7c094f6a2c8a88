package eventloop

import (
	"sync"
	"sync/atomic"
)

// Conn is one accepted connection. It belongs to one Loop: only that loop
// reads, asks its backend about it, and closes it. Other goroutines reach
// it by pointer (a Conn is never reused for another descriptor) and only
// through Sender, whose writes happen under mu, the same lock the loop
// holds to close: so a write never lands on a descriptor number that was
// closed and reused.
type Conn struct {
	loop   *Loop
	fd     int // owned by the loop; read by senders only under mu
	gen    uint32
	isUnix bool

	// Ctx is the protocol's per-connection state (loop goroutine only).
	Ctx any
	// NotifyDrained asks for DrainHandler.OnDrained when the connection's
	// output drains after a short write (loop goroutine only).
	NotifyDrained bool

	// Loop goroutine only.
	in          []byte    // input read but not yet consumed by the handler
	state       connState // where it is in its life (state.go): the only lifecycle field
	io          connIO    // the backend's state of it (backend.go; its send fields under mu)
	onReady     bool      // queued on the loop's ready list
	eof         bool      // the peer shut its write side
	lingerUntil int64     // stateLingering: when to close anyway (monotonic ns)
	noLinger    bool      // close at once when the drain ends (a timed-out peer whose 408 is in flight)
	needFlush   bool      // the loop queued responses this turn
	stalled     bool      // Overloaded said so since the last afterInput: pause, then resume
	nextSeq     uint64    // sequence number of the next parsed request
	// lateStop: accepted from the loop's own listener as the loop stopped
	// (stop.go): it drains once its first requests are read, not at once.
	lateStop bool

	// Timeouts (timeouts.go), loop goroutine only.
	heapIdx      int   // index in the loop's deadline heap; -1: not filed
	filedAt      int64 // when the loop next looks at this connection (monotonic ns)
	firstInputAt int64 // when the first byte of the partial request in `in` came
	lastInputAt  int64 // when bytes last came
	awaitingBody bool  // the partial request's head is complete (SetAwaitingBody)
	streaming    bool  // Stream was used: the handler's own rules govern it
	sendQueued   int   // SIOCOUTQ when the write clock last started

	inflight   atomic.Int64 // requests parsed and not yet answered
	owed       atomic.Int64 // bytes queued and not yet written (mirror of outBytes)
	pausedFlag atomic.Bool  // mirror of statePaused for senders (set only by state.go)

	mu             sync.Mutex
	closed         bool
	chunks         [][]byte  // queued output; chunks[0][off:] goes first
	chunkSlots     [2][]byte // chunks' storage while it holds at most two
	off            int
	outBytes       int
	tailOpen       bool   // chunks[len-1] is ours and may take more bytes
	spare          []byte // drained tail buffer kept for reuse
	nextSend       uint64 // sequence number of the next response to queue
	early          []earlyResponse
	interim        []byte // SendInterim's bytes waiting for response interimAt's turn
	interimAt      uint64
	flushScheduled bool // the loop owns flushing (posted, or the backend waits to write the rest)
	closeQueued    bool // the response that ends the connection is queued
	closeSeen      bool // the loop has seen closeQueued (service) and drains: no more posts for it
	markLast       bool // a stop began: response lastSeq is the last (order.go)
	lastSeq        uint64
	finishOnIdle   bool // the loop wants a post when nothing is owed any more
	postPending    bool // a post to the loop is outstanding
	// idleSince is when the connection last came to owe nothing with no
	// request in flight (accept, or a response's last byte written): the
	// start of its idle and header clocks. The loop or a Sender sets it.
	idleSince int64
	// writeSince is when the write clock last started: the loop had to wait
	// for the peer to take bytes, or saw it take some.
	writeSince int64
}

// Gen is the connection's generation: unique per accepted connection and
// never 0 (0 marks listeners and the wake fd in epoll's data word).
func (c *Conn) Gen() uint32 { return c.gen }

// Loop is the owning loop.
func (c *Conn) Loop() *Loop { return c.loop }

// IsUnix tells whether the connection came through a unix socket.
func (c *Conn) IsUnix() bool { return c.isUnix }

// NextSeq numbers a parsed request (loop goroutine only). Every number handed
// out must later be answered through Reply or a Sender, or the connection's
// later responses wait forever.
func (c *Conn) NextSeq() uint64 {
	s := c.nextSeq
	c.nextSeq++
	c.inflight.Add(1)
	return s
}

// Reply queues the response to request seq from the loop goroutine; it is
// written at the end of the handler call, together with its neighbours.
// The connection takes ownership of data (it must not be modified later).
func (c *Conn) Reply(seq uint64, data []byte, closeAfter bool) {
	c.mu.Lock()
	c.enqueueLocked(seq, data, closeAfter)
	c.mu.Unlock()
	c.needFlush = true
}

// SendInterim queues bytes that belong to no numbered response, such as
// "HTTP/1.1 100 Continue" for the request being read, in their place: after
// the responses of every request numbered before it, so they never overtake
// one. When those are all queued the bytes go out now; otherwise they wait
// and leave right after the last of them (loop goroutine only; one interim
// waits at a time). It reports false when the connection is closing.
func (c *Conn) SendInterim(data []byte) bool {
	c.mu.Lock()
	ok := !c.closed && !c.closeQueued
	switch {
	case !ok:
	case c.nextSend == c.nextSeq:
		c.appendOutLocked(data)
	default:
		c.interim, c.interimAt = data, c.nextSeq
	}
	c.mu.Unlock()
	if ok {
		c.needFlush = true
	}
	return ok
}

// Owed is the number of bytes queued and not yet written (any goroutine).
func (c *Conn) Owed() int64 { return c.owed.Load() }

// Closing tells whether the connection is closed or draining (loop
// goroutine only): a stream should stop adding to it.
func (c *Conn) Closing() bool { return c.finishing() }

// Stream appends data after every response already queued (the connection
// takes ownership of data) and writes what
// it can at once (loop goroutine only): the body of a streamed response,
// such as a /v1/subscribe chunk. It queues nothing and returns false while
// a numbered request's response is still missing (the stream would overtake
// it) or when the connection is closing. last ends the connection once the
// bytes are written (then a linger, as after Connection: close). A short
// write leaves the rest to the loop; with NotifyDrained set the handler hears when it
// drained.
func (c *Conn) Stream(data []byte, last bool) bool {
	if c.Closing() {
		return false
	}
	c.mu.Lock()
	ok := !c.closed && !c.closeQueued && c.nextSend == c.nextSeq
	if ok {
		c.appendOutLocked(data)
	}
	c.mu.Unlock()
	if !ok {
		return false
	}
	if !c.streaming {
		c.streaming = true // the stream's own rules (the handler's) govern it now
		c.loop.unfile(c)
	}
	c.loop.flush(c)
	if last && !c.isGone() {
		c.loop.beginDrain(c)
	}
	return true
}

// Abort closes the connection now, dropping what it owes (loop goroutine
// only): for a stream whose client stopped reading.
func (c *Conn) Abort() { c.loop.closeConn(c) }

// SetAwaitingBody tells the loop (loop goroutine only) whether the partial
// request it holds has a complete head and waits for its body: the body
// timeout, not the header timeout, then applies. The handler calls it from
// OnData.
func (c *Conn) SetAwaitingBody(b bool) { c.awaitingBody = b }

// Overloaded tells the handler to stop parsing: the client owes the server
// reading (owed bytes above the high-water mark) or has too many requests in
// flight. The loop stops reading from it until it drains (loop goroutine
// only). A true answer is remembered (stalled): by the time the handler
// returns, responses completed on other goroutines may have cleared the
// overload, and the input it left unparsed must still be resumed, not
// forgotten until more bytes come.
func (c *Conn) Overloaded() bool {
	o := &c.loop.opt
	if c.owed.Load() > int64(o.HighWater) || c.inflight.Load() >= int64(o.MaxInflight) {
		c.stalled = true
		return true
	}
	return false
}

func (c *Conn) belowLowWater() bool {
	o := &c.loop.opt
	return c.owed.Load() <= int64(o.HighWater/2) && c.inflight.Load() < int64(o.MaxInflight/2)
}
