package loadtester

import (
	"encoding/binary"
	"net"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"weaseldb/internal/testenv"
)

// parseStamp finds the timestamp among control messages and refuses
// anything malformed.
func TestParseStamp(t *testing.T) {
	if unsafe.Sizeof(unix.Timespec{}) != 16 || unix.SizeofCmsghdr != 16 {
		t.Skip("a 32-bit platform: the messages below are laid out for 64 bits")
	}
	cmsg := func(level, typ int32, data []byte) []byte {
		h := make([]byte, unix.SizeofCmsghdr)
		binary.NativeEndian.PutUint64(h, uint64(unix.SizeofCmsghdr+len(data)))
		binary.NativeEndian.PutUint32(h[8:], uint32(level))
		binary.NativeEndian.PutUint32(h[12:], uint32(typ))
		out := append(h, data...)
		for len(out)%8 != 0 {
			out = append(out, 0)
		}
		return out
	}
	ts := make([]byte, 16)
	binary.NativeEndian.PutUint64(ts, 1_700_000_000)
	binary.NativeEndian.PutUint64(ts[8:], 123_456_789)
	want := int64(1_700_000_000)*1e9 + 123_456_789
	other := cmsg(unix.SOL_SOCKET, unix.SCM_RIGHTS, []byte{1, 2, 3, 4})
	tests := []struct {
		name string
		oob  []byte
		ok   bool
	}{
		{"a stamp", cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, ts), true},
		{"after another message", append(other, cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, ts)...), true},
		{"none", nil, false},
		{"another message only", other, false},
		{"wrong level", cmsg(unix.IPPROTO_IP, unix.SCM_TIMESTAMPNS, ts), false},
		{"truncated stamp", cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, ts[:8]), false},
		{"length past the buffer", cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, ts)[:20], false},
	}
	for _, tt := range tests {
		got, ok := parseStamp(tt.oob)
		if ok != tt.ok || (ok && got != want) {
			t.Errorf("%s: %d, %v; want %d, %v", tt.name, got, ok, want, tt.ok)
		}
	}
}

// A TCP read with SO_TIMESTAMPNS carries the kernel's arrival time: on the
// run's clock it lies after the write that sent the bytes and before the
// read that took them, however late the read.
func TestStampedRead(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	raw, err := client.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	base := time.Now()
	var s rxStamps
	var enabled bool
	raw.Control(func(fd uintptr) { enabled = s.enable(int(fd)) })
	if !enabled {
		t.Skip("the kernel refuses SO_TIMESTAMPNS")
	}
	s.resync(base)
	sent := int64(time.Since(base))
	if _, err := server.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // the read comes well after the arrival
	buf := make([]byte, 256)
	var n int
	var stamp int64
	var errno unix.Errno
	for range 100 {
		raw.Read(func(fd uintptr) bool {
			n, stamp, errno = s.read(int(fd), buf)
			return true
		})
		if errno != unix.EAGAIN {
			break
		}
		time.Sleep(time.Millisecond)
	}
	read := int64(time.Since(base))
	if errno != 0 || n == 0 {
		t.Fatalf("read %d bytes, errno %v", n, errno)
	}
	if stamp == 0 {
		t.Skip("the kernel does not stamp loopback TCP reads: the loop would time them by its own clock")
	}
	if stamp < sent || stamp > read {
		t.Errorf("stamp %d outside [write %d, read %d] on the run's clock", stamp, sent, read)
	}
	if read-stamp < int64(10*time.Millisecond) {
		t.Errorf("stamp %d, read %d: the stamp should be the arrival, before the 20 ms sleep", stamp, read)
	}
}

