package loadtester

import (
	"time"

	"golang.org/x/sys/unix"

	"weaseldb/internal/uring"
)

// The io_uring engine (engine.go; Config.IOBackend "io_uring"): one ring
// per network thread, created disabled and enabled on the loop's locked
// thread (single issuer, task work deferred to it, io_uring_enter a raw
// system call as the epoll wait is); a multishot poll of the wake eventfd;
// a one-shot poll for the end of each adopted connection's connect, then a
// multishot receive into the thread's provided-buffer ring; and every
// write of the turn as a send in the ring, at most one in flight per
// socket (the next waits for its completion, the rest of a partial send
// goes first), so one io_uring_enter submits the turn's sends and waits
// for the next responses, the open loop's next due time, the drain's end
// or the sweep, whichever comes first.
//
// A transport's read copies out of the buffers the receives filled, each
// given back to the kernel once read whole (never before: the kernel
// writes only buffers it was given); a write appends to the connection's
// output, which never refuses bytes. Receive stamps: in the open loop
// over TCP the receives are multishot recvmsgs carrying the kernel's
// stamps, as the epoll engine's reads do (rxstamp.go), and the wait sleeps
// through responses to the next send (engine_uring_open.go); elsewhere
// each completion is stamped with the run's clock as it is reaped (one
// clock read per wait), so a response's latency ends when the loop reaped
// it, the wait's own wake-up in it.
//
// Who owns what: the loop's alone, like the rest of a netThread; the ring
// is never used from another thread. A user data word names the
// operation's kind and its connection's slot and generation, so the
// completion of an operation on a connection closed since (a cancelled
// receive, a send) is recognised and dropped like a stale epoll event, the
// buffer it may carry given back all the same. A closed connection with a
// send in flight stays referenced (zombies) until that send completes:
// the kernel reads its bytes until then.

// uringOp is what a submission was for (the top byte of its user data).
type uringOp uint8

const (
	uopWake uringOp = iota + 1
	uopConnect
	uopRecv
	uopSend
	uopCancel
)

const (
	uringEntries = 1024
	uringBufs    = 256      // provided buffers per thread
	uringBufSize = 16 << 10 // bytes each
	uringBgid    = 1
	uringCtrlLen = 64 // a recvmsg's control data: one SCM_TIMESTAMPNS
)

func uringData(op uringOp, slot, gen int32) uint64 {
	return uint64(op)<<56 | uint64(uint32(gen)&0xffffff)<<32 | uint64(uint32(slot))
}

func splitUringData(ud uint64) (op uringOp, slot, gen int32) {
	return uringOp(ud >> 56), int32(uint32(ud)), int32((ud >> 32) & 0xffffff)
}

// rxBuf is a provided buffer a receive filled, not yet read whole.
type rxBuf struct {
	id     uint16
	off, n int
	at     int64 // when its completion was reaped (run's clock)
}

// uringConn is a connection's state under io_uring (loop only).
type uringConn struct {
	rxq      []rxBuf    // filled buffers, oldest first, from rxHead
	rxHead   int        //
	rxDone   bool       // the stream ended: at its end (rxErr 0) or with rxErr
	rxErr    unix.Errno //
	recvOn   bool       // its multishot receive is armed
	polling  bool       // its connect's poll is in flight
	onRxList bool
	onTxList bool
	out      []byte // written, not yet submitted
	sendBuf  []byte // the send in flight: the kernel reads it until its completion
	sendOff  int    // how much of sendBuf the kernel took so far
	sending  bool
	awaiting bool // its bytes went out and no input came since: a response is due (uringEngine.awaiting)
}

