package eventloop

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"weaseldb/internal/nettest"
	"weaseldb/internal/procstat"
)

// lineHandler answers each "\n"-terminated line with the same line, through
// worker goroutines (like the pipeline's release threads), so responses
// complete out of order and come back through Sender and the post path.
type lineHandler struct {
	work     chan lineJob
	inline   bool // answer on the loop with Reply instead
	opened   atomic.Int64
	closed   atomic.Int64
	timeouts atomic.Int64 // OnRequestTimeout calls
	lines    atomic.Int64 // lines taken from input: the server's progress
	mu       sync.Mutex
	conns    []*Conn // every connection opened, for tests that read its atomics
}

type lineJob struct {
	c    *Conn
	seq  uint64
	line []byte
}

func (h *lineHandler) OnOpen(c *Conn) {
	h.opened.Add(1)
	h.mu.Lock()
	h.conns = append(h.conns, c)
	h.mu.Unlock()
}

// owed is what the server owes all its connections, bytes queued in memory
// (any goroutine: Conn.owed is an atomic mirror).
func (h *lineHandler) owed() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	var n int64
	for _, c := range h.conns {
		n += c.Owed()
	}
	return n
}
func (h *lineHandler) OnClose(*Conn)   { h.closed.Add(1) }
func (h *lineHandler) OnTurnEnd(*Loop) {}
func (h *lineHandler) OnData(c *Conn, in []byte) (int, Action) {
	used := 0
	for !c.Overloaded() {
		i := bytes.IndexByte(in[used:], '\n')
		if i < 0 {
			break
		}
		line := append([]byte(nil), in[used:used+i+1]...)
		used += i + 1
		h.lines.Add(1)
		if bytes.Equal(line, []byte("panic\n")) {
			panic("test handler panics on request")
		}
		if bytes.Equal(line, []byte("goexit\n")) {
			runtime.Goexit() // what t.FailNow does on the loop goroutine
		}
		seq := c.NextSeq()
		if n, ok := bytes.CutPrefix(line, []byte("big ")); ok {
			// "big N": N bytes of 'x' and a newline, answered on the loop.
			size, _ := strconv.Atoi(string(bytes.TrimSpace(n)))
			c.Reply(seq, append(bytes.Repeat([]byte("x"), size), '\n'), false)
			continue
		}
		if bytes.Equal(line, []byte("close\n")) {
			c.Reply(seq, line, true)
			return used, StopInput
		}
		if h.inline {
			c.Reply(seq, line, false)
			continue
		}
		h.work <- lineJob{c, seq, line}
	}
	// A partial line starting with 'B' plays a request whose head is in and
	// whose body is owed (the body timeout applies to it).
	c.SetAwaitingBody(used < len(in) && in[used] == 'B')
	return used, Continue
}

// OnRequestTimeout answers a request cut by the header or body timeout.
func (h *lineHandler) OnRequestTimeout(c *Conn) {
	h.timeouts.Add(1)
	c.Reply(c.NextSeq(), []byte("timeout\n"), true)
}

func startLineServer(t *testing.T, loops, workers int, direct bool, opt Options) (*Server, *lineHandler, string) {
	return startLineServerReport(t, loops, workers, direct, opt, func(err error) { t.Errorf("loop: %v", err) })
}

