package eventloop

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"
)

// reusePortListeners binds one SO_REUSEPORT listener per loop on one
// ephemeral port.
func reusePortListeners(t *testing.T, loops int) ([]*Listener, string) {
	t.Helper()
	var lns []*Listener
	port := 0
	for i := 0; i < loops; i++ {
		ln, err := ListenTCPReusePort("127.0.0.1", port, i)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		port = ln.Port()
		lns = append(lns, ln)
	}
	return lns, "127.0.0.1:" + strconv.Itoa(port)
}

// Connections opened at once on an idle server land on every loop: the
// kernel picks a loop's listener by a hash of the connection, instead of
// waking the first waiting loop as a shared EPOLLEXCLUSIVE listener does.
func TestReusePortSpreadsConnections(t *testing.T) {
	const loops, conns = 4, 200
	lns, addr := reusePortListeners(t, loops)
	h := &lineHandler{inline: true}
	srv, err := NewServer(lns, loops, withTestBackend(Options{}), func(int) Handler { return h }, func(err error) { t.Errorf("loop: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	defer srv.Close()
	defer srv.Stop(3 * time.Second)
	var cs []net.Conn
	for range conns {
		c := dial(t, addr)
		defer c.Close()
		cs = append(cs, c)
	}
	for i, c := range cs {
		io.WriteString(c, "x\n")
		if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "x\n" {
			t.Fatalf("conn %d: %q %v", i, line, err)
		}
	}
	total := int64(0)
	for _, l := range srv.Loops() {
		n := l.Accepted.Load()
		total += n
		if n == 0 {
			t.Errorf("loop %d accepted none of %d connections", l.ID(), conns)
		}
	}
	if total != conns {
		t.Errorf("accepted %d, want %d", total, conns)
	}
}

// blockOnce holds each loop's first "block" line until release is closed:
// a loop held there accepts nothing, so connections queue on its listener.
type blockOnce struct {
	lineHandler
	mu      sync.Mutex
	blocked map[int]bool
	held    chan int
	release chan struct{}
}

func (h *blockOnce) OnData(c *Conn, in []byte) (int, Action) {
	if string(in) == "block\n" {
		h.mu.Lock()
		first := !h.blocked[c.Loop().ID()]
		h.blocked[c.Loop().ID()] = true
		h.mu.Unlock()
		if first {
			h.held <- c.Loop().ID()
			<-h.release
		}
	}
	return h.lineHandler.OnData(c, in)
}

// A loop that stops closes its own listener without losing the connections
// queued on it: they are taken from the backlog, their requests answered,
// and then they close. Each loop is held in a handler while the
// connections queue, and the stop begins before it is let go.
func TestReusePortStopServesQueuedConnections(t *testing.T) {
	const loops, conns = 2, 40
	lns, addr := reusePortListeners(t, loops)
	h := &blockOnce{lineHandler: lineHandler{inline: true}, blocked: map[int]bool{}, held: make(chan int, 64), release: make(chan struct{})}
	srv, err := NewServer(lns, loops, withTestBackend(Options{}), func(int) Handler { return h }, func(err error) { t.Errorf("loop: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.Start()
	// Blockers until every loop is held (a blocker hashed to a held loop
	// queues, and is answered at the stop like the rest).
	var cs []net.Conn
	var want []string
	for heldLoops := 0; heldLoops < loops; {
		c := dial(t, addr)
		defer c.Close()
		io.WriteString(c, "block\n")
		cs, want = append(cs, c), append(want, "block\n")
		select {
		case <-h.held:
			heldLoops++
		case <-time.After(200 * time.Millisecond):
		}
	}
	for i := range conns {
		c := dial(t, addr) // the handshake completes in the kernel: queued
		defer c.Close()
		io.WriteString(c, "q"+strconv.Itoa(i)+"\n")
		cs, want = append(cs, c), append(want, "q"+strconv.Itoa(i)+"\n")
	}
	stopped := make(chan error, 1)
	go func() { stopped <- srv.Stop(10 * time.Second) }()
	for _, l := range srv.Loops() {
		for !l.stopReq.Load() {
			time.Sleep(time.Millisecond)
		}
	}
	close(h.release)
	for i, c := range cs {
		got, err := io.ReadAll(c)
		if err != nil || string(got) != want[i] {
			t.Errorf("conn %d: got %q (%v), want %q then EOF", i, got, err, want[i])
		}
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if n := srv.Counters().Accepted; n != int64(len(cs)) {
		t.Errorf("accepted %d, want %d", n, len(cs))
	}
	for _, ln := range lns {
		if !ln.closed.Load() {
			t.Errorf("listener %s still open after the stop", ln.Addr())
		}
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Error("a dial after the stop was accepted")
	}
}

func TestNewServerRefusesAnotherLoopsListener(t *testing.T) {
	lns, _ := reusePortListeners(t, 3)
	if _, err := NewServer(lns, 2, Options{}, func(int) Handler { return &lineHandler{inline: true} }, nil); err == nil {
		t.Fatal("NewServer with a listener of loop 2 and 2 loops: no error")
	}
}
