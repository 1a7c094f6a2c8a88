package uring

import (
	"errors"
	"io"
	"net"
	"runtime"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// newRing returns a ring for the test, or skips when this kernel or its
// sandbox gives none (the error says which).
func newRing(t *testing.T, flags uint32) *Ring {
	t.Helper()
	r, err := New(64, flags)
	if errors.Is(err, ErrUnsupported) {
		t.Skipf("no io_uring here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// waitFor submits and collects completions until one with userData comes.
func waitFor(t *testing.T, r *Ring, userData uint64) CQE {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := r.SubmitAndWait(100 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		var got *CQE
		r.Completions(func(c *CQE) {
			if c.UserData == userData && got == nil {
				cp := *c
				got = &cp
			}
		})
		if got != nil {
			return *got
		}
	}
	t.Fatalf("no completion for %d", userData)
	return CQE{}
}

func TestNopRoundTrip(t *testing.T) {
	for _, flags := range []uint32{0, SetupSingleIssuer | SetupDeferTaskrun} {
		t.Run(strconv.Itoa(int(flags)), func(t *testing.T) {
			runtime.LockOSThread() // SINGLE_ISSUER: one thread submits
			defer runtime.UnlockOSThread()
			r := newRing(t, flags)
			for i := uint64(1); i <= 200; i++ { // more than the ring holds: GetSQE says when to submit
				s := r.GetSQE()
				if s == nil {
					if _, err := r.Submit(); err != nil {
						t.Fatal(err)
					}
					r.Completions(func(*CQE) {})
					s = r.GetSQE()
				}
				s.PrepNop(i)
			}
			c := waitFor(t, r, 200)
			if c.Res != 0 {
				t.Fatalf("nop: res %d", c.Res)
			}
		})
	}
}

func TestWaitTimesOut(t *testing.T) {
	r := newRing(t, 0)
	start := time.Now()
	if _, err := r.SubmitAndWait(30 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if n := r.Completions(func(*CQE) {}); n != 0 {
		t.Fatalf("%d completions from an idle ring", n)
	}
	if waited := time.Since(start); waited < 20*time.Millisecond {
		t.Fatalf("returned after %v, before its timeout", waited)
	}
}

// listen returns a non-blocking listening socket on loopback and its address.
func listen(t *testing.T) (int, string) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 64); err != nil {
		t.Fatal(err)
	}
	sa, _ := unix.Getsockname(fd)
	return fd, "127.0.0.1:" + strconv.Itoa(sa.(*unix.SockaddrInet4).Port)
}

// Multishot accept, multishot receive into provided buffers, a send, the
// peer's end of file, then cancelling a receive still armed.
func TestAcceptReceiveSend(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := newRing(t, SetupSingleIssuer|SetupDeferTaskrun)
	lfd, addr := listen(t)
	br, err := r.RegisterBufRing(1, 8, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	r.GetSQE().PrepAcceptMultishot(lfd, 1)

	conns := make([]net.Conn, 2)
	fds := make([]int, 2)
	for i := range conns {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
		acc := waitFor(t, r, 1)
		if acc.Res < 0 || !acc.More() {
			t.Fatalf("accept %d: res %d, more %v", i, acc.Res, acc.More())
		}
		fds[i] = int(acc.Res)
		defer unix.Close(fds[i])
		r.GetSQE().PrepRecvMultishot(fds[i], br.Group(), uint64(10+i))
	}

	for round := 0; round < 20; round++ { // more rounds than buffers: Recycle must work
		msg := "hello " + strconv.Itoa(round)
		conns[0].Write([]byte(msg))
		c := waitFor(t, r, 10)
		if c.Res != int32(len(msg)) || c.Flags&CQEFBuffer == 0 || !c.More() {
			t.Fatalf("round %d: recv res %d flags %#x", round, c.Res, c.Flags)
		}
		if got := string(br.Buf(c.BufferID(), int(c.Res))); got != msg {
			t.Fatalf("round %d: received %q, want %q", round, got, msg)
		}
		br.Recycle(c.BufferID(), true)
	}

	reply := br.Buf(0, 5) // memory outside the Go heap, as a send needs
	copy(reply, "world")
	r.GetSQE().PrepSend(fds[0], reply, 20)
	if c := waitFor(t, r, 20); c.Res != 5 {
		t.Fatalf("send: res %d", c.Res)
	}
	got := make([]byte, 5)
	conns[0].SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(conns[0], got); err != nil || string(got) != "world" {
		t.Fatalf("peer read %q, %v", got, err)
	}

	conns[0].Close()
	if c := waitFor(t, r, 10); c.Res != 0 || c.More() {
		t.Fatalf("end of file: res %d, more %v", c.Res, c.More())
	}

	r.GetSQE().PrepCancelFd(fds[1], 30)
	if c := waitFor(t, r, 11); c.Res != -int32(unix.ECANCELED) {
		t.Fatalf("cancelled receive: res %d", c.Res)
	}
}

// A multishot poll of an eventfd posts once per wake-up and stays armed:
// how a loop hears another goroutine.
func TestPollMultishotEventfd(t *testing.T) {
	r := newRing(t, 0)
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(efd)
	r.GetSQE().PrepPollMultishot(efd, unix.POLLIN, 7)
	r.Submit()
	for i := 0; i < 3; i++ {
		go func() { unix.Write(efd, []byte{1, 0, 0, 0, 0, 0, 0, 0}) }()
		c := waitFor(t, r, 7)
		if c.Res&unix.POLLIN == 0 || !c.More() {
			t.Fatalf("wake %d: res %#x more %v", i, c.Res, c.More())
		}
		var buf [8]byte
		unix.Read(efd, buf[:])
	}
}

func TestBufRingRefusesBadSizes(t *testing.T) {
	r := newRing(t, 0)
	for _, tc := range []struct{ count, size int }{{0, 4096}, {3, 4096}, {1 << 16, 64}, {8, 0}} {
		if _, err := r.RegisterBufRing(2, tc.count, tc.size); err == nil {
			t.Errorf("count %d size %d accepted", tc.count, tc.size)
		}
	}
}

// A ring created disabled on one thread and enabled on another takes
// submissions from the second: how an event loop creates its ring before
// its goroutine runs.
func TestEnableOnAnotherThread(t *testing.T) {
	r := newRing(t, SetupSingleIssuer|SetupDeferTaskrun|SetupRDisabled)
	if r.Flags()&SetupRDisabled == 0 {
		t.Skip("the kernel refused a disabled ring")
	}
	done := make(chan error)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := r.EnableRings(); err != nil {
			done <- err
			return
		}
		r.GetSQE().PrepNop(5)
		if _, err := r.SubmitAndWait(time.Second); err != nil {
			done <- err
			return
		}
		n := r.Completions(func(c *CQE) {
			if c.UserData != 5 || c.Res != 0 {
				t.Errorf("completion %+v", *c)
			}
		})
		if n != 1 {
			t.Errorf("%d completions", n)
		}
		done <- nil
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A timeout linked to a no-op: with TimeoutETimeSuccess the no-op runs
// when the timeout fires, which is how a send goes at its due time
// without the thread awake; without it, the expiry severs the link and
// the no-op is cancelled. Relative and absolute (CLOCK_MONOTONIC) times.
func TestTimeoutLinkedNop(t *testing.T) {
	const delay = 3 * time.Millisecond
	cases := []struct {
		name    string
		flags   uint32
		wantNop int32
	}{
		{"relative, expiry a success", TimeoutETimeSuccess, 0},
		{"absolute, expiry a success", TimeoutAbs | TimeoutETimeSuccess, 0},
		{"relative, expiry a failure", 0, -int32(unix.ECANCELED)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			r := newRing(t, SetupSingleIssuer|SetupDeferTaskrun)
			ts := unix.NsecToTimespec(int64(delay))
			if tc.flags&TimeoutAbs != 0 {
				var now unix.Timespec
				if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &now); err != nil {
					t.Fatal(err)
				}
				ts = unix.NsecToTimespec(now.Nano() + int64(delay))
			}
			start := time.Now()
			to := r.GetSQE()
			to.PrepTimeout(&ts, 0, tc.flags, 1)
			to.Link()
			r.GetSQE().PrepNop(2)
			var timeoutRes, nopRes *int32
			var nopAfter time.Duration
			deadline := time.Now().Add(5 * time.Second)
			for nopRes == nil && time.Now().Before(deadline) {
				if _, err := r.SubmitAndWait(100 * time.Millisecond); err != nil {
					t.Fatal(err)
				}
				r.Completions(func(c *CQE) {
					res := c.Res
					switch c.UserData {
					case 1:
						timeoutRes = &res
					case 2:
						nopRes, nopAfter = &res, time.Since(start)
					}
				})
			}
			if nopRes == nil || timeoutRes == nil {
				t.Fatalf("completions: timeout %v, nop %v", timeoutRes, nopRes)
			}
			if *timeoutRes != -int32(unix.ETIME) {
				t.Errorf("timeout: res %d, want -ETIME", *timeoutRes)
			}
			if *nopRes != tc.wantNop {
				t.Errorf("linked nop: res %d, want %d", *nopRes, tc.wantNop)
			}
			if nopAfter < delay {
				t.Errorf("linked nop completed after %v, before its timeout (%v)", nopAfter, delay)
			}
		})
	}
}

// A wait for more completions than will come sleeps to its timeout
// through the ones that do (the open loop's lazy wait on io_uring: with
// task work deferred to the waiting thread, a completion short of the
// count does not wake it), and the completions are all there after.
func TestWaitForMoreSleepsThroughCompletions(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const timeout = 20 * time.Millisecond
	r := newRing(t, SetupSingleIssuer|SetupDeferTaskrun)
	for i := uint64(1); i <= 3; i++ {
		r.GetSQE().PrepNop(i)
	}
	start := time.Now()
	if _, err := r.SubmitAndWaitN(1<<20, timeout); err != nil {
		t.Fatal(err)
	}
	waited := time.Since(start)
	if n := r.Completions(func(*CQE) {}); n != 3 {
		t.Fatalf("%d completions, want the 3 no-ops", n)
	}
	if waited < timeout {
		t.Fatalf("returned after %v with 3 of %d completions, before its timeout (%v)", waited, 1<<20, timeout)
	}
}

// A multishot recvmsg on a socket that asked for SO_TIMESTAMPNS carries
// the kernel's receive stamp in each buffer, beside the payload: how the
// io_uring engine can time a response it reaps later, as epoll's recvmsg
// does.
func TestRecvMsgMultishotCarriesStamps(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := newRing(t, SetupSingleIssuer|SetupDeferTaskrun)
	lfd, addr := listen(t)
	br, err := r.RegisterBufRing(1, 8, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	peer, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	r.GetSQE().PrepAcceptMultishot(lfd, 1)
	acc := waitFor(t, r, 1)
	if acc.Res < 0 {
		t.Fatalf("accept: res %d", acc.Res)
	}
	fd := int(acc.Res)
	defer unix.Close(fd)
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		t.Fatal(err)
	}
	const ctrlLen = 64
	msg := unix.Msghdr{Controllen: ctrlLen}
	r.GetSQE().PrepRecvMsgMultishot(fd, &msg, br.Group(), 10)
	// The kernel turns stamping on for the machine from a work queue after
	// the first socket asks, so the first segments may come unstamped: it
	// sends until one comes stamped.
	deadline := time.Now().Add(5 * time.Second)
	for round := 0; ; round++ {
		if time.Now().After(deadline) {
			t.Fatalf("no SCM_TIMESTAMPNS in %d receives", round)
		}
		want := "hello " + strconv.Itoa(round)
		before := time.Now().UnixNano()
		peer.Write([]byte(want))
		c := waitFor(t, r, 10)
		if c.Res <= 0 || c.Flags&CQEFBuffer == 0 || !c.More() {
			t.Fatalf("round %d: recvmsg res %d flags %#x", round, c.Res, c.Flags)
		}
		control, payload, ok := ParseRecvmsg(br.Buf(c.BufferID(), int(c.Res)), 0, ctrlLen)
		if !ok || string(payload) != want {
			t.Fatalf("round %d: payload %q (ok %v), want %q", round, payload, ok, want)
		}
		cmsgs, err := unix.ParseSocketControlMessage(control)
		br.Recycle(c.BufferID(), true)
		if err != nil || len(cmsgs) > 1 || len(cmsgs) == 1 && cmsgs[0].Header.Type != unix.SCM_TIMESTAMPNS {
			t.Fatalf("round %d: control %v, %v: want one SCM_TIMESTAMPNS or none", round, cmsgs, err)
		}
		if len(cmsgs) == 0 {
			time.Sleep(time.Millisecond) // the work queue's turn
			continue
		}
		ts := *(*unix.Timespec)(unsafe.Pointer(&cmsgs[0].Data[0]))
		if at := ts.Nano(); at < before-int64(time.Second) || at > time.Now().UnixNano()+int64(time.Second) {
			t.Fatalf("round %d: stamp %d, not near the send at %d", round, at, before)
		}
		return
	}
}

func TestParseRecvmsgRefusesShortBuffers(t *testing.T) {
	hdr := func(ctrl, payload uint32) []byte {
		b := make([]byte, 16)
		b[4], b[8] = byte(ctrl), byte(payload)
		return b
	}
	tests := []struct {
		name string
		buf  []byte
		ok   bool
	}{
		{"shorter than the header", make([]byte, 8), false},
		{"header, control and payload", append(append(hdr(8, 3), make([]byte, 8)...), "abc"...), true},
		{"payload cut short", append(append(hdr(8, 9), make([]byte, 8)...), "abc"...), false},
		{"more control than asked", append(hdr(16, 0), make([]byte, 8)...), false},
		{"control cut short", append(hdr(0, 0), make([]byte, 4)...), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, payload, ok := ParseRecvmsg(tt.buf, 0, 8)
			if ok != tt.ok || ok && string(payload) != "abc" {
				t.Errorf("ok %v payload %q, want ok %v", ok, payload, tt.ok)
			}
		})
	}
}

// ParseRecvmsg never panics and returns slices of its buffer that fit.
func FuzzParseRecvmsg(f *testing.F) {
	f.Add(make([]byte, 16), 0, 0)
	f.Add(append([]byte{0, 0, 0, 0, 8, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0}, "12345678abc"...), 0, 8)
	f.Fuzz(func(t *testing.T, buf []byte, nameLen, ctrlLen int) {
		if nameLen < 0 || ctrlLen < 0 || nameLen > 1<<16 || ctrlLen > 1<<16 {
			return // the engine asks for fixed, small lengths
		}
		control, payload, ok := ParseRecvmsg(buf, nameLen, ctrlLen)
		if ok && (len(control) > ctrlLen || len(payload) > len(buf)) {
			t.Fatalf("control %d of %d, payload %d of %d", len(control), ctrlLen, len(payload), len(buf))
		}
	})
}

// CompletionsUpTo takes at most its budget, in order, and leaves the rest
// ready (Ready counts them) for the next call.
func TestCompletionsUpToLeavesTheRest(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := newRing(t, SetupSingleIssuer|SetupDeferTaskrun)
	for i := uint64(1); i <= 5; i++ {
		r.GetSQE().PrepNop(i)
	}
	if _, err := r.SubmitAndWaitN(5, time.Minute); err != nil {
		t.Fatal(err)
	}
	var seen []uint64
	take := func(c *CQE) { seen = append(seen, c.UserData) }
	if n := r.CompletionsUpTo(2, take); n != 2 || r.Ready() != 3 {
		t.Fatalf("took %d, %d left; want 2 and 3", n, r.Ready())
	}
	if n := r.CompletionsUpTo(0, take); n != 3 || r.Ready() != 0 {
		t.Fatalf("then took %d, %d left; want 3 and 0", n, r.Ready())
	}
	for i, ud := range seen {
		if ud != uint64(i+1) {
			t.Fatalf("seen in the order %v", seen)
		}
	}
}
