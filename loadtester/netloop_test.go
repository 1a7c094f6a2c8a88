package loadtester

import (
	"math"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// newTestThread builds a network thread without a target, for driving its
// dispatch by hand.
func newTestThread(t *testing.T) *netThread {
	t.Helper()
	cfg := DefaultConfig()
	kinds, table, err := newKinds(&cfg, "run")
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{cfg: cfg, tmpl: kinds[0].tmpl, kinds: kinds, table: table, base: time.Now(), connReqs: make(chan connRequest, 16)}
	r.windowEnd.Store(math.MaxInt64) // the window never closes
	th, err := newNetThread(r, 0)
	if err != nil {
		t.Fatal(err)
	}
	r.threads = []*netThread{th}
	t.Cleanup(th.shutdown)
	return th
}

// feed hands data to c's protocol as a read on th would; false means the
// connection closed.
func feed(th *netThread, c *conn, data []byte, now int64) bool {
	return c.proto.consume(th, c, data, now)
}

// completeHead books the response at the head of c's pipeline (in
// order, as HTTP/1.1's) and moves the head past it.
func completeHead(th *netThread, c *conn, now int64) {
	status, _, _ := c.proto.response(c.head)
	th.answer(c, c.popHead(), now, status)
}

// socketPair returns a non-blocking end for the thread and the peer's end.
func socketPair(t testing.TB) (mine, peer int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[1]) })
	return fds[0], fds[1]
}

// A stale event (an older generation of a reused slot) must not touch the
// connection now in the slot (hazard #1).
func TestStaleEventIsDropped(t *testing.T) {
	th := newTestThread(t)
	a, _ := socketPair(t)
	th.adopt(handoff{fd: a, connSlot: 0})
	old := th.conns[0]
	th.closeConn(old, false)
	b, peerB := socketPair(t)
	th.adopt(handoff{fd: b, connSlot: 1})
	cur := th.conns[old.slot]
	if cur == nil || cur.gen == old.gen {
		t.Fatalf("slot not reused with a new generation")
	}
	unix.Write(peerB, []byte("garbage that would fail the parser\r\n\r\n"))
	stale := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLHUP, Fd: old.slot, Pad: old.gen}
	e := th.eng.(*epollEngine)
	e.dispatchEvent(&stale)
	if cur.state == connClosed || th.acct.books.measured.errors[errParse]+th.acct.books.measured.failedBy[errParse] != 0 {
		t.Fatalf("a stale event closed the slot's new connection")
	}
	fresh := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT, Fd: cur.slot, Pad: cur.gen}
	e.dispatchEvent(&fresh)
	if cur.state != connClosed || th.acct.books.measured.errors[errParse]+th.acct.books.measured.failedBy[errParse] != 1 {
		t.Fatalf("the current generation's event was not handled (state %v)", cur.state)
	}
}

// Bytes that arrive before the connection is registered are still read
// (hazard #3: ADD reports readiness that already exists).
func TestReadinessBeforeRegistration(t *testing.T) {
	th := newTestThread(t)
	mine, peer := socketPair(t)
	unix.Write(peer, []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
	th.adopt(handoff{fd: mine, connSlot: 0})
	e := th.eng.(*epollEngine)
	deadline := time.Now().Add(5 * time.Second)
	for th.acct.books.measured.requests == 0 && time.Now().Before(deadline) {
		n, err := unix.EpollWait(e.epfd, e.evs, 100)
		if err != nil && err != unix.EINTR {
			t.Fatal(err)
		}
		for i := range n {
			e.dispatchEvent(&e.evs[i])
		}
	}
	if th.acct.books.measured.requests != 1 {
		t.Fatalf("the response written before registration was not read")
	}
}

// A connection with more bytes than its read budget is served again before
// the loop blocks, and its responses all arrive (hazard #5).
func TestReadBudgetRequeues(t *testing.T) {
	th := newTestThread(t)
	mine, peer := socketPair(t)
	unix.SetsockoptInt(peer, unix.SOL_SOCKET, unix.SO_SNDBUF, 4<<20)
	th.adopt(handoff{fd: mine, connSlot: 0})
	// One response with a body larger than readBudget full buffers.
	body := make([]byte, (readBudget+4)*readBufSize)
	head := []byte("HTTP/1.1 200 OK\r\nContent-Length: " + itoa(len(body)) + "\r\n\r\n")
	go func() {
		for _, part := range [][]byte{head, body} {
			for len(part) > 0 {
				n, err := unix.Write(peer, part)
				if err == unix.EAGAIN {
					time.Sleep(time.Millisecond)
					continue
				}
				if err != nil {
					return
				}
				part = part[n:]
			}
		}
	}()
	e := th.eng.(*epollEngine)
	sawReady := false
	deadline := time.Now().Add(5 * time.Second)
	for th.acct.books.measured.requests == 0 && time.Now().Before(deadline) {
		e.wait(th.waitTimeout())
		e.dispatch()
		sawReady = sawReady || len(th.ready) > 0
		th.serveReady()
	}
	if th.acct.books.measured.requests != 1 {
		t.Fatalf("the large response was not completed")
	}
	if !sawReady {
		t.Logf("the writer never got ahead of the reader by %d buffers; budget path not exercised", readBudget)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