// The open loop over TCP with a send slack reads stamped responses on its
// own wakes and every due request is still answered once, its latency no
// less than what the server took; over a unix socket (no stamps) the loop
// wakes for responses as before.
func TestOpenLoopStampedResponses(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			if network == "tcp" {
				testenv.SkipUnderQemuUser(t, "it does not pass SO_TIMESTAMPING's control messages on, so no response is stamped")
			}
			s := startTestServer(t, network, func(s *testServer) { s.delay = 2 * time.Millisecond })
			cfg := testConfig(s)
			cfg.Rate, cfg.Warmup, cfg.Duration, cfg.NetworkThreads = 2000, 200*time.Millisecond, 500*time.Millisecond, 2
			if got := stampsWanted(&cfg); got != (network == "tcp") {
				t.Fatalf("stamps wanted %v over %s", got, network)
			}
			res := runOK(t, cfg)
			// The io_uring engine stamps each completion as it is reaped
			// instead of the kernel's stamps: the accounting below holds all
			// the same.
			if want := network == "tcp" && res.IOBackend == IOBackendEpoll; res.ResponseStamps != want {
				t.Errorf("response stamps %v over %s on %s", res.ResponseStamps, network, res.IOBackend)
			}
			if res.Due != 1000 || res.Answered != res.Due || !res.Clean() || res.RecordErrors != 0 {
				t.Errorf("due %d (want 1000) = answered %d + failed %d + unfinished %d + dropped %d; %d record errors",
					res.Due, res.Answered, res.Failed, res.Unfinished, res.Dropped, res.RecordErrors)
			}
			if min := res.Hist().Min(); min < int64(2*time.Millisecond) || res.ServiceLatency.P50 < int64(2*time.Millisecond) {
				t.Errorf("least latency %d ns, service p50 %d ns: the server takes 2 ms", min, res.ServiceLatency.P50)
			}
		})
	}
}

// Reads without stamps turn stamps off only when none has come yet and
// unstampedLimit have: the first responses after the kernel is asked may
// arrive before it stamps anything.
func TestNoStamp(t *testing.T) {
	var s rxStamps
	for i := 1; i < unstampedLimit; i++ {
		if !s.noStamp() {
			t.Fatalf("turned off after %d unstamped reads, want %d", i, unstampedLimit)
		}
	}
	if s.noStamp() {
		t.Fatalf("still on after %d unstamped reads and no stamp", unstampedLimit)
	}
	stamped := rxStamps{stamped: true}
	for range 2 * unstampedLimit {
		if !stamped.noStamp() {
			t.Fatal("a thread that has had stamps turned them off on unstamped reads")
		}
	}
}

// A kernel that stamps none of a thread's reads turns stamps off for the
// whole thread: every connection that read through the stamped transport
// reads through the plain one from then on, and the loop stops sleeping
// through responses.
func TestUnstampedReadsMakeEveryConnectionPlain(t *testing.T) {
	th := newTestThread(t)
	th.rx.on = true
	var peers []int
	for slot := range 2 {
		mine, peer := socketPair(t)
		th.adopt(handoff{fd: mine, connSlot: slot})
		th.conns[slot].io = &th.transports.stamped // a unix socket may refuse SO_TIMESTAMPNS: stamped all the same
		peers = append(peers, peer)
	}
	// Where the kernel refused SO_TIMESTAMPNS on a unix socket (qemu-user
	// does), adopting turned stamps off at once: on again, from no read.
	th.rx.on, th.rx.stamped, th.rx.unstamped = true, false, 0
	c, buf := th.conns[0], make([]byte, 16)
	for i := 0; i < unstampedLimit && th.rx.on; i++ {
		unix.Write(peers[0], []byte{'x'})
		if n, stamp, errno := c.io.read(c, buf); n != 1 || stamp != 0 || errno != 0 {
			t.Fatalf("read %d: n %d, stamp %d, errno %v; want one unstamped byte", i, n, stamp, errno)
		}
	}
	if th.rx.on {
		t.Fatalf("stamps still on after %d unstamped reads", unstampedLimit)
	}
	for slot, c := range th.conns {
		if c.io != transport(&th.transports.plain) {
			t.Errorf("connection %d reads through %T after stamps stopped, want the plain socket", slot, c.io)
		}
	}
}
