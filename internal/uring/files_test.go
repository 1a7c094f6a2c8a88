package uring

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// streamPair is a connected pair of non-blocking unix stream sockets.
func streamPair(t *testing.T) (a, b int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fds[0], fds[1]
}

// fixedRing is a single-issuer ring with a sparse file table of n slots,
// on the test's locked thread.
func fixedRing(t *testing.T, n uint32) *Ring {
	t.Helper()
	r := newRing(t, SetupSingleIssuer|SetupDeferTaskrun)
	if err := r.RegisterFilesSparse(n); err != nil {
		t.Fatal(err)
	}
	return r
}

// sendFixed sends msg on file slot index and returns the completion's Res.
func sendFixed(t *testing.T, r *Ring, index int, msg []byte, ud uint64) int32 {
	t.Helper()
	s := r.GetSQE()
	s.PrepSend(index, msg, ud)
	s.Flags |= SQEFixedFile
	return waitFor(t, r, ud).Res
}

// readNow reads what fd holds now ("" when nothing: EAGAIN).
func readNow(fd int) (string, unix.Errno) {
	buf := make([]byte, 64)
	n, err := unix.Read(fd, buf)
	if err != nil {
		return "", err.(unix.Errno)
	}
	return string(buf[:n]), 0
}

// A slot reused for another connection: a send submitted after the update
// reaches the new peer, never the one the slot held before, and an empty
// slot refuses (EBADF) instead of using a stale file.
func TestFixedFileSlotReuse(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := fixedRing(t, 4)
	a1, b1 := streamPair(t)
	a2, b2 := streamPair(t)
	defer unix.Close(b1)
	defer unix.Close(b2)
	defer unix.Close(a2)
	msg := sendMem(t, r)

	if err := r.UpdateFile(2, a1); err != nil {
		t.Fatal(err)
	}
	copy(msg, "first")
	if res := sendFixed(t, r, 2, msg[:5], 1); res != 5 {
		t.Fatalf("send on slot 2: res %d", res)
	}
	if got, _ := readNow(b1); got != "first" {
		t.Fatalf("first peer read %q", got)
	}

	// Cleared before the descriptor is closed, as a loop does.
	if err := r.UpdateFile(2, -1); err != nil {
		t.Fatal(err)
	}
	unix.Close(a1)
	if res := sendFixed(t, r, 2, msg[:5], 2); res != -int32(unix.EBADF) {
		t.Fatalf("send on an emptied slot: res %d, want -EBADF", res)
	}

	if err := r.UpdateFile(2, a2); err != nil {
		t.Fatal(err)
	}
	copy(msg, "other")
	if res := sendFixed(t, r, 2, msg[:5], 3); res != 5 {
		t.Fatalf("send on reused slot 2: res %d", res)
	}
	if got, _ := readNow(b2); got != "other" {
		t.Fatalf("second peer read %q", got)
	}
	if got, errno := readNow(b1); got != "" || errno != 0 { // end of stream: nothing more came
		t.Fatalf("first peer read %q (%v) after its slot was reused, want its end of stream", got, errno)
	}
}

// sendMem is send memory outside the Go heap (a provided buffer).
func sendMem(t *testing.T, r *Ring) []byte {
	t.Helper()
	b, err := r.RegisterBufRing(1, 1, 64)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b.Buf(0, 64)
}

// The table holds its own reference: a descriptor closed while its slot is
// set keeps the socket open (the peer sees no end of stream) until the
// slot is emptied. Why a loop clears the slot when it closes a connection.
func TestFixedFileSlotKeepsSocketOpen(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := fixedRing(t, 2)
	a, b := streamPair(t)
	defer unix.Close(b)
	if err := r.UpdateFile(0, a); err != nil {
		t.Fatal(err)
	}
	unix.Close(a)
	if _, errno := readNow(b); errno != unix.EAGAIN {
		t.Fatalf("peer read with the slot set: %v, want EAGAIN (still open)", errno)
	}
	if err := r.UpdateFile(0, -1); err != nil {
		t.Fatal(err)
	}
	if got, errno := readNow(b); got != "" || errno != 0 {
		t.Fatalf("peer read once the slot was emptied: %q %v, want its end of stream", got, errno)
	}
}

// A multishot receive on a fixed file, then a poll: the operations a
// loop's connections use, by slot.
func TestFixedFileRecvMultishotAndPoll(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := fixedRing(t, 8)
	a, b := streamPair(t)
	defer unix.Close(a)
	defer unix.Close(b)
	if err := r.UpdateFile(5, a); err != nil {
		t.Fatal(err)
	}
	bufs, err := r.RegisterBufRing(2, 4, 256)
	if err != nil {
		t.Fatal(err)
	}
	defer bufs.Close()
	s := r.GetSQE()
	s.PrepPollOnce(5, unix.POLLOUT, 1)
	s.Flags |= SQEFixedFile
	if c := waitFor(t, r, 1); c.Res&unix.POLLOUT == 0 {
		t.Fatalf("poll on slot 5: res %#x", c.Res)
	}
	s = r.GetSQE()
	s.PrepRecvMultishot(5, bufs.Group(), 2)
	s.Flags |= SQEFixedFile
	r.Submit()
	for i, msg := range []string{"one", "two"} {
		unix.Write(b, []byte(msg))
		c := waitFor(t, r, 2)
		if c.Res != int32(len(msg)) || !c.More() || string(bufs.Buf(c.BufferID(), int(c.Res))) != msg {
			t.Fatalf("receive %d: res %d more %v", i, c.Res, c.More())
		}
		bufs.Recycle(c.BufferID(), true)
	}
}

// A slot past the table's end is refused, so a caller can fall back to
// the plain descriptor.
func TestUpdateFileRefusesSlotPastTable(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := fixedRing(t, 2)
	a, b := streamPair(t)
	defer unix.Close(a)
	defer unix.Close(b)
	if err := r.UpdateFile(2, a); err == nil {
		t.Fatal("slot 2 of a 2-slot table accepted")
	}
}

// A registered ring descriptor: enters name the registration, and Close
// drops it, so the ring is freed (its descriptor number is reused).
func TestRegisteredRingFd(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r, err := New(8, SetupSingleIssuer|SetupDeferTaskrun)
	if err != nil {
		t.Skipf("no io_uring here: %v", err)
	}
	if err := r.RegisterRingFd(); err != nil {
		r.Close()
		t.Fatal(err)
	}
	if r.enterFlags&enterRegisteredRng == 0 {
		t.Fatal("the enter flag was not set")
	}
	for i := uint64(1); i <= 3; i++ {
		r.GetSQE().PrepNop(i)
		if c := waitFor(t, r, i); c.Res != 0 {
			t.Fatalf("nop %d: res %d", i, c.Res)
		}
	}
	if err := r.unregisterRingFd(); err != nil {
		t.Fatal(err)
	}
	r.GetSQE().PrepNop(9) // by descriptor again
	if c := waitFor(t, r, 9); c.Res != 0 {
		t.Fatalf("nop after unregistering: res %d", c.Res)
	}
	if err := r.RegisterRingFd(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if r.enterFlags != 0 {
		t.Fatal("Close left the registration")
	}
}
