// Connection timeouts: the header, body, idle and write deadlines of every
// connection, kept in one deadline heap per loop and checked on the loop's
// own clock through its wait timeout. Loop goroutine only, except the
// fields of Conn under mu that a Sender also writes (idleSince).
//
// The heap is lazy so that a request costs no heap operation: each
// connection is filed at a time no later than its real deadline, and the
// real deadline is computed from the connection's state only when that
// time comes. A connection that made progress meanwhile is simply filed
// again, later. The only state changes that can bring a deadline earlier
// are seen by the loop (input arriving), which files the connection again
// at once. A Sender that completes a response on a connection (making it
// idle) tells nobody: while a request is in flight the connection stays
// filed no later than now plus the timeout that would follow its answer,
// so it is looked at in time either way.

package eventloop

import (
	"container/heap"
	"time"

	"golang.org/x/sys/unix"
)

// Cause is why the loop closed a connection on its own.
type Cause uint8

// Causes of a close by the loop.
const (
	CauseNone          Cause = iota
	CauseHeaderTimeout       // no complete request head in HeaderTimeout
	CauseBodyTimeout         // no byte of an announced body in BodyTimeout
	CauseIdleTimeout         // a keep-alive connection idle for IdleTimeout
	CauseWriteTimeout        // owed bytes the peer took none of in WriteTimeout
	CauseConnLimit           // accepted past MaxConns and closed at once
	numCauses
)

var causeNames = [numCauses]string{"none", "header_timeout", "body_timeout", "idle_timeout", "write_timeout", "connection_limit"}

// String is the cause's label, as /metrics shows it.
func (c Cause) String() string {
	if c < numCauses {
		return causeNames[c]
	}
	return "unknown"
}

// timerSlack is the sweep period: due connections are handled at most this
// long after their deadline, and deadlines this close together share one
// wake-up of the loop instead of one each.
const timerSlack = 5 * time.Millisecond

// deadlineHeap is a min-heap of connections on their filedAt time. A Conn
// knows its index, so it can be moved or removed in O(log n); the slice is
// the loop's and grows with the number of connections, never per request.
type deadlineHeap []*Conn

func (h deadlineHeap) Len() int           { return len(h) }
func (h deadlineHeap) Less(i, j int) bool { return h[i].filedAt < h[j].filedAt }
func (h deadlineHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx, h[j].heapIdx = i, j
}
func (h *deadlineHeap) Push(x any) {
	c := x.(*Conn)
	c.heapIdx = len(*h)
	*h = append(*h, c)
}
func (h *deadlineHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	c.heapIdx = -1
	return c
}

// timeoutsOn tells whether any connection timeout is enabled.
func (l *Loop) timeoutsOn() bool { return l.minTimeout > 0 }

// file makes sure c is looked at no later than at for its timeouts: it is
// filed there unless it is already filed earlier.
func (l *Loop) file(c *Conn, at int64) {
	if !l.timeoutsOn() || c.streaming {
		return
	}
	l.fileAt(c, at)
}

// fileAt files c in the heap at at, or moves it there if that is earlier
// than where it is filed: the one timer structure of a loop's connections
// (their timeouts and, when lingering, the linger's end).
func (l *Loop) fileAt(c *Conn, at int64) {
	switch {
	case c.heapIdx < 0:
		c.filedAt = at
		heap.Push(&l.timeouts, c)
	case at < c.filedAt:
		c.filedAt = at
		heap.Fix(&l.timeouts, c.heapIdx)
	}
}

// unfile takes c out of the heap (closed, beginning its linger, or streaming).
func (l *Loop) unfile(c *Conn) {
	if c.heapIdx >= 0 {
		heap.Remove(&l.timeouts, c.heapIdx)
	}
}

// touchAfterRead files c after input was handled: a partial request on a
// connection that owes nothing and has nothing in flight starts (or moves)
// its header or body deadline; a request in flight bounds the deadline that
// follows its answer.
func (l *Loop) touchAfterRead(c *Conn) {
	if !l.timeoutsOn() || c.streaming || c.finishing() {
		return
	}
	if c.inflight.Load() > 0 {
		l.file(c, l.now+int64(l.afterAnswer(c)))
		return
	}
	if len(c.in) > 0 && c.owed.Load() == 0 {
		if at, _ := l.deadlineOf(c); at > 0 {
			l.file(c, at)
		}
	}
}

// afterAnswer is the timeout that runs once the requests in flight are
// answered: the header or body timeout for a partial request behind them,
// else the idle timeout; the smallest enabled one when that one is off.
func (l *Loop) afterAnswer(c *Conn) time.Duration {
	o := &l.opt
	d := o.IdleTimeout
	if len(c.in) > 0 {
		d = o.HeaderTimeout
		if c.awaitingBody {
			d = o.BodyTimeout
		}
	}
	if d <= 0 {
		d = l.minTimeout
	}
	return d
}

