// The io_uring backend of a loop (Options.Backend = BackendIOUring): one
// ring per loop, created disabled and enabled on the loop's locked thread
// (single issuer, task work deferred to it); a multishot accept per
// listener; a multishot receive per connection into the loop's
// provided-buffer ring; a multishot poll of the wake eventfd; and the
// responses as sends (writev) in the ring, so that one io_uring_enter
// submits every response of the turn and waits for the next requests.
// Senders never write to sockets themselves here (backendTraits.asyncSends):
// they queue and post to the loop, which owns every send. Everything behind
// the backend interface (handler, order, output queue, timeouts, stop) is
// the same for both backends.
//
// Owner: the loop goroutine, for everything here and the Conn fields of
// uringConn (recv; sending, sendIov and sendRefs under Conn.mu); the ring
// is never used from another thread.
//
// Each request's user data names its kind, the connection's generation and
// its descriptor (or the listener's index), so a completion for a
// connection closed since (a cancelled receive, say) is recognised and
// dropped like a stale epoll event; the provided buffer it may carry is
// given back all the same.

package eventloop

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"weaseldb/internal/uring"
)

// opKind is what a submission was for (the top byte of its user data).
type opKind uint8

const (
	opWake opKind = iota + 1
	opAccept
	opRecv
	opSend
	opCancel
)

func userData(kind opKind, gen uint32, fd int) uint64 {
	return uint64(kind)<<56 | uint64(gen)<<24 | uint64(fd)&0xffffff
}

func splitUserData(ud uint64) (kind opKind, gen uint32, fd int) {
	return opKind(ud >> 56), uint32(ud >> 24), int(ud & 0xffffff)
}

// recvState is where a connection's multishot receive stands.
type recvState uint8

const (
	recvIdle      recvState = iota // none in flight
	recvArmed                      // in flight
	recvCanceling                  // cancelled, its last completion not seen yet
)

// uringConn is a connection's state under io_uring.
type uringConn struct {
	recv recvState // its multishot receive (loop goroutine only)
	// The send in flight and the buffers it reads, kept referenced until
	// its completion (the kernel reads them). Under Conn.mu.
	sending  bool
	sendIov  []unix.Iovec
	sendRefs [][]byte
}

const (
	uringEntries = 1024
	uringBufs    = 512 // provided buffers per loop, of Options.ReadBufferSize each
	uringBgid    = 1
)

// uringBackend is a loop's ring and what the loop keeps about it.
type uringBackend struct {
	l     *Loop
	ring  *uring.Ring
	bufs  *uring.BufRing
	rearm []*Conn // connections whose receive ended for want of buffers
	recvs int     // receives in flight (armed or cancelling), closed connections' included
	// sends holds every connection with a send in flight, by the send's
	// user data, until its completion: a connection closed meanwhile
	// stays referenced, and so do the buffers the kernel still reads.
	sends  map[uint64]*Conn
	cqeFn  func(*uring.CQE)
	closed bool
	// backlog: the last turn's budget left completions in the queue
	// (uring_round.go), so the next turn does not block.
	backlog bool
}

// newUringBackend creates the loop's ring, disabled until the loop's thread
// enables it, with its buffer ring.
func newUringBackend(l *Loop) (*uringBackend, error) {
	ring, err := uring.New(uringEntries, uring.SetupSingleIssuer|uring.SetupDeferTaskrun|uring.SetupRDisabled|uring.SetupSubmitAll)
	if err != nil {
		return nil, err
	}
	bufs, err := ring.RegisterBufRing(uringBgid, uringBufs, l.opt.ReadBufferSize)
	if err != nil {
		ring.Close()
		return nil, err
	}
	u := &uringBackend{l: l, ring: ring, bufs: bufs, sends: make(map[uint64]*Conn)}
	u.cqeFn = u.complete
	return u, nil
}

// ProbeIOUring reports why io_uring cannot serve here (nil: it can):
// internal/uring's probe, which the load tester's engine shares (kernel
// 6.1 or later; a ring and a buffer ring set up and torn down).
func ProbeIOUring() error { return uring.Probe() }

func (u *uringBackend) traits() backendTraits {
	return backendTraits{lockThread: true, asyncSends: true}
}

// start runs on the loop's locked thread before its first wait.
func (u *uringBackend) start() error {
	if u.ring.Flags()&uring.SetupRDisabled != 0 {
		if err := u.ring.EnableRings(); err != nil {
			return err
		}
	}
	u.sqe().PrepPollMultishot(u.l.wakeFd, unix.POLLIN, userData(opWake, 0, 0))
	return nil
}

