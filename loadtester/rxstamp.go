package loadtester

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Responses stamped by the kernel, read on the loop's own wakes (open loop
// over TCP, with a send slack). Loop thread only, like the rest of a
// netThread.
//
// Without this, an open-loop thread wakes for its sends (batched within the
// send slack, openloop.go) and again for the responses that arrive between
// them: each wake is a sleep and a context switch, the bulk of the open
// loop's CPU (docs/load_tester.md). A latency timed by the loop's own clock
// needs the loop awake when the response arrives. The kernel can time it
// instead: with SO_TIMESTAMPNS, recvmsg hands back when the last segment it
// read was delivered to the socket (CLOCK_REALTIME), so a response read a
// little later still has its exact arrival time. A thread that stamps then
// sleeps until its next send without being woken by responses (a plain
// nanosleep: the connections' events wait in epoll), reads everything that
// arrived when it wakes, and times each response by its stamp. The stamp
// also leaves the client's own wake-up delay out of every latency.
//
// It holds only while the next send is near (at most maxLazyRead away)
// and a connection is free to send it on, while the window is open, and
// only while reads carry stamps: a thread whose first unstampedLimit reads
// all come without one (a kernel that does not stamp this socket) turns it
// off, and then wakes for responses and times them by its own clock, as a
// unix socket or --send-slack 0 always does. A read without a stamp is
// timed by the clock either way. Not the first such read: the kernel turns
// stamping on for the machine from a work queue after the first socket
// asks, so on a loaded machine the first responses arrive unstamped
// (seen at load 15), and one of them used to turn stamps off for the run.

// maxLazyRead bounds how long responses may wait unread: longer waits
// (rates under 100 a second per thread) gain nothing worth a response that
// frees a connection sitting unread, or a stop noticed late.
const maxLazyRead = int64(10 * time.Millisecond)

// unstampedLimit is how many reads without a stamp, and none with one,
// turn stamps off for a thread.
const unstampedLimit = 256

// rxStamps is a thread's receive-timestamp state.
type rxStamps struct {
	on     bool          // responses are stamped and read lazily
	msg    unix.Msghdr   // recvmsg's header, its iovec and control buffer: kept off the stack for the raw syscall
	iov    unix.Iovec    //
	oob    [64]byte      // control messages: one SCM_TIMESTAMPNS
	offset int64         // CLOCK_REALTIME minus the run's clock (ns), sampled each loop turn
	sleep  unix.Timespec // the lazy sleep's length, off the stack for the raw syscall
	full   bool          // the last wait returned a full batch of events: more are ready, no sleeping
	// stamped says a read has carried a stamp; unstamped counts the reads
	// without one before that (unstampedLimit).
	stamped   bool
	unstamped int
}

// noStamp notes a read that came without a stamp; false when stamps are to
// be turned off (this kernel does not stamp the thread's sockets).
func (s *rxStamps) noStamp() bool {
	if s.stamped {
		return true
	}
	s.unstamped++
	return s.unstamped < unstampedLimit
}

// stampsWanted: the open loop over TCP with a send slack stamps responses
// (not over TLS: a decrypted read is not one socket read).
func stampsWanted(cfg *Config) bool {
	return cfg.OpenLoop() && cfg.SendSlack > 0 && cfg.UnixSocket == "" && cfg.TLS == nil
}

// enable asks the kernel to stamp fd's reads; false when it refuses.
func (s *rxStamps) enable(fd int) bool {
	return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) == nil
}

// turn runs once a loop turn (per wake, not per read): with stamps on,
// it resyncs the clocks and notes whether the wait returned a full batch.
func (s *rxStamps) turn(base time.Time, full bool) {
	if s.on {
		s.resync(base)
		s.full = full
	}
}

// resync samples the offset between the wall clock the stamps use and the
// run's clock (one time.Now reads both), so a step of the wall clock costs
// at most the stamps of one turn.
func (s *rxStamps) resync(base time.Time) {
	now := time.Now()
	s.offset = now.UnixNano() - int64(now.Sub(base))
}

// read reads from fd into p with recvmsg and returns the byte count and
// the kernel's stamp on the run's clock (0: none came with the data).
func (s *rxStamps) read(fd int, p []byte) (int, int64, unix.Errno) {
	if len(p) == 0 {
		return 0, 0, 0
	}
	s.iov.Base = &p[0]
	s.iov.SetLen(len(p))
	s.msg.Iov = &s.iov
	s.msg.SetIovlen(1)
	s.msg.Control = &s.oob[0]
	s.msg.SetControllen(len(s.oob))
	n, _, errno := unix.RawSyscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&s.msg)), 0)
	if errno != 0 {
		return 0, 0, errno
	}
	wall, ok := parseStamp(s.oob[:s.msg.Controllen])
	if !ok {
		return int(n), 0, 0
	}
	return int(n), wall - s.offset, 0
}

// parseStamp finds an SCM_TIMESTAMPNS control message in oob and returns
// its time in ns (CLOCK_REALTIME).
func parseStamp(oob []byte) (int64, bool) {
	const hdr = unix.SizeofCmsghdr
	for len(oob) >= hdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		size := int(h.Len)
		if size < hdr || size > len(oob) {
			return 0, false
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && size >= hdr+int(unsafe.Sizeof(unix.Timespec{})) {
			ts := (*unix.Timespec)(unsafe.Pointer(&oob[hdr]))
			return ts.Nano(), true
		}
		next := (size + int(unsafe.Sizeof(uintptr(0))) - 1) &^ (int(unsafe.Sizeof(uintptr(0))) - 1) // CMSG_ALIGN
		if next >= len(oob) {
			return 0, false
		}
		oob = oob[next:]
	}
	return 0, false
}

// mayDeferReads reports whether the thread may sleep timeout ns through
// the responses that arrive (either engine's lazy reads): the next send is
// near (at most maxLazyRead), inside the open window, with a connection
// free to take it, and no connection is owed a read.
func (t *netThread) mayDeferReads(timeout int64) bool {
	p := &t.pace
	return timeout > 0 && timeout <= maxLazyRead && p.wakeAt != 0 && p.wakeAt < t.acct.win.closeAt &&
		!t.acct.win.closing && len(t.ready) == 0 && len(p.free) > 0
}

// stampedIO is the transport of a socket whose reads carry the kernel's
// receive stamps (recvmsg); chosen at adopt while the thread takes stamps
// (transports.choose), so a plain socket never pays for recvmsg or asks
// whether stamps are on. One a thread; it writes as the plain socket does.
type stampedIO struct {
	*plainIO
	rx    *rxStamps // the thread's stamps
	conns *[]*conn  // the thread's connections, made plain when stamps stop
}

// read reads with recvmsg. Data without a stamp is timed by the loop's
// clock; a kernel that stamps nothing turns stamps off (noStamp).
func (s *stampedIO) read(c *conn, p []byte) (int, int64, unix.Errno) {
	n, stamp, errno := s.rx.read(c.fd, p)
	switch {
	case n == 0:
	case stamp > 0:
		s.rx.stamped = true
	case !s.rx.noStamp():
		s.rx.stop(*s.conns, s.plainIO)
	}
	return n, stamp, errno
}

// stop turns receive stamps off for the thread: no more lazy reads, and
// every connection of conns reads its socket through plain from now on.
// Once a run at most: a kernel that will not stamp.
func (s *rxStamps) stop(conns []*conn, plain transport) {
	s.on = false
	for _, c := range conns {
		if c == nil {
			continue
		}
		if _, ok := c.io.(*stampedIO); ok {
			c.io = plain
		}
	}
}