func startLineServerReport(t *testing.T, loops, workers int, direct bool, opt Options, report func(error)) (*Server, *lineHandler, string) {
	t.Helper()
	ln, err := ListenTCP("127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	h := &lineHandler{work: make(chan lineJob, 1<<16)}
	srv, err := NewServer([]*Listener{ln}, loops, withTestBackend(opt), func(int) Handler { return h }, report)
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			s := NewSender(direct)
			r := rand.New(rand.NewPCG(seed, 1))
			for {
				var j lineJob
				var ok bool
				select {
				case j, ok = <-h.work:
				default:
					s.Flush() // deliver what was collected before waiting
					j, ok = <-h.work
				}
				if !ok {
					break
				}
				if r.IntN(50) == 0 {
					time.Sleep(time.Duration(r.IntN(300)) * time.Microsecond)
				}
				s.Send(j.c, j.seq, j.line, bytes.Equal(j.line, []byte("bye\n"))) // "bye": the worker's answer ends the connection
				if r.IntN(4) == 0 {
					s.Flush()
				}
			}
			s.Flush()
		}(uint64(w))
	}
	t.Cleanup(func() {
		if err := srv.Stop(3 * time.Second); err != nil && !strings.Contains(err.Error(), "test handler panics") && !strings.Contains(err.Error(), "runtime.Goexit") {
			t.Errorf("stop: %v", err)
		}
		close(h.work)
		wg.Wait()
		srv.Close()
	})
	return srv, h, fmt.Sprintf("127.0.0.1:%d", ln.Port())
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c := nettest.Dial(t, "tcp", addr)
	c.SetDeadline(time.Now().Add(30 * time.Second))
	return c
}

// A response a Sender queues with closeAfter ends the connection once it is
// written, although the handler kept reading (it had no reason to stop: a
// pipeline stage, not the parser, decided the connection ends).
func TestSenderCloseAfterEndsAReadingConnection(t *testing.T) {
	for _, direct := range []bool{false, true} {
		t.Run(fmt.Sprintf("direct=%v", direct), func(t *testing.T) {
			_, h, addr := startLineServer(t, 1, 1, direct, Options{})
			conn := dial(t, addr)
			io.WriteString(conn, "a\nbye\n")
			got, err := io.ReadAll(conn) // up to the server's FIN
			if string(got) != "a\nbye\n" || err != nil {
				t.Fatalf("read %q, %v: want both lines, then the end of the connection", got, err)
			}
			conn.Close()
			waitFor(t, func() bool { return h.closed.Load() == h.opened.Load() })
		})
	}
}

// Responses come back in request order although workers finish them out of
// order, and the loop sleeps between posts (random pauses): a lost wake-up
// shows as a missing response and a deadline error.
func TestOrderAndNoLostWakeups(t *testing.T) {
	for _, direct := range []bool{false, true} {
		t.Run(fmt.Sprintf("direct=%v", direct), func(t *testing.T) {
			_, _, addr := startLineServer(t, 1, 3, direct, Options{})
			const clients, lines = 8, 300
			var wg sync.WaitGroup
			for k := 0; k < clients; k++ {
				conn := dial(t, addr)
				wg.Add(1)
				go func(k int) {
					defer wg.Done()
					go func() {
						r := rand.New(rand.NewPCG(uint64(k), 2))
						for i := 0; i < lines; i++ {
							if _, err := fmt.Fprintf(conn, "%d-%d\n", k, i); err != nil {
								return
							}
							if r.IntN(20) == 0 {
								time.Sleep(time.Duration(r.IntN(2000)) * time.Microsecond)
							}
						}
					}()
					br := bufio.NewReader(conn)
					for i := 0; i < lines; i++ {
						got, err := br.ReadString('\n')
						if err != nil {
							t.Errorf("client %d line %d: %v", k, i, err)
							return
						}
						if want := fmt.Sprintf("%d-%d\n", k, i); got != want {
							t.Errorf("client %d: got %q want %q", k, got, want)
							return
						}
					}
				}(k)
			}
			wg.Wait()
		})
	}
}

// A request one byte at a time, a close request after pipelined ones: every
// earlier response arrives, then EOF (no reset).
func TestCloseAfterPipelined(t *testing.T) {
	_, h, addr := startLineServer(t, 2, 2, true, Options{})
	conn := dial(t, addr)
	for _, b := range []byte("a\n") {
		conn.Write([]byte{b})
		time.Sleep(time.Millisecond)
	}
	conn.Write([]byte("b\nc\nclose\nignored\n"))
	all, err := readAll(conn)
	if err != nil {
		t.Fatalf("read: %v (got %q)", err, all)
	}
	if string(all) != "a\nb\nc\nclose\n" {
		t.Fatalf("got %q", all)
	}
	waitFor(t, func() bool { return h.closed.Load() == h.opened.Load() })
}

