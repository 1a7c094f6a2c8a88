package app

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"weaseldb/internal/nettest"
	"weaseldb/server/config"
)

type testServer struct {
	srv      *Server
	tcpAddr  string
	unixPath string
}

func startServer(t *testing.T, mutate func(*config.Config)) *testServer {
	t.Helper()
	cfg := config.Default()
	sock := filepath.Join(t.TempDir(), "weaseldb.sock")
	cfg.Server.Interfaces = []config.Interface{
		{Type: config.InterfaceTCP, Address: "127.0.0.1", Port: 0},
		{Type: config.InterfaceUnix, Path: sock},
	}
	cfg.Server.IOThreads = 2
	cfg.Commit.PipelineWaitStrategy = config.WaitIfStageEmpty
	cfg.Commit.PipelineReleaseThreads = 2
	if mutate != nil {
		mutate(&cfg)
	}
	srv, err := New(cfg, withTestBackend(Options{OnLoopError: func(err error) { t.Errorf("loop: %v", err) }}))
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	ts := &testServer{srv: srv, tcpAddr: fmt.Sprintf("127.0.0.1:%d", srv.TCPPort(0)), unixPath: sock}
	t.Cleanup(func() {
		if err := srv.Shutdown(5 * time.Second); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return ts
}

// both runs f over TCP and over the unix socket.
func both(t *testing.T, ts *testServer, f func(t *testing.T, dial func() net.Conn)) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			addr := ts.tcpAddr
			if network == "unix" {
				addr = ts.unixPath
			}
			f(t, func() net.Conn {
				c, err := net.DialTimeout(network, addr, nettest.DialTimeout)
				if err != nil {
					t.Fatal(err)
				}
				c.SetDeadline(time.Now().Add(30 * time.Second))
				t.Cleanup(func() { c.Close() })
				return c
			})
		})
	}
}

func readResponse(t *testing.T, br *bufio.Reader) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, string(body)
}

func expectEOF(t *testing.T, br *bufio.Reader) {
	t.Helper()
	if b, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("want EOF, got %q %v", b, err)
	}
}

func okRequest(id int) string {
	return fmt.Sprintf("GET /ok HTTP/1.1\r\nHost: x\r\nX-Request-Id: %d\r\n\r\n", id)
}

func TestPipelinedInOrder(t *testing.T) {
	ts := startServer(t, nil)
	both(t, ts, func(t *testing.T, dial func() net.Conn) {
		c := dial()
		var b strings.Builder
		for i := 0; i < 100; i++ {
			switch i % 10 {
			case 3:
				fmt.Fprintf(&b, "GET /nope HTTP/1.1\r\nHost: x\r\nX-Request-Id: %d\r\n\r\n", i) // answered by the loop
			case 7:
				fmt.Fprintf(&b, "GET /v1/version HTTP/1.1\r\nHost: x\r\nX-Request-Id: %d\r\n\r\n", i)
			default:
				b.WriteString(okRequest(i))
			}
		}
		if _, err := io.WriteString(c, b.String()); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		for i := 0; i < 100; i++ {
			resp, body := readResponse(t, br)
			if got := resp.Header.Get("X-Response-ID"); got != strconv.Itoa(i) {
				t.Fatalf("response %d has id %q: out of order", i, got)
			}
			want := 200
			if i%10 == 3 {
				want = 404
			}
			if resp.StatusCode != want {
				t.Fatalf("response %d: status %d body %s", i, resp.StatusCode, body)
			}
			if i%10 == 0 && (body != `{"status":"ok"}` || resp.Header.Get("Content-Type") != "application/json") {
				t.Fatalf("ok body %q type %q", body, resp.Header.Get("Content-Type"))
			}
		}
	})
}