// deadlineOf computes when c times out and why, from its state now; 0 when
// no client deadline runs (a request is in flight, the connection drains
// or streams, or the timeout of its state is off).
func (l *Loop) deadlineOf(c *Conn) (at int64, cause Cause) {
	o := &l.opt
	if c.streaming || c.state >= stateLingering {
		return 0, CauseNone
	}
	c.mu.Lock()
	owed, idleSince, progress, answered := c.outBytes, c.idleSince, c.writeSince, c.nextSend > 0
	c.mu.Unlock()
	switch {
	case owed > 0:
		if o.WriteTimeout > 0 {
			return progress + int64(o.WriteTimeout), CauseWriteTimeout
		}
	case c.inflight.Load() > 0 || c.finishing():
		// The server's turn (or the connection is finishing): no client
		// deadline.
	case len(c.in) > 0 && c.awaitingBody:
		if o.BodyTimeout > 0 {
			return max(idleSince, c.lastInputAt) + int64(o.BodyTimeout), CauseBodyTimeout
		}
	case !answered:
		// The first request: its head is due HeaderTimeout after accept,
		// however its bytes trickle in (idleSince is the accept time).
		if o.HeaderTimeout > 0 {
			return idleSince + int64(o.HeaderTimeout), CauseHeaderTimeout
		}
	case len(c.in) > 0:
		// A later request: its head is due HeaderTimeout after the previous
		// response ended or, on a connection that sat idle, after its first
		// byte came (the idle timeout covered the wait before it).
		if o.HeaderTimeout > 0 {
			return max(idleSince, c.firstInputAt) + int64(o.HeaderTimeout), CauseHeaderTimeout
		}
	default:
		if o.IdleTimeout > 0 {
			return idleSince + int64(o.IdleTimeout), CauseIdleTimeout
		}
	}
	return 0, CauseNone
}

// expireTimeouts handles every connection whose filed time has come: it
// times out, or it is filed again at its real deadline (or, with a request
// in flight, at the bound after its answer).
func (l *Loop) expireTimeouts() {
	for len(l.timeouts) > 0 && l.timeouts[0].filedAt <= l.now {
		c := heap.Pop(&l.timeouts).(*Conn)
		if c.isGone() {
			continue
		}
		if c.state == stateLingering {
			if l.now >= c.lingerUntil {
				l.closeConn(c) // the peer never sent its FIN
			} else {
				l.fileAt(c, c.lingerUntil)
			}
			continue
		}
		at, cause := l.deadlineOf(c)
		if cause == CauseWriteTimeout && at <= l.now && l.peerTookBytes(c) {
			at = l.now + int64(l.opt.WriteTimeout)
		}
		switch {
		case at == 0:
			l.file(c, l.now+int64(l.afterAnswer(c)))
		case at > l.now:
			l.file(c, at)
		default:
			l.timeOut(c, cause)
		}
	}
}

// peerTookBytes tells whether the socket's send queue shrank since the
// write clock last started: a reader that takes bytes steadily but less
// than the kernel's EPOLLOUT threshold (about half a send buffer) per write
// timeout raises no EPOLLOUT, yet is not stalled. One ioctl, only when a
// write deadline comes due.
func (l *Loop) peerTookBytes(c *Conn) bool {
	queued, err := unix.IoctlGetInt(c.fd, unix.SIOCOUTQ)
	if err != nil {
		return false
	}
	took := queued < c.sendQueued
	c.mu.Lock()
	if took {
		c.writeSince = l.now
	}
	c.mu.Unlock()
	c.sendQueued = queued
	return took
}

// startWriteClockLocked records that c owes bytes the socket did not take: the
// write deadline runs from now, and the send queue's size is remembered so
// a later look can tell whether the peer took any. Called under c.mu.
func (l *Loop) startWriteClockLocked(c *Conn) {
	c.writeSince = l.now
	if l.opt.WriteTimeout > 0 {
		if q, err := unix.IoctlGetInt(c.fd, unix.SIOCOUTQ); err == nil {
			c.sendQueued = q
		}
	}
}

// timeOut ends c for cause: a request cut in its head or body gets the
// handler's answer (HTTP's 408) after every response owed before it, then
// the connection closes; the others are closed at once. No linger after a
// timeout: the peer is silent by definition, so once its unread input is
// discarded a close sends FIN, not RST, and the descriptor is free at once
// (a slot under MaxConns that a silent client must not keep).
func (l *Loop) timeOut(c *Conn, cause Cause) {
	l.closedBy[cause].Add(1)
	if (cause == CauseHeaderTimeout || cause == CauseBodyTimeout) && len(c.in) > 0 && l.timeoutH != nil {
		c.stopInput()
		l.timeoutH.OnRequestTimeout(c)
		c.needFlush = false
		l.flush(c)
		if c.isGone() {
			return
		}
		if c.Owed() == 0 && c.inflight.Load() == 0 {
			l.discardInput(c)
			l.closeConn(c)
			return
		}
		if l.traits.asyncSends {
			// The 408 is a send in flight, so it is never written by now;
			// close once it is sent, without a linger, as above (such a
			// backend's receive has been taking the peer's input all
			// along, so the close is a FIN, not a reset).
			c.noLinger = true
		}
		// The 408 waits behind what the peer has not read: drain, under
		// the write timeout.
		l.beginDrain(c)
		if c.state == stateDraining {
			l.file(c, l.now+int64(l.minTimeout))
		}
		return
	}
	l.closeConn(c)
}

// nextTimeout is when the loop must next look at its timeouts (0: never),
// rounded up to the sweep period so that nearby deadlines share a wake-up.
func (l *Loop) nextTimeout() int64 {
	if len(l.timeouts) == 0 {
		return 0
	}
	at := l.timeouts[0].filedAt
	slack := int64(timerSlack)
	return (at + slack - 1) / slack * slack
}