// uringEngine is a network thread's ring.
type uringEngine struct {
	t       *netThread
	ring    *uring.Ring
	bufs    *uring.BufRing
	cqeFn   func(*uring.CQE)
	rxList  []*conn // connections with input reaped this turn
	txList  []*conn // connections with output to submit
	rearm   []*conn // connections whose receive ended with their stream still open
	zombies []*conn // closed with a send in flight
	expect  uint32  // submissions this turn that complete at once (sends, cancels)
	// awaiting counts the connections whose bytes went out with no input
	// since, and sendsNow those this turn's sends will add: the responses
	// the open loop's lazy wait waits for (waitCount).
	awaiting int
	sendsNow uint32
	// stamps: the open loop's receives are recvmsgs carrying the kernel's
	// receive stamps (stampsWanted), read through msg; stamping once one
	// came with a stamp, when the wait may sleep through responses.
	stamps   bool
	stamping bool
	msg      unix.Msghdr
	at       int64 // when the last wait's completions were reaped
}

func newUringEngine(t *netThread) (*uringEngine, error) {
	ring, err := uring.New(uringEntries, uring.SetupSingleIssuer|uring.SetupDeferTaskrun|uring.SetupRDisabled|uring.SetupSubmitAll)
	if err != nil {
		return nil, err
	}
	bufs, err := ring.RegisterBufRing(uringBgid, uringBufs, uringBufSize)
	if err != nil {
		ring.Close()
		return nil, err
	}
	ring.SetRawEnter(true)
	e := &uringEngine{t: t, ring: ring, bufs: bufs, stamps: stampsWanted(&t.r.cfg)}
	e.msg.Controllen = uringCtrlLen
	e.cqeFn = e.complete
	return e, nil
}

// start enables the ring on the loop's locked thread (the single issuer)
// and watches the wake eventfd.
func (e *uringEngine) start() error {
	if e.ring.Flags()&uring.SetupRDisabled != 0 {
		if err := e.ring.EnableRings(); err != nil {
			return err
		}
	}
	e.armWake()
	return nil
}

func (e *uringEngine) armWake() {
	e.sqe().PrepPollMultishot(e.t.evfd, unix.POLLIN, uringData(uopWake, 0, 0))
}

// sqe returns a submission slot, submitting what is queued when the ring
// is full.
func (e *uringEngine) sqe() *uring.SQE {
	for {
		if s := e.ring.GetSQE(); s != nil {
			return s
		}
		e.ring.Submit() // an error leaves the slots taken: the next try submits again
	}
}

// wait gives back the buffers read since the last wait, re-arms the
// receives that ended, submits the turn's sends and waits: for the sends
// that complete at once plus one completion, or timeout ns.
func (e *uringEngine) wait(timeout int64) bool {
	e.bufs.Publish()
	for i, c := range e.rearm {
		if c.state == connActive && !c.recvOn && !c.rxDone {
			e.armRecv(c)
		}
		e.rearm[i] = nil
	}
	e.rearm = e.rearm[:0]
	e.flushSends()
	e.ring.SubmitAndWaitN(e.waitCount(timeout), time.Duration(timeout)) // EINTR, ETIME: the loop turns again
	e.expect, e.sendsNow = 0, 0
	return false
}

// flushSends submits a send for each connection with output and none in
// flight.
func (e *uringEngine) flushSends() {
	for i, c := range e.txList {
		c.onTxList = false
		if c.state != connClosed && !c.sending && len(c.out) > 0 {
			c.sendBuf, c.out = c.out, c.sendBuf[:0]
			c.sendOff, c.sending = 0, true
			e.prepSend(c)
			if !c.awaiting {
				e.sendsNow++
			}
		}
		e.txList[i] = nil
	}
	e.txList = e.txList[:0]
}

func (e *uringEngine) prepSend(c *conn) {
	e.sqe().PrepSend(c.fd, c.sendBuf[c.sendOff:], uringData(uopSend, c.slot, c.gen))
	e.expect++
}

// dispatch reaps the completions, then lets each connection with input
// read it (onReadable).
func (e *uringEngine) dispatch() {
	e.at = e.t.now()
	if e.stamps {
		e.t.rx.resync(e.t.base) // the stamps' wall clock on the run's
	}
	e.ring.Completions(e.cqeFn)
	e.serveInput()
}

