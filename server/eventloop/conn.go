package eventloop

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	// maxIovecs is the kernel's IOV_MAX: one writev never takes more.
	maxIovecs = 1024
	// coalesceLimit: responses up to this size are copied into the
	// connection's tail buffer so that pipelined responses leave in one
	// contiguous write; larger ones are queued by reference.
	coalesceLimit = 16 << 10
	// spareLimit: an output buffer up to this size is kept for reuse after
	// it drains; a larger one is dropped so idle connections stay small.
	spareLimit = 64 << 10
)

// Conn is one accepted connection. It belongs to one Loop: only that loop
// reads, calls epoll_ctl and closes. Other goroutines reach it by pointer
// (a Conn is never reused for another descriptor) and only through Sender,
// whose writes happen under mu, the same lock the loop holds to close: so a
// write never lands on a descriptor number that was closed and reused.
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
	in           []byte // input read but not yet consumed by the handler
	onReady      bool   // queued on the loop's ready list
	readPaused   bool   // back-pressure: not reading until the client drains
	rdhup        bool   // the peer's FIN was reported: read until EOF
	eof          bool   // the peer shut its write side
	inputStopped bool   // no more requests are parsed (close requested, bad request, shutdown)
	draining     bool   // finish what is owed, then close
	lingering    bool   // SHUT_WR sent: discarding input until EOF or the deadline
	lingerUntil  int64  // monotonic ns
	outArmed     bool   // EPOLLOUT is in the interest mask
	needFlush    bool   // the loop queued responses this turn
	stalled      bool   // the handler stopped early because of back-pressure
	nextSeq      uint64 // sequence number of the next parsed request

	inflight   atomic.Int64 // requests parsed and not yet answered
	owed       atomic.Int64 // bytes queued and not yet written (mirror of outBytes)
	pausedFlag atomic.Bool  // mirror of readPaused for senders

	mu             sync.Mutex
	closed         bool
	chunks         [][]byte // queued output; chunks[0][off:] goes first
	off            int
	outBytes       int
	tailOpen       bool   // chunks[len-1] is ours and may take more bytes
	spare          []byte // drained tail buffer kept for reuse
	nextSend       uint64 // sequence number of the next response to queue
	early          []earlyResponse
	flushScheduled bool // the loop owns flushing (posted, or EPOLLOUT armed)
	closeQueued    bool // the response that ends the connection is queued
	finishOnIdle   bool // the loop wants a post when nothing is owed any more
	postPending    bool // a post to the loop is outstanding
}

