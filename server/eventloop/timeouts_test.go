package eventloop

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"weaseldb/internal/procstat"
)

// The timeout rules on a loop whose clock the test sets (l.now) and whose
// events the test dispatches: every deadline is checked to the nanosecond,
// on any machine.

// clockBase is where the test's clock starts: the real monotonic clock at
// package start, so a Sender (which reads the real clock) and the test's
// loop agree on what "now" is within the test's first moments.
var clockBase = monoNow()

type clockLoop struct {
	t    *testing.T
	l    *Loop
	h    *lineHandler
	c    *Conn
	peer int
}

func newClockLoop(t *testing.T, opt Options) *clockLoop {
	t.Helper()
	opt.fill()
	h := &lineHandler{inline: true, work: make(chan lineJob, 64)}
	l, err := newLoop(0, nil, h, opt, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	l.now = clockBase
	cl := &clockLoop{t: t, l: l, h: h, peer: fds[1]}
	cl.c = l.register(fds[0], true)
	if cl.c == nil {
		t.Fatal("register failed")
	}
	t.Cleanup(func() {
		if !cl.c.isGone() {
			l.closeConn(cl.c)
		}
		unix.Close(cl.peer)
		l.closeFds()
	})
	return cl
}

// at runs the loop's timers at clockBase+d.
func (cl *clockLoop) at(d time.Duration) {
	cl.l.now = clockBase + int64(d)
	cl.l.runTimers()
}

// send writes data from the peer at clockBase+d and lets the loop read it.
func (cl *clockLoop) send(d time.Duration, data string) {
	cl.l.now = clockBase + int64(d)
	if _, err := unix.Write(cl.peer, []byte(data)); err != nil {
		cl.t.Fatal(err)
	}
	cl.l.dispatch(unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(cl.c.fd), Pad: int32(cl.c.gen)})
}

// ended tells whether the loop is done with the connection: closed, or
// lingering after its last response (SHUT_WR sent).
func (cl *clockLoop) ended() bool { return cl.c.state >= stateLingering }

// peerRead returns what the peer can read now.
func (cl *clockLoop) peerRead() string {
	var out []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(cl.peer, buf)
		if n <= 0 || err != nil {
			return string(out)
		}
		out = append(out, buf[:n]...)
	}
}

func (cl *clockLoop) closedBy(cause Cause) int64 { return cl.l.closedBy[cause].Load() }

const (
	ht = 10 * time.Second
	bt = 30 * time.Second
	it = 60 * time.Second
	wt = 20 * time.Second
)

func allTimeouts() Options {
	return Options{HeaderTimeout: ht, BodyTimeout: bt, IdleTimeout: it, WriteTimeout: wt}
}

func TestSilentConnectionIsClosedAtTheHeaderTimeout(t *testing.T) {
	cl := newClockLoop(t, allTimeouts())
	cl.at(ht - 1)
	if cl.ended() {
		t.Fatal("closed before the header timeout")
	}
	cl.at(ht)
	if !cl.c.isGone() || cl.closedBy(CauseHeaderTimeout) != 1 {
		t.Fatalf("gone=%v header timeouts=%d", cl.c.isGone(), cl.closedBy(CauseHeaderTimeout))
	}
	if got := cl.peerRead(); got != "" {
		t.Fatalf("a connection that sent nothing got %q (no request, no 408)", got)
	}
}

// The first request's head is due HeaderTimeout after accept, however its
// bytes trickle in: a byte every second does not extend it.
func TestTrickledFirstHeadIsCutAtHeaderTimeoutFromAccept(t *testing.T) {
	cl := newClockLoop(t, allTimeouts())
	for s := time.Second; s < ht; s += time.Second {
		cl.send(s, "a")
		cl.at(s)
	}
	cl.at(ht - 1)
	if cl.ended() {
		t.Fatal("cut before the header timeout")
	}
	cl.at(ht)
	if !cl.ended() || cl.h.timeouts.Load() != 1 {
		t.Fatalf("ended=%v 408s=%d", cl.ended(), cl.h.timeouts.Load())
	}
	if got := cl.peerRead(); got != "timeout\n" {
		t.Fatalf("peer read %q, want the 408 stand-in", got)
	}
}