func (e *uringEngine) serveInput() {
	for i, c := range e.rxList {
		c.onRxList = false
		if c.state == connActive {
			e.t.onReadable(c)
		}
		e.rxList[i] = nil
	}
	e.rxList = e.rxList[:0]
}

// complete handles one completion.
func (e *uringEngine) complete(cqe *uring.CQE) {
	op, slot, gen := splitUringData(cqe.UserData)
	t := e.t
	var c *conn
	if slot >= 0 && int(slot) < len(t.conns) {
		if c = t.conns[slot]; c != nil && c.gen != gen {
			c = nil // a completion for a connection closed since (hazard #1)
		}
	}
	switch op {
	case uopWake:
		t.onWake()
		if !cqe.More() {
			e.armWake()
		}
	case uopRecv:
		e.received(c, cqe)
	case uopSend:
		if c == nil {
			e.buried(cqe.UserData)
			return
		}
		e.sent(c, cqe.Res)
	case uopConnect:
		if c == nil || !c.polling {
			return
		}
		c.polling = false
		t.finishConnect(c)
		if c.state == connActive {
			e.armRecv(c)
		}
	}
}

// received handles a receive's completion: a filled buffer, the stream's
// end, an error, or a receive that ended for want of buffers.
func (e *uringEngine) received(c *conn, cqe *uring.CQE) {
	res := cqe.Res
	hasBuf := cqe.Flags&uring.CQEFBuffer != 0
	if c == nil || c.state != connActive {
		if hasBuf { // a closed connection's: the kernel gave it, it goes back
			e.bufs.Recycle(cqe.BufferID(), false)
		}
		return
	}
	if !cqe.More() {
		c.recvOn = false
	}
	if res >= 0 || unix.Errno(-res) != unix.ENOBUFS && unix.Errno(-res) != unix.ECANCELED {
		e.answered(c) // input or the stream's end: what was due on c came
	}
	switch {
	case res > 0 && hasBuf && e.stamps:
		e.receivedMsg(c, cqe.BufferID(), int(res))
	case res > 0 && hasBuf:
		c.rxq = append(c.rxq, rxBuf{id: cqe.BufferID(), n: int(res), at: e.at})
		if !c.recvOn {
			e.rearm = append(e.rearm, c)
		}
	case res > 0: // no buffer named: nothing to read (never seen)
		if hasBuf {
			e.bufs.Recycle(cqe.BufferID(), false)
		}
		return
	case res == 0:
		if hasBuf {
			e.bufs.Recycle(cqe.BufferID(), false)
		}
		c.rxDone = true
	case unix.Errno(-res) == unix.ENOBUFS: // every buffer waits to be read: re-armed once some are back
		e.rearm = append(e.rearm, c)
		return
	case unix.Errno(-res) == unix.ECANCELED:
		return
	default:
		c.rxDone, c.rxErr = true, unix.Errno(-res)
	}
	if c.rxDone {
		c.peerClosed = true // read on to the end, short reads included
	}
	if !c.onRxList {
		c.onRxList = true
		e.rxList = append(e.rxList, c)
	}
}

// sent handles a send's completion: the rest of a partial send goes out
// before anything written since; a failure fails the connection.
func (e *uringEngine) sent(c *conn, res int32) {
	if !c.sending {
		return
	}
	if res < 0 {
		c.sending = false
		if unix.Errno(-res) != unix.ECANCELED && c.state == connActive {
			e.t.failConn(c, e.t.now(), errnoKind(unix.Errno(-res)))
		}
		return
	}
	c.sendOff += int(res)
	if c.sendOff < len(c.sendBuf) && c.state != connClosed {
		e.prepSend(c)
		return
	}
	c.sending = false
	e.sentAll(c)
	if len(c.out) > 0 && !c.onTxList {
		c.onTxList = true
		e.txList = append(e.txList, c)
	}
}