type earlyResponse struct {
	seq        uint64
	data       []byte
	closeAfter bool
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
// "HTTP/1.1 100 Continue", but only when every numbered request's response
// is already queued, so they cannot overtake one (loop goroutine only).
// It reports whether the bytes were queued.
func (c *Conn) SendInterim(data []byte) bool {
	c.mu.Lock()
	ok := !c.closed && !c.closeQueued && c.nextSend == c.nextSeq
	if ok {
		c.appendOutLocked(data)
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
func (c *Conn) Closing() bool { return c.isGone() || c.draining }

// Stream appends data after every response already queued and writes what
// it can at once (loop goroutine only): the body of a streamed response,
// such as a /v1/subscribe chunk. It queues nothing and returns false while
// a numbered request's response is still missing (the stream would overtake
// it) or when the connection is closing. last ends the connection once the
// bytes are written (then a linger, as after Connection: close). A short
// write arms EPOLLOUT; with NotifyDrained set the handler hears when it
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
	c.loop.flush(c)
	if last && !c.isGone() {
		c.loop.beginDrain(c)
	}
	return true
}

// Abort closes the connection now, dropping what it owes (loop goroutine
// only): for a stream whose client stopped reading.
func (c *Conn) Abort() { c.loop.closeConn(c) }

// StopInput ends request parsing on this connection (loop goroutine only):
// after a request that closes it, a malformed request, or at shutdown. Input
// that follows is discarded; owed responses are still written.
func (c *Conn) StopInput() {
	c.inputStopped = true
	c.in = nil
}

// Overloaded tells the handler to stop parsing: the client owes the server
// reading (owed bytes above the high-water mark) or has too many requests in
// flight. The loop stops reading from it until it drains.
func (c *Conn) Overloaded() bool {
	o := &c.loop.opt
	return c.owed.Load() > int64(o.HighWater) || c.inflight.Load() >= int64(o.MaxInflight)
}

func (c *Conn) belowLowWater() bool {
	o := &c.loop.opt
	return c.owed.Load() <= int64(o.HighWater/2) && c.inflight.Load() < int64(o.MaxInflight/2)
}

// enqueueLocked puts a response in request order: it is queued for writing
// only once every earlier response is queued; otherwise it waits in early.
func (c *Conn) enqueueLocked(seq uint64, data []byte, closeAfter bool) {
	c.inflight.Add(-1)
	if c.closed || c.closeQueued {
		return
	}
	if seq != c.nextSend {
		c.insertEarly(earlyResponse{seq, data, closeAfter})
		return
	}
	c.appendOutLocked(data)
	c.nextSend++
	if closeAfter {
		c.closeQueued = true
		c.early = nil
		return
	}
	for len(c.early) > 0 && c.early[0].seq == c.nextSend {
		e := c.early[0]
		c.early[0] = earlyResponse{}
		c.early = c.early[1:]
		c.appendOutLocked(e.data)
		c.nextSend++
		if e.closeAfter {
			c.closeQueued = true
			c.early = nil
			return
		}
	}
	if len(c.early) == 0 {
		c.early = nil
	}
}

func (c *Conn) insertEarly(e earlyResponse) {
	i := len(c.early)
	for i > 0 && c.early[i-1].seq > e.seq {
		i--
	}
	c.early = append(c.early, earlyResponse{})
	copy(c.early[i+1:], c.early[i:])
	c.early[i] = e
}

func (c *Conn) appendOutLocked(data []byte) {
	if len(data) == 0 {
		return
	}
	c.outBytes += len(data)
	c.owed.Store(int64(c.outBytes))
	if len(data) > coalesceLimit {
		c.chunks = append(c.chunks, data)
		c.tailOpen = false
		return
	}
	if c.tailOpen {
		last := len(c.chunks) - 1
		if t := c.chunks[last]; cap(t)-len(t) >= len(data) {
			c.chunks[last] = append(t, data...)
			return
		}
	}
	var buf []byte
	if cap(c.spare) >= len(data) {
		buf, c.spare = c.spare[:0], nil
	} else {
		buf = make([]byte, 0, max(4096, 2*len(data)))
	}
	c.chunks = append(c.chunks, append(buf, data...))
	c.tailOpen = true
}

// writeLocked writes queued output until done or EAGAIN. Hand-written hot
// path: one write for one chunk, writev (at most 1024 iovecs) otherwise.
func (c *Conn) writeLocked(iov *[]unix.Iovec) (done bool, err error) {
	for c.outBytes > 0 {
		var n int
		if len(c.chunks) == 1 {
			n, err = unix.Write(c.fd, c.chunks[0][c.off:])
		} else {
			v := (*iov)[:0]
			for i, ch := range c.chunks {
				if i == maxIovecs {
					break
				}
				if i == 0 {
					ch = ch[c.off:]
				}
				var one unix.Iovec
				one.Base = &ch[0]
				one.SetLen(len(ch))
				v = append(v, one)
			}
			*iov = v
			n, err = writev(c.fd, v)
			clear(v)
		}
		switch err {
		case nil:
			c.consumeLocked(n)
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false, nil
		default:
			return false, err
		}
	}
	return true, nil
}

func writev(fd int, iov []unix.Iovec) (int, error) {
	n, _, e := unix.Syscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

func (c *Conn) consumeLocked(n int) {
	c.outBytes -= n
	c.owed.Store(int64(c.outBytes))
	for n > 0 {
		rest := len(c.chunks[0]) - c.off
		if n < rest {
			c.off += n
			return
		}
		n -= rest
		if len(c.chunks) == 1 && c.tailOpen && cap(c.chunks[0]) <= spareLimit {
			c.spare = c.chunks[0][:0]
		}
		c.chunks[0] = nil
		c.chunks = c.chunks[1:]
		c.off = 0
	}
	if len(c.chunks) == 0 {
		c.chunks = c.chunks[:0:0]
		c.tailOpen = false
	}
}

// dropOutputLocked forgets everything owed (the connection is closing).
func (c *Conn) dropOutputLocked() {
	c.chunks, c.early, c.spare = nil, nil, nil
	c.off, c.outBytes, c.tailOpen = 0, 0, false
	c.owed.Store(0)
}

// Sender delivers responses from a goroutine other than the loop (the
// pipeline's release threads). Use one Sender per goroutine. Consecutive
// responses to the same connection are queued under one lock hold and leave
// in one write. When the connection owes nothing else, Flush writes to the
// socket directly, which saves waking the loop; a short write hands the rest
// to the loop, which arms EPOLLOUT.
type Sender struct {
	iov    []unix.Iovec
	cur    *Conn
	direct bool
}

// NewSender returns a Sender; direct=false always hands writing to the loop.
func NewSender(direct bool) *Sender {
	return &Sender{iov: make([]unix.Iovec, 0, maxIovecs), direct: direct}
}

// Send queues the response to request seq of c (in request order). The
// connection takes ownership of data. Call Flush after the last Send of a
// batch; a Send to another connection flushes the previous one.
func (s *Sender) Send(c *Conn, seq uint64, data []byte, closeAfter bool) {
	if s.cur != c {
		s.Flush()
		c.mu.Lock()
		s.cur = c
	}
	c.enqueueLocked(seq, data, closeAfter)
}

// Flush writes or hands over what the current connection owes, and releases it.
func (s *Sender) Flush() {
	c := s.cur
	if c == nil {
		return
	}
	s.cur = nil
	if c.closed {
		c.mu.Unlock()
		return
	}
	needLoop := false
	if c.outBytes > 0 && !c.flushScheduled {
		if c.closeQueued || c.finishOnIdle || !s.direct {
			needLoop = true
		} else if done, err := c.writeLocked(&s.iov); err != nil || !done {
			needLoop = true // the loop arms EPOLLOUT, or closes on the error
		}
		if needLoop {
			c.flushScheduled = true
		}
	}
	if c.finishOnIdle && c.outBytes == 0 && c.inflight.Load() == 0 {
		needLoop = true
	}
	if c.pausedFlag.Load() && c.belowLowWater() {
		needLoop = true
	}
	post := needLoop && !c.postPending
	if post {
		c.postPending = true
	}
	c.mu.Unlock()
	if post {
		c.loop.post(c)
	}
}