// After a response: idle for IdleTimeout; a request that starts later has
// HeaderTimeout from its first byte; a request just before IdleTimeout is
// served.
func TestKeepAliveIdleAndNextHead(t *testing.T) {
	cl := newClockLoop(t, allTimeouts())
	cl.send(time.Second, "one\n")
	if got := cl.peerRead(); got != "one\n" {
		t.Fatalf("got %q", got)
	}
	// Idle from 1 s: the header timeout (10 s) does not apply any more.
	cl.at(time.Second + ht + time.Second)
	if cl.ended() {
		t.Fatal("an idle keep-alive connection was cut at the header timeout")
	}
	// A request just before the idle timeout is served, and idle restarts.
	t2 := time.Second + it - time.Millisecond
	cl.at(t2)
	cl.send(t2, "two\n")
	if got := cl.peerRead(); got != "two\n" || cl.ended() {
		t.Fatalf("request just before the idle timeout: %q ended=%v", got, cl.ended())
	}
	cl.at(t2 + it - 1)
	if cl.ended() {
		t.Fatal("cut before the idle timeout")
	}
	// A partial head after 5 s of idle: due HeaderTimeout after its first
	// byte, which is earlier than the idle deadline.
	t3 := t2 + 5*time.Second
	cl.send(t3, "thr")
	cl.at(t3 + ht - 1)
	if cl.ended() {
		t.Fatal("cut before the header timeout of a later request")
	}
	cl.at(t3 + ht)
	if !cl.ended() || cl.closedBy(CauseHeaderTimeout) != 1 {
		t.Fatalf("ended=%v header timeouts=%d", cl.ended(), cl.closedBy(CauseHeaderTimeout))
	}
	if got := cl.peerRead(); got != "timeout\n" {
		t.Fatalf("got %q", got)
	}
}

func TestIdleConnectionIsClosedAtTheIdleTimeout(t *testing.T) {
	cl := newClockLoop(t, allTimeouts())
	cl.send(0, "one\n")
	cl.peerRead()
	cl.at(it - 1)
	if cl.ended() {
		t.Fatal("closed before the idle timeout")
	}
	cl.at(it)
	if !cl.c.isGone() || cl.closedBy(CauseIdleTimeout) != 1 {
		t.Fatalf("gone=%v idle timeouts=%d", cl.c.isGone(), cl.closedBy(CauseIdleTimeout))
	}
}

// A request pipelined behind one in flight starts its header clock when
// the response before it ends, not when its bytes came.
func TestPipelinedHeadStartsAtTheEndOfThePreviousResponse(t *testing.T) {
	cl := newClockLoop(t, allTimeouts())
	cl.h.inline = false // answered later, by the test, as a release thread would
	cl.send(0, "one\npartial")
	job := <-cl.h.work
	s := NewSender(true)
	// Answered on the sender's own clock (monotonic, real): the test cannot
	// set it, so it reads the deadline back instead.
	s.Send(job.c, job.seq, job.line, false)
	s.Flush()
	if got := cl.peerRead(); got != "one\n" {
		t.Fatalf("got %q", got)
	}
	at, cause := cl.l.deadlineOf(cl.c)
	cl.c.mu.Lock()
	idle := cl.c.idleSince
	cl.c.mu.Unlock()
	if cause != CauseHeaderTimeout || at != idle+int64(ht) {
		t.Fatalf("deadline %v (%v), want header timeout from the end of the response", time.Duration(at-idle), cause)
	}
	// It was filed no later than that: the loop looks at it in time.
	if cl.c.heapIdx < 0 || cl.c.filedAt > at {
		t.Fatalf("filed at %d, after its deadline %d", cl.c.filedAt, at)
	}
}

func TestBodyTimeoutRestartsWithEveryByte(t *testing.T) {
	cl := newClockLoop(t, allTimeouts())
	cl.send(time.Second, "head\n") // the first request: answered
	cl.peerRead()
	cl.send(2*time.Second, "B") // a head in, its body owed
	last := 2 * time.Second
	for i := 0; i < 5; i++ {
		last += bt / 2
		cl.at(last)
		if cl.ended() {
			t.Fatalf("cut at %v though a body byte came every %v", last, bt/2)
		}
		cl.send(last, "b")
	}
	cl.at(last + bt - 1)
	if cl.ended() {
		t.Fatal("cut before the body timeout")
	}
	cl.at(last + bt)
	if !cl.ended() || cl.closedBy(CauseBodyTimeout) != 1 {
		t.Fatalf("ended=%v body timeouts=%d", cl.ended(), cl.closedBy(CauseBodyTimeout))
	}
	if got := cl.peerRead(); got != "timeout\n" {
		t.Fatalf("got %q", got)
	}
}