func TestOneByteAtATime(t *testing.T) {
	ts := startServer(t, nil)
	both(t, ts, func(t *testing.T, dial func() net.Conn) {
		c := dial()
		for _, ch := range []byte(okRequest(1)) {
			if _, err := c.Write([]byte{ch}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Microsecond)
		}
		resp, body := readResponse(t, bufio.NewReader(c))
		if resp.StatusCode != 200 || body != `{"status":"ok"}` {
			t.Fatalf("%d %q", resp.StatusCode, body)
		}
	})
}

func TestThousandOnOneConnection(t *testing.T) {
	ts := startServer(t, nil)
	both(t, ts, func(t *testing.T, dial func() net.Conn) {
		c := dial()
		br := bufio.NewReader(c)
		for i := 0; i < 1000; i++ {
			io.WriteString(c, okRequest(i))
			resp, _ := readResponse(t, br)
			if resp.StatusCode != 200 || resp.Header.Get("X-Response-ID") != strconv.Itoa(i) {
				t.Fatalf("request %d: %d %q", i, resp.StatusCode, resp.Header.Get("X-Response-ID"))
			}
		}
	})
}

func TestConnectionCloseAndHTTP10(t *testing.T) {
	ts := startServer(t, nil)
	for _, tc := range []struct {
		name, req string
	}{
		{"close", "GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET /ok HTTP/1.1\r\nHost: x\r\n\r\n"},
		{"http10", "GET /ok HTTP/1.0\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			both(t, ts, func(t *testing.T, dial func() net.Conn) {
				c := dial()
				io.WriteString(c, okRequest(1)+tc.req)
				br := bufio.NewReader(c)
				resp, _ := readResponse(t, br)
				if resp.StatusCode != 200 || resp.Close {
					t.Fatalf("first: %d close=%v", resp.StatusCode, resp.Close)
				}
				resp, body := readResponse(t, br)
				if resp.StatusCode != 200 || body != `{"status":"ok"}` {
					t.Fatalf("second: %d %q", resp.StatusCode, body)
				}
				if !resp.Close { // net/http moves "Connection: close" into Close
					t.Fatalf("no Connection: close header: %v", resp.Header)
				}
				expectEOF(t, br)
			})
		})
	}
}

func TestChunkedBody(t *testing.T) {
	ts := startServer(t, nil)
	both(t, ts, func(t *testing.T, dial func() net.Conn) {
		c := dial()
		io.WriteString(c, "POST /v1/commit HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n"+
			"3\r\n{\"o\r\ne\r\nperations\":[]}\r\n0\r\n\r\n"+okRequest(2))
		br := bufio.NewReader(c)
		resp, body := readResponse(t, br)
		if resp.StatusCode != 200 || !strings.HasPrefix(body, `{"status":"committed","version":`) {
			t.Fatalf("commit: %d %q", resp.StatusCode, body)
		}
		resp, _ = readResponse(t, br)
		if resp.StatusCode != 200 || resp.Header.Get("X-Response-ID") != "2" {
			t.Fatalf("after chunked: %d", resp.StatusCode)
		}
	})
}

func TestMalformedAndOversized(t *testing.T) {
	ts := startServer(t, func(c *config.Config) { c.Server.MaxRequestSizeBytes = 4096 })
	for _, tc := range []struct {
		name string
		bad  string
		code int
	}{
		{"malformed", "GARBAGE\r\n\r\n", 400},
		{"two-lengths", "POST /v1/commit HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400},
		{"oversized", "POST /v1/commit HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n", 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			both(t, ts, func(t *testing.T, dial func() net.Conn) {
				c := dial()
				io.WriteString(c, okRequest(1)+okRequest(2)+tc.bad+okRequest(3))
				br := bufio.NewReader(c)
				for i := 1; i <= 2; i++ {
					resp, _ := readResponse(t, br)
					if resp.StatusCode != 200 || resp.Header.Get("X-Response-ID") != strconv.Itoa(i) {
						t.Fatalf("earlier response %d: %d", i, resp.StatusCode)
					}
				}
				resp, _ := readResponse(t, br)
				if resp.StatusCode != tc.code || !resp.Close {
					t.Fatalf("got %d %v, want %d with Connection: close", resp.StatusCode, resp.Header, tc.code)
				}
				expectEOF(t, br)
			})
		})
	}
}