// sqe returns a submission slot, submitting what is queued when the ring
// is full.
func (u *uringBackend) sqe() *uring.SQE {
	for {
		if s := u.ring.GetSQE(); s != nil {
			return s
		}
		if _, err := u.ring.Submit(); err != nil {
			panic(fmt.Sprintf("io_uring submit: %v", err))
		}
	}
}

// wait submits what the turn queued and waits for completions (at most
// timeoutMs; -1: until one comes), then handles them.
func (u *uringBackend) wait(timeoutMs int) {
	var timeout time.Duration = -1
	if timeoutMs >= 0 {
		timeout = time.Duration(timeoutMs) * time.Millisecond
	}
	if _, err := u.ring.SubmitAndWait(u.roundTimeout(timeout)); err != nil {
		panic(fmt.Sprintf("io_uring_enter: %v", err))
	}
	u.l.now = monoNow()
	u.ring.CompletionsUpTo(u.l.opt.UringRoundBudget, u.cqeFn)
	u.backlog = u.l.opt.UringRoundBudget > 0 && u.ring.Ready() > 0
	u.bufs.Publish()
	if len(u.rearm) > 0 {
		for i, c := range u.rearm {
			u.rearm[i] = nil
			if !c.isGone() {
				u.armRecv(c)
			}
		}
		u.rearm = u.rearm[:0]
	}
}

func (u *uringBackend) complete(cqe *uring.CQE) {
	l := u.l
	kind, gen, fd := splitUserData(cqe.UserData)
	switch kind {
	case opWake:
		l.Wakeups.Add(1)
		var buf [8]byte
		unix.Read(l.wakeFd, buf[:])
		l.drainPosts()
		if !cqe.More() && !u.closed {
			u.sqe().PrepPollMultishot(l.wakeFd, unix.POLLIN, userData(opWake, 0, 0))
		}
	case opAccept:
		u.accepted(fd, cqe)
	case opRecv:
		if !cqe.More() {
			u.recvs--
		}
		c := u.conn(fd, gen)
		if cqe.Flags&uring.CQEFBuffer != 0 {
			id := cqe.BufferID()
			if c != nil && cqe.Res > 0 {
				u.received(c, u.bufs.Buf(id, int(cqe.Res)))
			}
			u.bufs.Recycle(id, false)
		}
		if c != nil && !c.isGone() {
			u.recvResult(c, cqe)
		}
	case opSend:
		u.sent(cqe)
	}
}

// conn is the connection a completion is for, or nil when it was closed
// since (the descriptor may even serve another connection now).
func (u *uringBackend) conn(fd int, gen uint32) *Conn {
	l := u.l
	if fd < 0 || fd >= len(l.conns) || l.conns[fd] == nil || l.conns[fd].gen != gen {
		l.StaleEvents.Add(1)
		return nil
	}
	return l.conns[fd]
}

// release frees the ring of a loop that never ran.
func (u *uringBackend) release() {
	u.closed = true
	u.bufs.Close()
	u.ring.Close()
}

// close tears the ring down once the loop closed every connection: the
// cancels they queued are submitted, their last completions awaited for a
// short while (so the kernel no longer writes into the buffers), then the
// buffer ring and the ring go.
func (u *uringBackend) close() {
	if u.closed {
		return
	}
	deadline := time.Now().Add(200 * time.Millisecond)
	for u.recvs > 0 && time.Now().Before(deadline) {
		if _, err := u.ring.SubmitAndWait(10 * time.Millisecond); err != nil {
			break
		}
		u.ring.Completions(func(cqe *uring.CQE) {
			if cqe.Flags&uring.CQEFBuffer != 0 {
				u.bufs.Recycle(cqe.BufferID(), false)
			}
			if kind, _, _ := splitUserData(cqe.UserData); kind == opRecv && !cqe.More() {
				u.recvs--
			}
		})
	}
	u.closed = true
	quiet := u.recvs <= 0
	if quiet {
		u.bufs.Close()
	}
	u.ring.Close()
	if !quiet {
		// A receive that never reported its end might still be written
		// by the kernel: the buffers' memory is left mapped rather than
		// risk it landing in memory reused since.
		u.l.warn(errors.New("io_uring: receives still in flight at close; their buffers are left mapped"))
	}
}