// shrinkBuffers makes the socket pair's buffers small so that a response of
// a few hundred KiB fills them.
func (cl *clockLoop) shrinkBuffers() {
	unix.SetsockoptInt(cl.c.fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 16<<10)
	unix.SetsockoptInt(cl.peer, unix.SOL_SOCKET, unix.SO_RCVBUF, 16<<10)
}

func TestPeerThatTakesNothingIsCutAtTheWriteTimeout(t *testing.T) {
	cl := newClockLoop(t, allTimeouts())
	cl.shrinkBuffers()
	cl.send(time.Second, "big 1000000\n")
	if cl.c.Owed() == 0 {
		t.Fatal("the response fit in the socket: the test needs a stalled write")
	}
	cl.at(time.Second + wt - 1)
	if cl.ended() {
		t.Fatal("cut before the write timeout")
	}
	cl.at(time.Second + wt)
	if !cl.c.isGone() || cl.closedBy(CauseWriteTimeout) != 1 {
		t.Fatalf("gone=%v write timeouts=%d", cl.c.isGone(), cl.closedBy(CauseWriteTimeout))
	}
}

// A peer that takes a little now and then, less than the kernel needs to
// raise EPOLLOUT, is making progress: the send queue shrinks, and the write
// clock restarts instead of cutting it.
func TestSlowButSteadyReaderIsNotCut(t *testing.T) {
	cl := newClockLoop(t, allTimeouts())
	cl.send(0, "big 8000000\n")
	if cl.c.Owed() == 0 {
		t.Fatal("the response fit in the socket: the test needs a stalled write")
	}
	// 32 KiB at a time, far less than the socket holds, so the kernel
	// would raise no EPOLLOUT (the test dispatches none either); a unix
	// socket frees its send memory a whole buffer (skb) at a time.: a unix socket frees its send memory a whole
	// buffer (skb) at a time, and these are at most half of SO_SNDBUF.
	buf := make([]byte, 32<<10)
	var clock time.Duration
	for i := 0; i < 6; i++ {
		clock += wt * 3 / 4
		if n, _ := unix.Read(cl.peer, buf); n <= 0 {
			t.Fatal("nothing to read")
		}
		cl.at(clock)
		if cl.ended() {
			t.Fatalf("a reader taking 32 KiB every %v was cut at %v", wt*3/4, clock)
		}
	}
	// Then it stops reading: cut one write timeout after the last look that
	// saw progress.
	cl.at(clock + 2*wt)
	if !cl.c.isGone() || cl.closedBy(CauseWriteTimeout) != 1 {
		t.Fatalf("gone=%v write timeouts=%d after the reader stopped", cl.c.isGone(), cl.closedBy(CauseWriteTimeout))
	}
}

// While the server owes the answer, no client timeout runs, however long.
func TestNoClientDeadlineWhileARequestIsInFlight(t *testing.T) {
	cl := newClockLoop(t, allTimeouts())
	cl.h.inline = false
	cl.send(0, "slow\n")
	for d := time.Duration(0); d <= 10*it; d += ht {
		cl.at(d)
	}
	if cl.ended() {
		t.Fatal("cut with a request in flight")
	}
}

// A stream (Stream was called) is governed by its handler's rules alone.
func TestStreamIsExempt(t *testing.T) {
	cl := newClockLoop(t, allTimeouts())
	cl.send(0, "sub\n")
	cl.peerRead()
	if !cl.c.Stream([]byte("line\n"), false) {
		t.Fatal("Stream refused")
	}
	cl.at(10 * it)
	if cl.ended() {
		t.Fatal("a stream was cut by a connection timeout")
	}
}

func TestTimeoutsOffByDefault(t *testing.T) {
	cl := newClockLoop(t, Options{})
	cl.at(1000 * time.Hour)
	if cl.ended() || len(cl.l.timeouts) != 0 {
		t.Fatalf("ended=%v filed=%d with every timeout off", cl.ended(), len(cl.l.timeouts))
	}
}