func TestMethodAndRoutes(t *testing.T) {
	ts := startServer(t, nil)
	c, err := net.DialTimeout("tcp", ts.tcpAddr, nettest.DialTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(c)
	for _, tc := range []struct {
		req  string
		code int
	}{
		{"POST /ok HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 405},
		{"GET /missing HTTP/1.1\r\nHost: x\r\n\r\n", 404},
		{"GET /v1/status?request_id=abcdefghij0123456789 HTTP/1.1\r\nHost: x\r\n\r\n", 200},
		{"POST /v1/status?request_id=abc HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 405},
		{"PUT /v1/subscribe HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 405},
		{"DELETE /v1/retention/p1 HTTP/1.1\r\nHost: x\r\n\r\n", 404},
		{"GET /v1/retention/p1 HTTP/1.1\r\nHost: x\r\n\r\n", 404},
		{"GET /v1/retention HTTP/1.1\r\nHost: x\r\n\r\n", 200},
		{"POST /v1/retention HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 405},
		{"PATCH /v1/retention/p1 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 405},
		{"GET /v1/retentionx HTTP/1.1\r\nHost: x\r\n\r\n", 404},
		{"GET /v1/commit HTTP/1.1\r\nHost: x\r\n\r\n", 405},
		{"GET /v1/version HTTP/1.1\r\nHost: x\r\n\r\n", 200},
	} {
		io.WriteString(c, tc.req)
		resp, body := readResponse(t, br)
		if resp.StatusCode != tc.code {
			t.Errorf("%q: %d %s, want %d", tc.req, resp.StatusCode, body, tc.code)
		}
	}
}

func TestMetricsEndpoint(t *testing.T) {
	ts := startServer(t, nil)
	c, err := net.DialTimeout("tcp", ts.tcpAddr, nettest.DialTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	io.WriteString(c, okRequest(1))
	br := bufio.NewReader(c)
	readResponse(t, br)
	io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, body := readResponse(t, br)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	for _, want := range []string{`weaseldb_http_requests_total{code="200",route="ok"} 1`, "weaseldb_open_connections 1", "weaseldb_pipeline_batch_size_bucket"} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (apt-get install prometheus): format not checked")
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// A client that closes with requests in flight: the server drops their
// responses safely and the connection count returns to zero.
func TestClientClosesWithRequestsInFlight(t *testing.T) {
	ts := startServer(t, func(c *config.Config) { c.Benchmark.OkResolveIterations = 20000 })
	both(t, ts, func(t *testing.T, dial func() net.Conn) {
		for k := 0; k < 20; k++ {
			c := dial()
			io.WriteString(c, strings.Repeat(okRequest(k), 50))
			c.Close()
		}
		c := dial()
		io.WriteString(c, okRequest(99))
		resp, _ := readResponse(t, bufio.NewReader(c))
		if resp.StatusCode != 200 {
			t.Fatalf("%d", resp.StatusCode)
		}
	})
	waitMetric(t, ts, "weaseldb_open_connections 1") // the scraping connection itself
}

// waitPushed waits until the loops pushed n requests to the pipeline in
// all: they were read and parsed.
func waitPushed(t *testing.T, srv *Server, n int) {
	t.Helper()
	want := fmt.Sprintf("weaseldb_pipeline_push_size_sum %d\n", n)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		body, _ := srv.Metrics.Encode()
		if bytes.Contains(body, []byte(want)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q not reached", strings.TrimSpace(want))
		}
	}
}

func waitMetric(t *testing.T, ts *testServer, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		body, _ := ts.srv.Metrics.Encode()
		if bytes.Contains(body, []byte(strings.TrimSuffix(want, " 1")+" 0")) || bytes.Contains(body, []byte(want)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("metric %q not reached", want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A client that pipelines requests and never reads: the server stops
// reading from it (so the client's writes stall) instead of buffering
// without bound, and when the client reads, every response is there.
func TestNeverReadingClient(t *testing.T) {
	ts := startServer(t, nil)
	c, err := net.DialTimeout("tcp", ts.tcpAddr, nettest.DialTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// About 1 KiB per request, so the kernel's buffers hold few of them.
	req := []byte(fmt.Sprintf("GET /ok HTTP/1.1\r\nHost: x\r\nX-Pad: %s\r\n\r\n", strings.Repeat("p", 1000)))
	var sent int
	stalled := false
	for sent < 512<<20 {
		c.SetWriteDeadline(time.Now().Add(300 * time.Millisecond))
		n, err := c.Write(bytes.Repeat(req, 64))
		sent += n
		if err != nil {
			stalled = true
			break
		}
	}
	if !stalled {
		t.Fatalf("wrote %d requests without the server pushing back", sent/len(req))
	}
	// The partial last request never completes; count the full ones.
	full := sent / len(req)
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReaderSize(c, 1<<16)
	for i := 0; i < full; i++ {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("response %d of %d: %v", i, full, err)
		}
		io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("response %d: %d", i, resp.StatusCode)
		}
	}
}

// Shutdown with requests in flight: every request already read is answered,
// then the connection is closed; the last response carries Connection:
// close, so a pipelining client learns that nothing after it will be
// answered, and no earlier one does. The spin work (tens of ms for the 49
// left) keeps the last responses owed when the stop begins.
//
// The stage goroutines (NoRunToCompletion) still spin while the loop sees
// the shutdown, so the last answer says Connection: close. Run to
// completion, the loop itself spins in the resolve stage and has sent
// every answer before it sees the shutdown: all are answered, then EOF.
func TestShutdownAnswersInFlight(t *testing.T) {
	for _, inline := range []bool{false, true} {
		t.Run(fmt.Sprintf("inline=%v", inline), func(t *testing.T) { testShutdownAnswersInFlight(t, inline) })
	}
}

func testShutdownAnswersInFlight(t *testing.T, inline bool) {
	cfg := config.Default()
	cfg.Server.Interfaces = []config.Interface{{Type: config.InterfaceTCP, Address: "127.0.0.1", Port: 0}}
	cfg.Commit.PipelineWaitStrategy = config.WaitIfStageEmpty
	cfg.Benchmark.OkResolveIterations = 20_000_000
	srv, err := New(cfg, withTestBackend(Options{NoRunToCompletion: !inline}))
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", srv.TCPPort(0)), nettest.DialTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Generous bounds: under qemu-user (make arm64) on a loaded machine the
	// 49 spins take longer than 10 s, and a grace that ran out cut the
	// answers off; Shutdown returns as soon as they are sent.
	c.SetDeadline(time.Now().Add(3 * time.Minute))
	const n = 50
	br := bufio.NewReader(c)
	io.WriteString(c, okRequest(5))
	readResponse(t, br) // the pipeline is idle again
	io.WriteString(c, strings.Repeat(okRequest(5), n-1))
	waitPushed(t, srv, n) // the server has read the requests; their spin has begun
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(2 * time.Minute) }()
	for i := 1; i < n; i++ {
		resp, _ := readResponse(t, br)
		if resp.StatusCode != 200 {
			t.Fatalf("response %d: %d", i, resp.StatusCode)
		}
		// Run to completion, the last may come before the stop: no close.
		if last := i == n-1; resp.Close != last && !(inline && last) {
			t.Errorf("response %d of %d: Connection: close is %v, want %v", i+1, n, resp.Close, last)
		}
	}
	expectEOF(t, br)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", srv.TCPPort(0)), time.Second); err == nil {
		// The port may be reused by another test, so only a soft check.
		t.Log("port accepts after shutdown (reused?)")
	}
}

// 2000 connections open at once, each answered.
func TestTwoThousandConnections(t *testing.T) {
	const n = 2000
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("getrlimit: %v", err)
	}
	if lim.Cur < 2*n+200 {
		lim.Cur = min(lim.Max, 2*n+200)
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur < 2*n+200 {
			t.Skipf("cannot raise RLIMIT_NOFILE to %d (max %d): %v", 2*n+200, lim.Max, err)
		}
	}
	ts := startServer(t, nil)
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < n; i++ {
		network, addr := "tcp", ts.tcpAddr
		if i%2 == 1 {
			network, addr = "unix", ts.unixPath
		}
		c, err := net.DialTimeout(network, addr, nettest.DialTimeout)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		c.SetDeadline(time.Now().Add(60 * time.Second))
		conns = append(conns, c)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i, c := range conns {
		wg.Add(1)
		go func(i int, c net.Conn) {
			defer wg.Done()
			if _, err := io.WriteString(c, okRequest(i)); err != nil {
				errs <- err
				return
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				errs <- fmt.Errorf("conn %d: %w", i, err)
				return
			}
			resp.Body.Close()
			if resp.Header.Get("X-Response-ID") != strconv.Itoa(i) {
				errs <- fmt.Errorf("conn %d: wrong id %q", i, resp.Header.Get("X-Response-ID"))
			}
		}(i, c)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestExpectContinue(t *testing.T) {
	ts := startServer(t, nil)
	both(t, ts, func(t *testing.T, dial func() net.Conn) {
		c := dial()
		io.WriteString(c, "POST /v1/commit HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n")
		br := bufio.NewReader(c)
		line, err := br.ReadString('\n')
		if err != nil || line != "HTTP/1.1 100 Continue\r\n" {
			t.Fatalf("%q %v", line, err)
		}
		br.ReadString('\n')
		io.WriteString(c, "{}")
		resp, _ := readResponse(t, br)
		if resp.StatusCode != 200 {
			t.Fatalf("%d", resp.StatusCode)
		}
	})
}

// A request with Expect: 100-continue pipelined behind another gets its
// 100 Continue when its turn comes: right after the earlier response.
func TestExpectContinueBehindAPipelinedRequest(t *testing.T) {
	ts := startServer(t, nil)
	both(t, ts, func(t *testing.T, dial func() net.Conn) {
		c := dial()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, okRequest(1)+"POST /v1/commit HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n")
		br := bufio.NewReader(c)
		if resp, body := readResponse(t, br); resp.StatusCode != 200 || body != `{"status":"ok"}` {
			t.Fatalf("first response: %d %q", resp.StatusCode, body)
		}
		line, err := br.ReadString('\n')
		if err != nil || line != "HTTP/1.1 100 Continue\r\n" {
			t.Fatalf("after the earlier response: %q %v (want 100 Continue)", line, err)
		}
		br.ReadString('\n')
		io.WriteString(c, "{}")
		if resp, _ := readResponse(t, br); resp.StatusCode != 200 {
			t.Fatalf("commit: %d", resp.StatusCode)
		}
	})
}

// HTTP/1.0 with Connection: keep-alive: the response says so, and the
// connection stays open for the next request.
func TestHTTP10KeepAlive(t *testing.T) {
	ts := startServer(t, nil)
	both(t, ts, func(t *testing.T, dial func() net.Conn) {
		c := dial()
		br := bufio.NewReader(c)
		for i := 0; i < 2; i++ {
			io.WriteString(c, "GET /ok HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
			resp, body := readResponse(t, br)
			if resp.StatusCode != 200 || body != `{"status":"ok"}` || resp.Close || resp.Header.Get("Connection") != "keep-alive" {
				t.Fatalf("request %d: %d %q close=%v", i, resp.StatusCode, body, resp.Close)
			}
		}
	})
}