// buried drops the closed connection whose send completed.
func (e *uringEngine) buried(ud uint64) {
	for i, z := range e.zombies {
		if uringData(uopSend, z.slot, z.gen) == ud {
			z.sending = false
			last := len(e.zombies) - 1
			e.zombies[i], e.zombies[last] = e.zombies[last], nil
			e.zombies = e.zombies[:last]
			return
		}
	}
}

func (e *uringEngine) armRecv(c *conn) {
	if e.stamps {
		e.sqe().PrepRecvMsgMultishot(c.fd, &e.msg, uringBgid, uringData(uopRecv, c.slot, c.gen))
	} else {
		e.sqe().PrepRecvMultishot(c.fd, uringBgid, uringData(uopRecv, c.slot, c.gen))
	}
	c.recvOn = true
}

// add polls for the end of c's connect (at once for a connected socket);
// its receive is armed then.
func (e *uringEngine) add(c *conn) error {
	if e.stamps { // refused: its reads come unstamped, timed as reaped
		unix.SetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}
	e.sqe().PrepPollOnce(c.fd, unix.POLLOUT, uringData(uopConnect, c.slot, c.gen))
	c.polling = true
	return nil
}

// remove cancels what c has in flight and closes its descriptor. What is
// queued and not yet submitted goes to the kernel first, so no request
// meets the descriptor's number reused by the next connection.
func (e *uringEngine) remove(c *conn) {
	if e.ring.Pending() > 0 {
		e.ring.Submit()
	}
	if c.recvOn {
		e.cancel(uringData(uopRecv, c.slot, c.gen))
		c.recvOn = false
	}
	if c.polling {
		e.cancel(uringData(uopConnect, c.slot, c.gen))
		c.polling = false
	}
	if c.sending {
		e.cancel(uringData(uopSend, c.slot, c.gen))
		e.zombies = append(e.zombies, c)
	}
	e.answered(c)
	for _, b := range c.rxq[c.rxHead:] {
		e.bufs.Recycle(b.id, false)
	}
	c.rxq, c.rxHead, c.out = c.rxq[:0], 0, nil
	unix.Close(c.fd)
}

func (e *uringEngine) cancel(target uint64) {
	e.sqe().PrepCancel(target, uringData(uopCancel, 0, 0))
	e.expect++
}

// read copies what the receives filled into p, giving each buffer back
// once read whole; its stamp is when the first of them was reaped.
func (e *uringEngine) read(c *conn, p []byte) (int, int64, unix.Errno) {
	n := 0
	var stamp int64
	for n < len(p) && c.rxHead < len(c.rxq) {
		b := &c.rxq[c.rxHead]
		if stamp == 0 {
			stamp = b.at
		}
		k := copy(p[n:], e.bufs.Buf(b.id, b.off+b.n)[b.off:])
		n, b.off, b.n = n+k, b.off+k, b.n-k
		if b.n == 0 {
			e.bufs.Recycle(b.id, false)
			c.rxHead++
		}
	}
	if c.rxHead == len(c.rxq) {
		c.rxq, c.rxHead = c.rxq[:0], 0
	}
	switch {
	case n > 0:
		return n, stamp, 0
	case c.rxDone:
		return 0, 0, c.rxErr
	}
	return 0, 0, unix.EAGAIN
}

// write queues p for the turn's submission; it takes every byte.
func (e *uringEngine) write(c *conn, p []byte) (int, unix.Errno) {
	if len(p) == 0 {
		return 0, 0
	}
	c.out = append(c.out, p...)
	if !c.onTxList && !c.sending {
		c.onTxList = true
		e.txList = append(e.txList, c)
	}
	return len(p), 0
}

// close tears the ring down (the kernel cancels what is in flight), then
// the thread's descriptors.
func (e *uringEngine) close() {
	e.ring.Close()
	e.bufs.Close()
	e.t.closeFds()
}
