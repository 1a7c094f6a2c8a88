package uring

import (
	"runtime"
	"sort"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestTimedSendEndsWait pins down why the load tester's open loop does not
// hand its schedule to the kernel (docs/load_tester.md, "What stands in
// the way"): a SEND linked after a TIMEOUT with TimeoutETimeSuccess does
// go out when the timeout fires, but the fired timeout ends a wait that
// asked for far more completions (the kernel counts fired timeouts as a
// reason to return), so the thread is back in user space at every timed
// send: it cannot sleep across several due times. Each round's lateness
// (the receiver's kernel stamp against the timeout's expiry) is logged.
func TestTimedSendEndsWait(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := newRing(t, SetupSingleIssuer|SetupDeferTaskrun)
	rx, tx := udpPair(t)
	const (
		delay  = 200 * time.Microsecond
		limit  = 10 * time.Second // the wait's own timeout: far beyond the send
		rounds = 20
	)
	var late []time.Duration
	buf, oob := make([]byte, 64), make([]byte, 64)
	for i := 0; i < rounds; i++ {
		var mono, real unix.Timespec
		unix.ClockGettime(unix.CLOCK_MONOTONIC, &mono)
		unix.ClockGettime(unix.CLOCK_REALTIME, &real)
		due := mono.Nano() + int64(delay)
		ts := unix.NsecToTimespec(due)
		to := r.GetSQE()
		to.PrepTimeout(&ts, 0, TimeoutAbs|TimeoutETimeSuccess, 1)
		to.Link()
		r.GetSQE().PrepSend(tx, []byte("due"), 2)
		var sent *int32
		for start := time.Now(); sent == nil; { // a signal (EINTR) may end a wait early: wait again
			if waited := time.Since(start); waited >= limit {
				t.Fatalf("round %d: waits for 64 completions ran to their own timeout (%v): the fired timeout did not end them", i, waited)
			}
			if _, err := r.SubmitAndWaitN(64, limit); err != nil {
				t.Fatal(err)
			}
			r.Completions(func(c *CQE) {
				if c.UserData == 2 {
					res := c.Res
					sent = &res
				}
			})
		}
		if *sent != 3 {
			t.Fatalf("round %d: the linked send: res %d, want 3 bytes sent", i, *sent)
		}
		n, oobn, _, _, err := unix.Recvmsg(rx, buf, oob, unix.MSG_DONTWAIT)
		if err != nil || n != 3 {
			t.Fatalf("round %d: the datagram: %d bytes, %v", i, n, err)
		}
		if stamp, ok := stampOf(oob[:oobn]); ok {
			late = append(late, time.Duration(stamp-(real.Nano()-mono.Nano())-due))
		}
	}
	sort.Slice(late, func(i, j int) bool { return late[i] < late[j] })
	if len(late) > 0 {
		t.Logf("sends after their timeout's expiry: median %v, max %v (%d stamped)", late[len(late)/2], late[len(late)-1], len(late))
	}
}

// udpPair is a connected loopback datagram pair whose receiver stamps
// what it receives (SO_TIMESTAMPNS).
func udpPair(t *testing.T) (rx, tx int) {
	t.Helper()
	rx, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(rx) })
	unix.SetsockoptInt(rx, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	if err := unix.Bind(rx, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(rx)
	if err != nil {
		t.Fatal(err)
	}
	if tx, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(tx) })
	if err := unix.Connect(tx, sa); err != nil {
		t.Fatal(err)
	}
	return rx, tx
}

// stampOf reads an SCM_TIMESTAMPNS (CLOCK_REALTIME ns) from control data.
func stampOf(oob []byte) (int64, bool) {
	if len(oob) < unix.SizeofCmsghdr+int(unsafe.Sizeof(unix.Timespec{})) {
		return 0, false
	}
	h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
	if h.Level != unix.SOL_SOCKET || h.Type != unix.SCM_TIMESTAMPNS {
		return 0, false
	}
	return (*unix.Timespec)(unsafe.Pointer(&oob[unix.SizeofCmsghdr])).Nano(), true
}