// The loop sleeps until the next deadline, rounded up to the sweep period
// so that nearby deadlines share one wake-up, and never sleeps past it by
// more than that.
func TestWaitTimeoutFollowsTheNextDeadline(t *testing.T) {
	cl := newClockLoop(t, allTimeouts())
	next := cl.l.nextTimeout()
	want := clockBase + int64(ht)
	if next < want || next >= want+int64(timerSlack) {
		t.Fatalf("next look at %v, want within %v after the header deadline", time.Duration(next-want), timerSlack)
	}
}

// Real sockets, real loop goroutines and small timeouts: the rules above,
// end to end. Lower bounds are exact (the server's clock starts after the
// client's); upper bounds leave room for a busy machine.

func startTimeoutServer(t *testing.T, opt Options) (*Server, *lineHandler, string) {
	return startLineServer(t, 1, 1, true, opt)
}

func dialAt(t *testing.T, addr string) (net.Conn, time.Time) {
	t.Helper()
	start := time.Now()
	return dial(t, addr), start
}

// readUntilEOF reads everything until EOF or error, and when it ended.
func readUntilEOF(c net.Conn) ([]byte, time.Time, error) {
	all, err := readAll(c)
	return all, time.Now(), err
}

const lateBound = 2 * time.Second // how late a close may come on a busy machine

func TestHeaderTimeoutEndToEnd(t *testing.T) {
	const timeout = 300 * time.Millisecond
	_, h, addr := startTimeoutServer(t, Options{HeaderTimeout: timeout, IdleTimeout: time.Minute})
	silent, t0 := dialAt(t, addr)
	slow, t1 := dialAt(t, addr)
	io.WriteString(slow, "a partial lin")
	for _, tc := range []struct {
		name  string
		c     net.Conn
		start time.Time
		want  string
	}{{"silent", silent, t0, ""}, {"partial head", slow, t1, "timeout\n"}} {
		got, end, err := readUntilEOF(tc.c)
		if err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if string(got) != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
		if el := end.Sub(tc.start); el < timeout || el > timeout+lateBound {
			t.Errorf("%s: closed after %v, want %v (+ at most %v)", tc.name, el, timeout, lateBound)
		}
	}
	waitFor(t, func() bool { return h.closed.Load() == h.opened.Load() })
}

// The 408 comes after every response owed for earlier pipelined requests.
func TestRequestTimeoutAfterEarlierResponses(t *testing.T) {
	_, _, addr := startTimeoutServer(t, Options{HeaderTimeout: 300 * time.Millisecond})
	c := dial(t, addr)
	io.WriteString(c, "one\ntwo\nthree\nfour-is-parti")
	got, err := readAll(c)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatal(err)
	}
	if string(got) != "one\ntwo\nthree\ntimeout\n" {
		t.Fatalf("got %q", got)
	}
}

func TestIdleTimeoutEndToEnd(t *testing.T) {
	const idle = 400 * time.Millisecond
	_, _, addr := startTimeoutServer(t, Options{HeaderTimeout: 200 * time.Millisecond, IdleTimeout: idle})
	c := dial(t, addr)
	br := bufio.NewReader(c)
	// Requests spaced at 3/4 of the idle timeout (and well past the header
	// timeout) keep the connection.
	for i := 0; i < 4; i++ {
		fmt.Fprintf(c, "ping-%d\n", i)
		if got, err := br.ReadString('\n'); err != nil || got != fmt.Sprintf("ping-%d\n", i) {
			t.Fatalf("request %d: %q %v", i, got, err)
		}
		if i < 3 {
			time.Sleep(idle * 3 / 4)
		}
	}
	last := time.Now()
	if _, err := br.ReadByte(); err != io.EOF && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("want EOF after idle, got %v", err)
	}
	if el := time.Since(last); el < idle || el > idle+lateBound {
		t.Fatalf("closed %v after the last response, want %v", el, idle)
	}
}

