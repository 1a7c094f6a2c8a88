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
	th, c, peer, k, answer := newH2HotPath(b, statusOnlyBlock())
	hotPathTurns(b, th, c, peer, k, func(int) []byte { return answer(k) })
}

// BenchmarkHotPathH2Nginx answers with nginx's header block (1.22, GET
// /ok over h2): :status 200 indexed, then server, date, content-type and
// content-length as literals with incremental indexing, which nginx sends
// again with every response and never refers to.
func BenchmarkHotPathH2Nginx(b *testing.B) {
	th, c, peer, k, answer := newH2HotPath(b, nginxBlock)
	hotPathTurns(b, th, c, peer, k, func(int) []byte { return answer(k) })
}

// nginxBlock is a response header block as nginx 1.22 encodes it, taken
// off the wire.
var nginxBlock = []byte{
	0x88, 0x76, 0x89, 0xaa, 0x63, 0x55, 0xe5, 0x80, 0xae, 0x21, 0x2e, 0x1f, 0x61, 0x96, 0xd0, 0x7a,
	0xbe, 0x94, 0x03, 0xaa, 0x5f, 0x29, 0x14, 0x10, 0x04, 0xe2, 0x80, 0x0d, 0xc0, 0xbd, 0x71, 0xa7,
	0x14, 0xc5, 0xa3, 0x7f, 0x5f, 0x87, 0x49, 0x7c, 0xa5, 0x8a, 0xe8, 0x19, 0xaa, 0x5c, 0x02, 0x31, 0x35,
}

// statusOnlyBlock is :status 200, and nothing else.
func statusOnlyBlock() []byte {
	var block bytes.Buffer
	hpack.NewEncoder(&block).WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	return block.Bytes()
}

// newH2HotPath is a thread with one h2 connection, 10 streams deep, past
// the server's SETTINGS and its first answers: each turn from now on
// answers k streams (answer(k): their HEADERS frames, with block, and
// DATA frames).
func newH2HotPath(tb testing.TB, block []byte) (th *netThread, c *conn, peer, k int, answer func(k int) []byte) {
	cfg := DefaultConfig()
	cfg.HTTP2, cfg.Streams, cfg.Pipeline = true, 10, 10 // as a run sets Pipeline from Streams
	th, c, peer = newBenchThread(tb, cfg)
	var out bytes.Buffer
	fr := http2.NewFramer(&out, nil)
	fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 100})
	unix.Write(peer, out.Bytes())
	th.onReadable(c) // the server's SETTINGS: the first streams go out
	id := uint32(1)
	answer = func(k int) []byte {
		out.Reset()
		for range k {
			fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block, EndHeaders: true})
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
// read, their streams' successors sent) allocates nothing once warm,
// whether the server's block leaves the table alone or adds to it in
// every response (nginx's).
func TestH2HotPathAllocatesNothing(t *testing.T) {
	for name, block := range map[string][]byte{"status only": statusOnlyBlock(), "nginx": nginxBlock} {
		th, c, peer, k, answer := newH2HotPath(t, block)
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
			t.Errorf("%s: %v allocations a turn of %d responses", name, n, k)
		}
		if c.state != connActive || c.received != received+101*k {
			t.Fatalf("%s: state %v, %d answered in 101 turns of %d", name, c.state, c.received-received, k)
		}
	}
}
