package loadtester

import (
	"golang.org/x/sys/unix"

	"weaseldb/internal/uring"
)

// The io_uring engine's open loop (engine_uring.go has the rest): how long
// a wait sleeps through responses, the kernel's receive stamps that let
// it, and the count of connections a response is due on.
//
// Who owns what: the loop's alone, like the rest of the engine.

// waitCount is how many completions end the wait: the sends' and
// cancels' own, which come at once, plus one. In the open loop, while the
// next send is near and a connection is free for it (mayDeferReads, the
// epoll engine's lazy reads), it is those plus one per connection a
// response is due on (awaiting, sendsNow): the thread wakes once for the
// responses to a pass's requests, or at its next send, whichever comes
// first, not once per response. With task work deferred to this thread, a
// completion short of the count does not wake it.
//
// Each response is stamped when it is reaped (the epoll engine reads the
// kernel's stamp instead), so one that came before the last of its batch
// is timed up to the batch's spread late, and never later than the next
// send. Sleeping through every response to the next send was measured
// too: at 5,000 req/s (200 µs apart) it cut the client CPU per request by
// a third but took the median latency from 98 to 238 µs, the reap delay
// and not the server.
func (e *uringEngine) waitCount(timeout int64) uint32 {
	n := e.expect + 1
	switch {
	case !e.t.pace.on() || !e.t.mayDeferReads(timeout):
	case e.stamping:
		n = lazyWaitCount
	default:
		n = max(n, e.expect+uint32(e.awaiting)+e.sendsNow)
	}
	return n
}

// lazyWaitCount is the completion count of a wait that sleeps through
// every response to the next send, which only its timeout ends (the
// kernel clamps the count to the completion queue's size).
const lazyWaitCount = 2 * uringEntries

// receivedMsg queues a recvmsg's payload with the kernel's receive stamp
// (the reap's time where none came); an empty payload is the stream's end.
func (e *uringEngine) receivedMsg(c *conn, id uint16, res int) {
	buf := e.bufs.Buf(id, res)
	control, payload, ok := uring.ParseRecvmsg(buf, 0, uringCtrlLen)
	if !ok || len(payload) == 0 {
		e.bufs.Recycle(id, false)
		c.rxDone = true
		if !ok {
			c.rxErr = unix.EPROTO
		}
		return
	}
	at := e.at
	if wall, stamped := parseStamp(control); stamped {
		at = min(wall-e.t.rx.offset, e.at)
		e.stamping = true
	}
	c.rxq = append(c.rxq, rxBuf{id: id, off: len(buf) - len(payload), n: len(payload), at: at})
	if !c.recvOn {
		e.rearm = append(e.rearm, c)
	}
}

// sentAll notes that c's bytes went out: a response is due on it.
func (e *uringEngine) sentAll(c *conn) {
	if !c.awaiting {
		c.awaiting = true
		e.awaiting++
	}
}

// answered notes that input came on c (or c closed): no response is due.
func (e *uringEngine) answered(c *conn) {
	if c.awaiting {
		c.awaiting = false
		e.awaiting--
	}
}