func TestWriteTimeoutEndToEnd(t *testing.T) {
	const wt = 500 * time.Millisecond
	_, _, addr := startTimeoutServer(t, Options{WriteTimeout: wt, HeaderTimeout: time.Minute})
	const size = 32 << 20 // more than any socket buffer holds
	t.Run("reads nothing", func(t *testing.T) {
		c := dial(t, addr)
		c.(*net.TCPConn).SetReadBuffer(64 << 10)
		fmt.Fprintf(c, "big %d\n", size)
		time.Sleep(wt + lateBound)
		// A write-timeout close drops what was owed: the client then reads
		// what its buffers held and sees the stream end (EOF or reset),
		// never the whole response.
		got, _ := readAll(c)
		if len(got) >= size+1 {
			t.Fatalf("a client that read nothing for %v got the whole response", wt+lateBound)
		}
	})
	t.Run("slow but steady reader", func(t *testing.T) {
		c := dial(t, addr)
		c.(*net.TCPConn).SetReadBuffer(64 << 10)
		const small = 4 << 20
		fmt.Fprintf(c, "big %d\n", small)
		buf := make([]byte, 32<<10)
		total := 0
		start := time.Now()
		for total < small+1 {
			n, err := c.Read(buf)
			total += n
			if err != nil {
				t.Fatalf("cut after %d of %d bytes, %v in: %v", total, small+1, time.Since(start), err)
			}
			time.Sleep(10 * time.Millisecond) // about 3 MB/s: slow, steady
		}
		if time.Since(start) < 2*wt {
			t.Logf("read in %v only: the reader was not slow enough to test much", time.Since(start))
		}
	})
}

func TestMaxConnsRefusesExtraConnectionsAndKeepsServing(t *testing.T) {
	srv, _, addr := startLineServer(t, 2, 1, true, Options{MaxConns: 3})
	var kept []net.Conn
	for i := 0; i < 3; i++ {
		c := dial(t, addr)
		fmt.Fprintf(c, "hello-%d\n", i)
		if got, err := bufio.NewReader(c).ReadString('\n'); err != nil || got != fmt.Sprintf("hello-%d\n", i) {
			t.Fatalf("connection %d: %q %v", i, got, err)
		}
		kept = append(kept, c)
	}
	for i := 0; i < 5; i++ {
		extra := dial(t, addr)
		extra.SetReadDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(extra, "extra\n")
		got, err := readAll(extra)
		if len(got) != 0 {
			t.Fatalf("an extra connection was served: %q", got)
		}
		if err != nil && !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.EPIPE) {
			t.Fatalf("extra connection: %v (want EOF or reset at once)", err)
		}
	}
	for i, c := range kept {
		fmt.Fprintf(c, "again-%d\n", i)
		if got, err := bufio.NewReader(c).ReadString('\n'); err != nil || got != fmt.Sprintf("again-%d\n", i) {
			t.Fatalf("kept connection %d after the refusals: %q %v", i, got, err)
		}
	}
	if n := srv.Counters().ClosedBy[CauseConnLimit]; n != 5 {
		t.Fatalf("connection_limit closes %d, want 5", n)
	}
	// Closing one makes room for one.
	kept[0].Close()
	waitFor(t, func() bool { return srv.Counters().Open == 2 })
	c := dial(t, addr)
	fmt.Fprintf(c, "room\n")
	if got, err := bufio.NewReader(c).ReadString('\n'); err != nil || got != "room\n" {
		t.Fatalf("after a close: %q %v", got, err)
	}
}

// An idle server with many idle keep-alive connections and every timeout
// on sleeps: its deadlines are far, and nothing polls.
func TestIdleConnectionsCostNoCPU(t *testing.T) {
	_, _, addr := startLineServer(t, 2, 1, true, Options{HeaderTimeout: 10 * time.Second, BodyTimeout: 30 * time.Second, IdleTimeout: time.Minute, WriteTimeout: 30 * time.Second})
	var wg sync.WaitGroup
	for i := 0; i < 200; i++ {
		c := dial(t, addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			io.WriteString(c, "hi\n")
			bufio.NewReader(c).ReadString('\n')
		}()
	}
	wg.Wait()
	time.Sleep(100 * time.Millisecond)
	cpu0, err0 := procstat.SelfCPU()
	wall0 := time.Now()
	time.Sleep(time.Second)
	cpu1, err1 := procstat.SelfCPU()
	if err0 != nil || err1 != nil {
		t.Skip("no CPU accounting:", err0, err1)
	}
	if frac := float64(cpu1-cpu0) / float64(time.Since(wall0)); frac > 0.05 {
		t.Fatalf("idle server used %.1f%% of a core with 200 idle connections", frac*100)
	}
}

var _ = strings.Contains
var _ = bytes.Equal