func readAll(c net.Conn) ([]byte, error) {
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			if err.Error() == "EOF" {
				return out, nil
			}
			return out, err
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The peer writes requests then shuts its write side: all answers, then EOF.
func TestHalfClose(t *testing.T) {
	_, h, addr := startLineServer(t, 1, 2, true, Options{})
	conn := dial(t, addr)
	conn.Write([]byte("1\n2\n3\n"))
	conn.(*net.TCPConn).CloseWrite()
	all, err := readAll(conn)
	if err != nil || string(all) != "1\n2\n3\n" {
		t.Fatalf("got %q, %v", all, err)
	}
	waitFor(t, func() bool { return h.closed.Load() == h.opened.Load() })
}

// A client that pipelines without ever reading: the server stops reading
// from it once it owes more than the high-water mark, and its memory stays
// bounded; when the client reads, everything arrives in order.
func TestNeverReadingClientIsPaused(t *testing.T) {
	_, h, addr := startLineServer(t, 1, 1, true, Options{HighWater: 64 << 10, MaxInflight: 256})
	conn := dial(t, addr)
	// (No tiny SO_RCVBUF: below the loopback MSS it stalls TCP itself.)
	line := bytes.Repeat([]byte("x"), 1000)
	line = append(line, '\n')
	var sent atomic.Int64 // bytes
	stop := make(chan struct{})
	writerDone := make(chan struct{})
	// stalled closes at the first write that times out: the socket's send
	// buffer stayed full for the whole deadline, so the server has stopped
	// reading (an event, not a guess from a quiet moment, which a loaded
	// machine gives a writer that was merely not scheduled).
	stalled := make(chan struct{})
	var stallOnce sync.Once
	go func() {
		defer close(writerDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			conn.SetWriteDeadline(time.Now().Add(200 * time.Millisecond))
			n, err := conn.Write(line)
			sent.Add(int64(n))
			if err != nil {
				stallOnce.Do(func() { close(stalled) })
			}
			if n > 0 && n < len(line) {
				// A timed-out write may leave half a line: finish it later.
				conn.SetWriteDeadline(time.Time{})
				<-stop
				conn.Write(line[n:])
				sent.Add(int64(len(line) - n))
				return
			}
		}
	}()
	select {
	case <-stalled:
	case <-time.After(30 * time.Second):
		t.Fatalf("the client's writes never stalled (%d bytes sent): the server never stopped reading", sent.Load())
	}
	// Stalled: no busy-polling of the blocked socket (EPOLLOUT only). A
	// timed-out write alone does not say the server stopped: on a loaded
	// machine it may still be catching up (reading, answering, its sends
	// completing) while the client's buffer is full. So the check is made
	// on a second in which the server made no progress at all: no line
	// read, nothing owed taken by the client. Before each, a collection,
	// so the race detector's heap from earlier tests is not collected
	// inside it; a failure names the threads that spent the CPU.
	quiet := false
	for range 30 {
		runtime.GC()
		lines0, owed0 := h.lines.Load(), h.owed()
		threads0, _ := procstat.Threads(os.Getpid())
		cpu0, err0 := procstat.SelfCPU()
		wall0 := time.Now()
		time.Sleep(time.Second)
		cpu1, err1 := procstat.SelfCPU()
		if h.lines.Load() != lines0 || h.owed() != owed0 {
			continue // still catching up: not a stall yet
		}
		quiet = true
		if err0 == nil && err1 == nil {
			if frac := float64(cpu1-cpu0) / float64(time.Since(wall0)); frac > 0.10 {
				threads1, _ := procstat.Threads(os.Getpid())
				t.Errorf("process used %.0f%% of a core in a second the server made no progress: busy-polling (threads that ran: %s)",
					frac*100, threadsThatRan(threads0, threads1))
			}
		}
		break
	}
	if !quiet {
		t.Fatalf("the server never stopped reading a client that reads nothing: 30 s with lines read or sends taken (%d lines)", h.lines.Load())
	}
	close(stop)
	owed := h.owed()
	if owed == 0 {
		t.Fatal("the server owes nothing to a client that reads nothing: the measurement is broken")
	}
	if owed > 4<<20 {
		t.Fatalf("server owes %d bytes to a client that never reads: not bounded", owed)
	}
	if sent.Load() > 100000*int64(len(line)) {
		t.Fatalf("client sent %d bytes without reading: server never paused", sent.Load())
	}
	// Read everything while the writer finishes a half-written line.
	var got atomic.Int64
	readErr := make(chan error, 1)
	go func() {
		br := bufio.NewReaderSize(conn, 1<<16)
		conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		for {
			l, err := br.ReadSlice('\n')
			if err != nil {
				readErr <- err
				return
			}
			if len(l) != len(line) {
				readErr <- fmt.Errorf("line %d: %d bytes", got.Load(), len(l))
				return
			}
			got.Add(1)
		}
	}()
	<-writerDone
	total := sent.Load() / int64(len(line))
	deadline := time.Now().Add(20 * time.Second)
	for got.Load() < total {
		select {
		case err := <-readErr:
			t.Fatalf("after %d of %d lines: %v", got.Load(), total, err)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d lines arrived", got.Load(), total)
		}
	}
}

// The control of the test above: with back-pressure off (limits far above
// anything the client sends), the same client makes the server queue
// without bound, and the memory check trips. This is what shows the check
// can fail.
func TestNeverReadingClientControlWithoutBackPressure(t *testing.T) {
	_, h, addr := startLineServer(t, 1, 1, true, Options{HighWater: 1 << 40, MaxInflight: 1 << 40})
	conn := dial(t, addr)
	line := append(bytes.Repeat([]byte("x"), 1000), '\n')
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			conn.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			conn.Write(line)
		}
	}()
	defer func() { close(stop); <-done }()
	deadline := time.Now().Add(20 * time.Second)
	for h.owed() <= 4<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("without back-pressure the server owes only %d bytes after 20 s: the bound of the test above could never fail", h.owed())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An event carrying an old generation for a descriptor number now used by
