package eventloop

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"weaseldb/internal/nettest"
)

// tickHandler streams: "start\n" is answered "ok\n", then the loop's timer
// streams "tick N\n" every 20 ms, three times, the last one ending the
// connection; "bye\n" at stop. Turns are counted to see the loop sleep.
type tickHandler struct {
	turns   atomic.Int64
	stopped atomic.Int64
	c       *Conn // loop goroutine only
	ticks   int
	next    time.Time
}

func (h *tickHandler) OnOpen(*Conn)  {}
func (h *tickHandler) OnClose(*Conn) {}
func (h *tickHandler) OnData(c *Conn, in []byte) (int, Action) {
	if string(in) == "start\n" {
		c.Reply(c.NextSeq(), []byte("ok\n"), false)
		h.c, h.ticks, h.next = c, 0, time.Now().Add(20*time.Millisecond)
		c.loop.SetTimer(h.next)
	}
	return len(in), Continue
}

func (h *tickHandler) OnTurnEnd(l *Loop) {
	h.turns.Add(1)
	if h.c == nil || time.Now().Before(h.next) {
		return
	}
	h.ticks++
	last := h.ticks == 3
	if !h.c.Stream([]byte("tick "+strconv.Itoa(h.ticks)+"\n"), last) {
		panic("Stream refused with every response queued")
	}
	if last {
		h.c = nil
		l.SetTimer(time.Time{})
		return
	}
	h.next = time.Now().Add(20 * time.Millisecond)
	l.SetTimer(h.next)
}

func (h *tickHandler) OnStop(*Loop) {
	h.stopped.Add(1)
	if h.c != nil {
		h.c.Stream([]byte("bye\n"), true)
		h.c = nil
	}
}

func startTickServer(t *testing.T) (*Server, *tickHandler, string) {
	t.Helper()
	ln, err := ListenTCP("127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	h := &tickHandler{}
	srv, err := NewServer([]*Listener{ln}, 1, withTestBackend(Options{}), func(int) Handler { return h }, func(err error) { t.Errorf("loop: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(func() { srv.Stop(3 * time.Second); srv.Close() })
	return srv, h, ln.Addr()[len("tcp "):]
}

// The timer drives a stream after the numbered response; the last piece
// ends the connection; with the timer cleared the loop sleeps.
func TestStreamOnTimer(t *testing.T) {
	_, h, addr := startTickServer(t)
	c, err := net.DialTimeout("tcp", addr, nettest.DialTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	io.WriteString(c, "start\n")
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "ok\ntick 1\ntick 2\ntick 3\n" {
		t.Fatalf("%q %v", got, err)
	}
	before := h.turns.Load()
	time.Sleep(300 * time.Millisecond)
	if n := h.turns.Load() - before; n > 2 {
		t.Fatalf("%d loop turns while idle without a timer", n)
	}
}

// OnStop runs before the connections drain, so a stream ends with its
// last words.
func TestStreamEndsAtStop(t *testing.T) {
	srv, h, addr := startTickServer(t)
	c, err := net.DialTimeout("tcp", addr, nettest.DialTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	io.WriteString(c, "start\n")
	br := bufio.NewReader(c)
	if line, err := br.ReadString('\n'); err != nil || line != "ok\n" {
		t.Fatalf("%q %v", line, err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- srv.Stop(3 * time.Second) }()
	defer func() { <-stopped }() // before the cleanup's Stop: Stop is not reentrant
	rest, err := io.ReadAll(br)
	if err != nil || len(rest) < 4 || string(rest[len(rest)-4:]) != "bye\n" || h.stopped.Load() != 1 {
		t.Fatalf("%q %v, OnStop ran %d times", rest, err, h.stopped.Load())
	}
}
