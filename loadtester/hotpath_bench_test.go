package loadtester

import (
	"bytes"
	"math"
	"strconv"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"golang.org/x/sys/unix"
)

// The client's hot path, one turn a read: the peer's responses are read
// (onReadable: the transport, the protocol, the books, the load mode's
// refill and the write), no epoll wait. Its instructions per request under
// callgrind are deterministic, where a whole run's depend on how the
// machine's load batches the events (issue 56: nothing slower).

// newBenchThread is a thread on cfg with one connection over a socket
// pair, up; the peer's end is returned.
func newBenchThread(b testing.TB, cfg Config) (*netThread, *conn, int) {
	b.Helper()
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	kinds, table, err := newKinds(&cfg, "run")
	if err != nil {
		b.Fatal(err)
	}
	r := &runner{cfg: cfg, tmpl: kinds[0].tmpl, kinds: kinds, table: table, base: time.Now(), connReqs: make(chan connRequest, 16)}
	if cfg.HTTP2 {
		if r.h2req, err = newH2Requests(&cfg, "run"); err != nil {
			b.Fatal(err)
		}
	}
	r.windowEnd.Store(math.MaxInt64)
	r.afterBackoff = func(time.Duration, func()) {}
	th, err := newNetThread(r, 0)
	if err != nil {
		b.Fatal(err)
	}
	r.threads = []*netThread{th}
	b.Cleanup(th.shutdown)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { unix.Close(fds[1]) })
	th.adopt(handoff{fd: fds[0]})
	c := th.conns[0]
	th.finishConnect(c)
	if c.state != connActive {
		b.Fatal("the connection did not come up")
	}
	return th, c, fds[1]
}

// hotPathTurns runs b.N turns: the peer drains the requests, writes k
// responses (resp(turn)), and the thread reads them.
func hotPathTurns(b *testing.B, th *netThread, c *conn, peer, k int, resp func(turn int) []byte) {
	buf := make([]byte, 1<<20)
	b.ResetTimer()
	for n := range b.N {
		unix.Read(peer, buf)
		if _, err := unix.Write(peer, resp(n)); err != nil {
			b.Fatal(err)
		}
		th.onReadable(c)
	}
	b.StopTimer()
	if c.state != connActive || c.received < int(b.N)*k {
		b.Fatalf("state %v, %d answered of %d", c.state, c.received, b.N*k)
	}
}

func BenchmarkHotPathHTTP1(b *testing.B) {
	for _, depth := range []int{1, 16} {
		b.Run("depth"+strconv.Itoa(depth), func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.Pipeline = depth
			th, c, peer := newBenchThread(b, cfg)
			k := max(1, depth/2) // a refill at half the depth
			one := []byte("HTTP/1.1 200 OK\r\nContent-Length: 15\r\n\r\n{\"status\":\"ok\"}")
			resp := bytes.Repeat(one, k)
			if depth > 1 { // the first turn answers the first half of the first fill
				unix.Write(peer, bytes.Repeat(one, depth-k))
				th.onReadable(c)
			}
			hotPathTurns(b, th, c, peer, k, func(int) []byte { return resp })
		})
	}
}

func BenchmarkHotPathH2(b *testing.B) {
	th, c, peer, k, answer := newH2HotPath(b)
	hotPathTurns(b, th, c, peer, k, func(int) []byte { return answer(k) })
}

// newH2HotPath is a thread with one h2 connection, 10 streams deep, past
// the server's SETTINGS and its first answers: each turn from now on
// answers k streams (answer(k): their HEADERS and DATA frames).
func newH2HotPath(tb testing.TB) (th *netThread, c *conn, peer, k int, answer func(k int) []byte) {
	cfg := DefaultConfig()
	cfg.HTTP2, cfg.Streams, cfg.Pipeline = true, 10, 10 // as a run sets Pipeline from Streams
	th, c, peer = newBenchThread(tb, cfg)
	var out, block bytes.Buffer
	fr := http2.NewFramer(&out, nil)
	fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 100})
	unix.Write(peer, out.Bytes())
	th.onReadable(c) // the server's SETTINGS: the first streams go out
	hpack.NewEncoder(&block).WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	id := uint32(1)
	answer = func(k int) []byte {
		out.Reset()
		for range k {
			fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndHeaders: true})
			fr.WriteData(id, true, []byte(`{"status":"ok"}`))
			id += 2
		}
		return out.Bytes()
	}
	k = c.inflight / 2
	if k == 0 {
		tb.Fatalf("%d streams in flight after the server's SETTINGS", c.inflight)
	}
	unix.Write(peer, answer(c.inflight-k))
	th.onReadable(c)
	return th, c, peer, k, answer
}

// TestH2HotPathAllocatesNothing: a turn of the h2 hot path (k responses
// read, their streams' successors sent) allocates nothing once warm.
func TestH2HotPathAllocatesNothing(t *testing.T) {
	th, c, peer, k, answer := newH2HotPath(t)
	buf := make([]byte, 1<<20)
	turn := func() {
		unix.Read(peer, buf)
		unix.Write(peer, answer(k))
		th.onReadable(c)
	}
	for range 10 { // the rings' buffers grow to their size
		turn()
	}
	received := c.received
	if n := testing.AllocsPerRun(100, turn); n != 0 {
		t.Errorf("%v allocations a turn of %d responses", n, k)
	}
	if c.state != connActive || c.received != received+101*k {
		t.Fatalf("state %v, %d answered in 101 turns of %d", c.state, c.received-received, k)
	}
}