// a newer connection is dropped: the new connection survives.
func TestStaleEventIsDropped(t *testing.T) {
	h := &lineHandler{inline: true}
	opt := DefaultOptions()
	l, err := newLoop(0, nil, h, opt, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.closeFds()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[1])
	c := l.register(fds[0], true)
	if c == nil {
		t.Fatal("register failed")
	}
	stale := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLHUP | unix.EPOLLRDHUP, Fd: int32(fds[0]), Pad: int32(c.gen - 1)}
	if c.gen == 1 {
		stale.Pad = int32(c.gen + 1000)
	}
	l.dispatch(stale)
	if c.isGone() || l.StaleEvents.Load() != 1 {
		t.Fatalf("stale event applied: gone=%v stale=%d", c.isGone(), l.StaleEvents.Load())
	}
	// The matching generation is applied: data is answered inline.
	unix.Write(fds[1], []byte("hi\n"))
	l.dispatch(unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fds[0]), Pad: int32(c.gen)})
	buf := make([]byte, 16)
	n, _ := unix.Read(fds[1], buf)
	if string(buf[:n]) != "hi\n" {
		t.Fatalf("got %q", buf[:n])
	}
	l.closeConn(c)
}

// Many concurrent connections, each answered (EPOLLEXCLUSIVE across loops).
func TestManyConnections(t *testing.T) {
	srv, _, addr := startLineServer(t, 2, 2, true, Options{})
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c, err := net.DialTimeout("tcp", addr, nettest.DialTimeout)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(15 * time.Second))
			want := strconv.Itoa(i) + "\n"
			c.Write([]byte(want))
			got, err := bufio.NewReader(c).ReadString('\n')
			if err != nil || got != want {
				errs <- fmt.Errorf("conn %d: %q %v", i, got, err)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var acc int64
	for _, l := range srv.Loops() {
		acc += l.Accepted.Load()
	}
	if acc != n {
		t.Errorf("accepted %d, want %d", acc, n)
	}
}

