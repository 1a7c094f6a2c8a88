package loadtester

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"weaseldb/internal/uring"
)

// A closed connection's socket closes with it (the peer reads its end of
// stream) though no other connection takes its file slot, and the next
// connection in the same slot sends its requests to its own peer: the slot is
// emptied before the descriptor is closed, and set again when the slot is
// adopted.
func TestUringClosedConnectionLeavesNoFileInItsSlot(t *testing.T) {
	th, e, _ := newUringTestThread(t)
	if e.files == 0 {
		t.Skip("the kernel gave no file table")
	}
	old, oldPeer := socketPair(t)
	c := adoptUp(t, th, e, old)
	if c.fileFlags&uring.SQEFixedFile == 0 || c.file != c.slot {
		t.Fatalf("connection in slot %d names file %d, flags %#x: want its slot, fixed", c.slot, c.file, c.fileFlags)
	}
	slot := c.slot
	th.closeConn(c, false)
	turnUntil(t, e, "the closed connection's peer to read its end of stream", func() bool {
		n, err := unix.Read(oldPeer, make([]byte, 16))
		return n == 0 && err == nil
	})

	next, nextPeer := socketPair(t)
	c = adoptUp(t, th, e, next)
	if c.slot != slot || c.file != slot {
		t.Fatalf("the next connection took slot %d (file %d), want the freed slot %d", c.slot, c.file, slot)
	}
	got := make([]byte, 4)
	var n int
	turnUntil(t, e, "the next connection's peer to read its first request", func() bool {
		n, _ = unix.Read(nextPeer, got)
		return n > 0
	})
	if string(got[:n]) != "GET " {
		t.Fatalf("the next connection's peer read %q, want its request", got[:n])
	}
}

// Where the kernel gave no file table, or the connection's slot lies past
// it, the connection's operations name its descriptor, and it works the
// same: its requests go out, and closing it closes its socket.
func TestUringConnectionWithoutFileSlotUsesItsDescriptor(t *testing.T) {
	for _, tt := range []struct {
		name  string
		files uint32 // the table's size as the engine sees it
	}{
		{"no table", 0},
		{"slot past the table", 1}, // slot 0 is the harness's connection
	} {
		t.Run(tt.name, func(t *testing.T) {
			th, e, _ := newUringTestThread(t)
			e.files = tt.files
			fd, peer := socketPair(t)
			c := adoptUp(t, th, e, fd)
			if c.fileFlags != 0 || c.file != int32(fd) {
				t.Fatalf("connection in slot %d names file %d, flags %#x: want its descriptor %d", c.slot, c.file, c.fileFlags, fd)
			}
			got := make([]byte, 4)
			turnUntil(t, e, "the peer to read the first request", func() bool {
				n, _ := unix.Read(peer, got)
				return n > 0
			})
			th.closeConn(c, false)
			turnUntil(t, e, "the peer to read its end of stream", func() bool {
				n, err := unix.Read(peer, got)
				return n == 0 && err == nil
			})
		})
	}
}

// adoptUp adopts fd on th and brings it up as its connect's completion
// would.
func adoptUp(t *testing.T, th *netThread, e *uringEngine, fd int) *conn {
	t.Helper()
	th.adopt(handoff{fd: fd})
	var c *conn
	for _, x := range th.conns {
		if x != nil && x.fd == fd {
			c = x
		}
	}
	if c == nil {
		t.Fatal("the adopted connection is not in the table")
	}
	e.complete(&uring.CQE{UserData: uringData(uopConnect, c.slot, c.gen), Res: int32(unix.POLLOUT)})
	if c.state != connActive {
		t.Fatal("the connect's completion did not bring the connection up")
	}
	return c
}

// turnUntil turns e's loop (wait, then dispatch) until done, failing after
// a deadline far beyond what the kernel needs.
func turnUntil(t *testing.T, e *uringEngine, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10s for %s", what)
		}
		e.wait(int64(time.Millisecond))
		e.dispatch()
	}
}

// Connections that close after one request each, their slots (and so
// their registered file slots) reused by the next: every request reaches
// its own connection's server side and is answered (a stale file in a
// reused slot would send on a closed socket, or on another connection's).
// On io_uring whatever the suite's engine, since only it has file slots.
func TestUringFileSlotsReusedByShortConnections(t *testing.T) {
	if err := uring.Probe(); err != nil {
		t.Skip(err)
	}
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			s := startTestServer(t, network, nil)
			cfg := testConfig(s)
			cfg.IOBackend = IOBackendIOUring
			cfg.RequestsPerConn = 1
			cfg.Duration = 500 * time.Millisecond
			res := runOK(t, cfg)
			if res.Errors != 0 || res.Requests == 0 {
				t.Fatalf("requests %d errors %v", res.Requests, res.ErrorsByKind)
			}
			if res.ConnectionsOpened < 4*int64(cfg.Concurrency) {
				t.Fatalf("only %d connections opened: too few to reuse each slot several times", res.ConnectionsOpened)
			}
			if got := s.requests.Load(); got < res.Requests {
				t.Fatalf("the server read %d requests, the client counted %d answered", got, res.Requests)
			}
		})
	}
}
