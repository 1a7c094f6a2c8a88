package eventloop

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"
)

// holdHandler holds every request line until the test answers it, except
// lines starting with "now ", which it answers on the loop at once (ahead
// of the held ones: they wait in the connection's early list). It marks a
// connection's last response with "last " (LastResponseMarker) and tells
// the test when the stop begins.
type holdHandler struct {
	mu      sync.Mutex
	held    []lineJob
	arrived chan struct{} // one per request
	stopped chan struct{} // closed at the end of the turn that began the stop
	stop    bool          // loop goroutine only
}

func (h *holdHandler) OnOpen(*Conn)  {}
func (h *holdHandler) OnClose(*Conn) {}
func (h *holdHandler) OnStop(*Loop)  { h.stop = true }

// OnTurnEnd ends beginStop, after every connection was marked and drained.
func (h *holdHandler) OnTurnEnd(*Loop) {
	if h.stop && h.stopped != nil {
		close(h.stopped)
		h.stopped = nil
	}
}

func (h *holdHandler) MarkLast(d []byte) []byte {
	return append([]byte("last "), d...)
}

func (h *holdHandler) OnData(c *Conn, in []byte) (int, Action) {
	used := 0
	for {
		i := bytes.IndexByte(in[used:], '\n')
		if i < 0 {
			return used, Continue
		}
		line := append([]byte(nil), in[used:used+i+1]...)
		used += i + 1
		seq := c.NextSeq()
		if bytes.HasPrefix(line, []byte("now ")) {
			c.Reply(seq, line, false)
		} else {
			h.mu.Lock()
			h.held = append(h.held, lineJob{c, seq, line})
			h.mu.Unlock()
		}
		h.arrived <- struct{}{}
	}
}

// At a graceful stop the last response each connection owes is marked
// (the protocol's Connection: close) and ends the connection, whether it
// completes after the stop began or had completed early and waited for
// the ones before it; the responses before it are not marked.
func TestStopMarksTheLastOwedResponse(t *testing.T) {
	for _, tc := range []struct {
		name, send string
		answer     []int // the held requests' indexes, in the order answered after the stop
		want       string
	}{
		{"last completes after the stop", "a\nb\nc\n", []int{2, 0, 1}, "a\nb\nlast c\n"},
		{"last completed early, before the stop", "a\nb\nnow c\n", []int{1, 0}, "a\nb\nlast now c\n"},
		{"one request", "a\n", []int{0}, "last a\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := ListenTCP("127.0.0.1", 0)
			if err != nil {
				t.Fatal(err)
			}
			h := &holdHandler{arrived: make(chan struct{}, 16), stopped: make(chan struct{})}
			srv, err := NewServer([]*Listener{ln}, 1, withTestBackend(Options{}), func(int) Handler { return h }, func(err error) { t.Errorf("loop: %v", err) })
			if err != nil {
				t.Fatal(err)
			}
			srv.Start()
			c := dial(t, "127.0.0.1:"+strconv.Itoa(ln.Port()))
			defer c.Close()
			io.WriteString(c, tc.send)
			for range bytes.Count([]byte(tc.send), []byte("\n")) {
				<-h.arrived
			}
			stopBegun := h.stopped
			stopped := make(chan error, 1)
			go func() { stopped <- srv.Stop(10 * time.Second) }()
			<-stopBegun
			s := NewSender(true)
			h.mu.Lock()
			for _, i := range tc.answer {
				j := h.held[i]
				s.Send(j.c, j.seq, j.line, false)
				s.Flush()
			}
			h.mu.Unlock()
			got, err := io.ReadAll(bufio.NewReader(c))
			if err != nil {
				t.Fatalf("read: %v (got %q)", err, got)
			}
			if string(got) != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			if err := <-stopped; err != nil {
				t.Fatal(err)
			}
			srv.Close()
		})
	}
}
