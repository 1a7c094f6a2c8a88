package loadtester

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// newTestThread builds a network thread without a target, for driving its
// dispatch by hand.
func newTestThread(t *testing.T) *netThread {
	t.Helper()
	cfg := DefaultConfig()
	tmpl, err := newRequestTemplate("GET", "/ok", "h", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{cfg: cfg, tmpl: tmpl, base: time.Now(), connReqs: make(chan connRequest, 16)}
	th, err := newNetThread(r, 0)
	if err != nil {
		t.Fatal(err)
	}
	r.threads = []*netThread{th}
	t.Cleanup(th.shutdown)
	return th
}

// socketPair returns a non-blocking end for the thread and the peer's end.
func socketPair(t *testing.T) (mine, peer int) {
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
	th.closeConn(old, 0)
	b, peerB := socketPair(t)
	th.adopt(handoff{fd: b, connSlot: 1})
	cur := th.conns[old.slot]
	if cur == nil || cur.gen == old.gen {
		t.Fatalf("slot not reused with a new generation")
	}
	unix.Write(peerB, []byte("garbage that would fail the parser\r\n\r\n"))
	stale := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLHUP, Fd: old.slot, Pad: old.gen}
	th.dispatch(&stale)
	if cur.state == connClosed || th.stats.errors[errParse] != 0 {
		t.Fatalf("a stale event closed the slot's new connection")
	}
	fresh := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT, Fd: cur.slot, Pad: cur.gen}
	th.dispatch(&fresh)
	if cur.state != connClosed || th.stats.errors[errParse] != 1 {
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
	deadline := time.Now().Add(5 * time.Second)
	for th.stats.requests == 0 && time.Now().Before(deadline) {
		n, err := unix.EpollWait(th.epfd, th.evs, 100)
		if err != nil && err != unix.EINTR {
			t.Fatal(err)
		}
		for i := range n {
			th.dispatch(&th.evs[i])
		}
	}
	if th.stats.requests != 1 {
		t.Fatalf("the response written before registration was not read")
	}
}