func TestConnMask(t *testing.T) {
	for _, tc := range []struct {
		out  bool
		want uint32
	}{
		{false, unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLET},
		{true, unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLET | unix.EPOLLOUT},
	} {
		if got := connMask(tc.out); got != tc.want {
			t.Errorf("connMask(%v) = %#x, want %#x", tc.out, got, tc.want)
		}
	}
}

// A loop whose handler panics is contained: the panic is reported, that
// loop's connections are closed, and the other loop keeps accepting and
// serving.
func TestPanickingLoopIsContained(t *testing.T) {
	reported := make(chan error, 4)
	srv, _, addr := startLineServerReport(t, 2, 1, true, Options{}, func(err error) { reported <- err })
	victim := dial(t, addr)
	victim.Write([]byte("panic\n"))
	select {
	case err := <-reported:
		if !strings.Contains(err.Error(), "test handler panics") {
			t.Fatalf("report: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("panic not reported")
	}
	select {
	case err := <-srv.Failed():
		var pe *PanicError
		if !errors.As(err, &pe) || pe.Value != "test handler panics on request" || len(pe.Stack) == 0 {
			t.Fatalf("Failed() delivered %#v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Failed() delivered nothing")
	}
	if _, err := readAll(victim); err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("victim connection: %v", err)
	}
	for i := 0; i < 20; i++ {
		c := dial(t, addr)
		c.Write([]byte("hello\n"))
		got, err := bufio.NewReader(c).ReadString('\n')
		if err != nil || got != "hello\n" {
			t.Fatalf("after the panic, connection %d: %q %v", i, got, err)
		}
		c.Close()
	}
	_ = srv
}

// A loop whose goroutine ends by runtime.Goexit (recover sees no value)
// fails like a panicking one: reported, delivered on Failed, and the other
// loop keeps serving.
func TestGoexitLoopIsReportedLikeAPanic(t *testing.T) {
	reported := make(chan error, 4)
	srv, _, addr := startLineServerReport(t, 2, 1, true, Options{}, func(err error) { reported <- err })
	victim := dial(t, addr)
	victim.Write([]byte("goexit\n"))
	select {
	case err := <-reported:
		if !strings.Contains(err.Error(), "runtime.Goexit") {
			t.Fatalf("report: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Goexit not reported")
	}
	select {
	case err := <-srv.Failed():
		var pe *PanicError
		if !errors.As(err, &pe) || !pe.Goexit || pe.Value != nil || len(pe.Stack) == 0 {
			t.Fatalf("Failed() delivered %#v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Failed() delivered nothing")
	}
	if _, err := readAll(victim); err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("victim connection: %v", err)
	}
	c := dial(t, addr)
	defer c.Close()
	c.Write([]byte("hello\n"))
	if got, err := bufio.NewReader(c).ReadString('\n'); err != nil || got != "hello\n" {
		t.Fatalf("after the Goexit: %q %v", got, err)
	}
}

// threadsThatRan lists the threads whose CPU time grew between two readings
// of the process's threads, with how much ("name/tid +30ms").
func threadsThatRan(before, after []procstat.Thread) string {
	was := map[int]time.Duration{}
	for _, th := range before {
		was[th.TID] = th.CPU
	}
	var out []string
	for _, th := range after {
		if d := th.CPU - was[th.TID]; d > 0 {
			out = append(out, fmt.Sprintf("%s/%d +%v", th.Comm, th.TID, d))
		}
	}
	if len(out) == 0 {
		return "none measurable"
	}
	return strings.Join(out, ", ")
}
