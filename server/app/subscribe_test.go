package app

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"weaseldb/server/config"
)

// stream is a /v1/subscribe response read line by line.
type stream struct {
	t    *testing.T
	c    net.Conn
	resp *http.Response
	br   *bufio.Reader
}

// subscribe opens a connection, subscribes and checks the head.
func subscribe(t *testing.T, network, addr, query string) *stream {
	t.Helper()
	c, err := net.DialTimeout(network, addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := fmt.Fprintf(c, "GET /v1/subscribe%s HTTP/1.1\r\nHost: x\r\n\r\n", query); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" ||
		len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
		t.Fatalf("subscribe head: %d %v %v", resp.StatusCode, resp.Header, resp.TransferEncoding)
	}
	// resp.Body de-chunks; read lines from it.
	return &stream{t: t, c: c, resp: resp, br: bufio.NewReader(resp.Body)}
}

func (s *stream) line() (map[string]any, error) {
	text, err := s.br.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("after %q: %w", text, err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		return nil, fmt.Errorf("line %q: %w", text, err)
	}
	return m, nil
}

// nextTxn skips keep-alive lines.
func (s *stream) nextTxn() map[string]any {
	s.t.Helper()
	for {
		m, err := s.line()
		if err != nil {
			s.t.Fatal(err)
		}
		if m["keepalive"] != true {
			return m
		}
	}
}

func TestSubscriberKeepsUp(t *testing.T) {
	ts := startServer(t, func(c *config.Config) { c.Subscription.KeepaliveIntervalSeconds = 1 })
	for network, addr := range networks(ts) {
		t.Run(network, func(t *testing.T) {
			cl := dialClient(t, network, addr)
			_, m := cl.mustDo(t, "GET", "/v1/version", "")
			start := version(m)
			sub := subscribe(t, network, addr, "")
			const n = 50
			var want []int64
			for i := 0; i < n; i++ {
				ops := []string{writeOp(fmt.Sprintf("%s/%d", network, i), strings.Repeat("v", i))}
				if i%10 == 9 {
					ops = nil // an empty commit has no line
				}
				_, m := cl.mustDo(t, "POST", "/v1/commit", commitBody("", 0, nil, ops))
				if ops != nil {
					want = append(want, version(m))
				}
			}
			for i, v := range want {
				m := sub.nextTxn()
				ops, _ := m["operations"].([]any)
				if version(m) != v || len(ops) != 1 {
					t.Fatalf("line %d: %v, want version %d", i, m, v)
				}
				op := ops[0].(map[string]any)
				if op["type"] != "write" || op["key"] != b64(fmt.Sprintf("%s/%d", network, version(m)-start-1)) {
					t.Fatalf("line %d: %v", i, op)
				}
			}
			// Then keep-alive lines with the latest version, about once a second.
			began := time.Now()
			m, err := sub.line()
			if err != nil || m["keepalive"] != true || version(m) != start+n {
				t.Fatalf("keep-alive: %v %v, want version %d", m, err, start+n)
			}
			if waited := time.Since(began); waited > 10*time.Second {
				t.Fatalf("keep-alive after %v", waited)
			}
		})
	}
}

func TestSubscribeFromVersion(t *testing.T) {
	ts := startServer(t, nil)
	cl := dialClient(t, "tcp", ts.tcpAddr)
	for i := 1; i <= 5; i++ {
		cl.mustDo(t, "POST", "/v1/commit", commitBody("", 0, nil, []string{writeOp(fmt.Sprint("f", i), "x")}))
	}
	sub := subscribe(t, "tcp", ts.tcpAddr, "?from_version=3")
	for v := int64(3); v <= 5; v++ {
		if m := sub.nextTxn(); version(m) != v {
			t.Fatalf("got %v, want version %d", m, v)
		}
	}
	cl.mustDo(t, "POST", "/v1/commit", commitBody("", 0, nil, []string{writeOp("f6", "x")}))
	if m := sub.nextTxn(); version(m) != 6 {
		t.Fatalf("live: %v", m)
	}
	for _, tc := range []struct {
		query string
		code  int
	}{{"?from_version=100", 400}, {"?from_version=-1", 400}, {"?from=1", 400}} {
		cl := dialClient(t, "unix", ts.unixPath)
		code, text, err := cl.do("GET", "/v1/subscribe"+tc.query, "")
		if err != nil || code != tc.code {
			t.Errorf("%s: %d %s %v", tc.query, code, text, err)
		}
	}
}

// metricValue reads one sample of /metrics (-1 when absent).
func metricValue(t *testing.T, ts *testServer, name string) float64 {
	t.Helper()
	cl := dialClient(t, "unix", ts.unixPath)
	_, text, err := cl.do("GET", "/metrics", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			var f float64
			fmt.Sscan(v, &f)
			return f
		}
	}
	return -1
}

// A subscriber that stops reading is cut once it has held more than
// max_buffer_size_bytes untaken for the grace period: its stream ends with
// the error line after whole chunks (the chunked reader checks the framing
// to the last chunk), while another subscriber and the committers carry on.
func TestSlowSubscriberIsCut(t *testing.T) {
	ts := startServer(t, func(c *config.Config) {
		c.Subscription.MaxBufferSizeBytes = 256 << 10
		c.Subscription.SlowConsumerGraceSeconds = 1
		c.Server.MaxRequestSizeBytes = 1 << 20
	})
	slow := subscribe(t, "unix", ts.unixPath, "")
	fast := subscribe(t, "unix", ts.unixPath, "")
	cl := dialClient(t, "unix", ts.unixPath)
	value := strings.Repeat("s", 16<<10)
	const commits = 200 // 4.3 MB of lines: far more than the socket buffers hold
	got := make(chan error, 1)
	go func() {
		for i := 0; i < commits; i++ {
			m, err := fast.line()
			if err != nil {
				got <- fmt.Errorf("fast subscriber, line %d: %w", i, err)
				return
			}
			if m["keepalive"] == true {
				i--
			}
		}
		got <- nil
	}()
	for i := 0; i < commits; i++ {
		code, text, err := cl.do("POST", "/v1/commit", commitBody("", 0, nil, []string{writeOp(fmt.Sprint("slow", i), value)}))
		if err != nil || code != 200 {
			t.Fatalf("commit %d: %d %.100s %v", i, code, text, err)
		}
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the fast subscriber did not get every line")
	}
	// The cut comes once the grace has passed (the slow one still reads
	// nothing).
	deadline := time.Now().Add(20 * time.Second)
	for metricValue(t, ts, "weaseldb_subscribers_cut_slow_total") < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the slow subscriber was not cut")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Now read the slow one: some lines, then the error line, then the
	// last chunk.
	var last map[string]any
	lines := 0
	for {
		m, err := slow.line()
		if err != nil {
			if last == nil || last["error"] != "slow_consumer" {
				t.Fatalf("after %d lines (last %v): %v", lines, last, err)
			}
			if !errors.Is(err, io.EOF) {
				t.Fatalf("the stream ended mid-chunk: %v", err)
			}
			break
		}
		lines++
		last = m
	}
	if lines >= commits {
		t.Fatalf("the slow subscriber got all %d lines", lines)
	}
	if msg := last["message"].(string); !strings.Contains(msg, "bytes not taken for") || !strings.Contains(msg, "limit 262144 bytes for 1s") {
		t.Fatalf("final line %v", last)
	}
	if metricValue(t, ts, "weaseldb_subscribers_cut_slow_total") != 1 {
		t.Fatal("the fast subscriber was cut too")
	}
}

// A subscriber that reads steadily gets a commit bigger than its buffer,
// and a burst of three commits that together are, whatever their size
// against max_buffer_size_bytes; so does a resubscribe from before them.
// (The limit used to be checked against one instant's backlog, so such a
// commit cut every subscriber, again on every resubscribe.)
func TestSteadySubscriberGetsCommitBiggerThanBuffer(t *testing.T) {
	const buffer = 64 << 10
	ts := startServer(t, func(c *config.Config) {
		c.Subscription.MaxBufferSizeBytes = buffer
		c.Server.MaxRequestSizeBytes = 1 << 20
	})
	sub := subscribe(t, "tcp", ts.tcpAddr, "")
	cl := dialClient(t, "unix", ts.unixPath)
	// One commit whose subscription line alone is longer than the buffer
	// (the base64 value is buffer+4 characters), so its body is too.
	body := commitBody("", 0, nil, []string{writeOp("big", strings.Repeat("b", (buffer+4)/4*3))})
	if code, m := cl.mustDo(t, "POST", "/v1/commit", body); code != 200 || version(m) != 1 || len(body) <= buffer {
		t.Fatalf("big commit of %d bytes: %d %v", len(body), code, m)
	}
	// A burst: three 30 KB commits in one pipelined write.
	var burst strings.Builder
	for i := range 3 {
		b := commitBody("", 0, nil, []string{writeOp(fmt.Sprint("burst", i), strings.Repeat("c", 30<<10))})
		fmt.Fprintf(&burst, "POST /v1/commit HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(b), b)
	}
	if _, err := io.WriteString(cl.c, burst.String()); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		resp, err := http.ReadResponse(cl.br, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("burst: %v %v", resp, err)
		}
		io.Copy(io.Discard, resp.Body)
	}
	check := func(s *stream, who string) {
		t.Helper()
		m := s.nextTxn()
		ops, _ := m["operations"].([]any)
		if version(m) != 1 || len(ops) != 1 || len(ops[0].(map[string]any)["value"].(string)) <= buffer {
			t.Fatalf("%s: first line %.200v", who, m)
		}
		for v := int64(2); v <= 4; v++ {
			if m := s.nextTxn(); version(m) != v || m["error"] != nil {
				t.Fatalf("%s: line %d: %.200v", who, v, m)
			}
		}
	}
	check(sub, "subscriber")
	check(subscribe(t, "unix", ts.unixPath, "?from_version=1"), "resubscriber")
	if n := metricValue(t, ts, "weaseldb_subscribers_cut_slow_total"); n != 0 {
		t.Fatalf("%v subscribers cut", n)
	}
}

// A subscriber that never reads at all is closed at the grace deadline.
func TestStalledSubscriberIsClosed(t *testing.T) {
	cfg := config.Default()
	sock := filepath.Join(t.TempDir(), "s.sock")
	cfg.Server.Interfaces = []config.Interface{{Type: config.InterfaceUnix, Path: sock}}
	cfg.Subscription.MaxBufferSizeBytes = 16 << 10
	cfg.Subscription.SlowConsumerGraceSeconds = 0 // cut as soon as it is over
	srv, err := New(cfg, withTestBackend(Options{SubscriberEndGrace: 200 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(func() { srv.Shutdown(5 * time.Second) })
	slow := subscribe(t, "unix", sock, "")
	cl := dialClient(t, "unix", sock)
	value := strings.Repeat("s", 16<<10)
	for i := 0; i < 100; i++ {
		if code, text, err := cl.do("POST", "/v1/commit", commitBody("", 0, nil, []string{writeOp("k", value)})); err != nil || code != 200 {
			t.Fatalf("commit %d: %d %.100s %v", i, code, text, err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for srv.handlers[0].subs.has.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the stalled subscriber is still served")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// What it buffered is readable, then the connection ends.
	slow.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, slow.c); err != nil {
		t.Fatalf("want EOF, got %v", err)
	}
}

func TestSubscriberSeesShutdown(t *testing.T) {
	ts := startServer(t, nil)
	sub := subscribe(t, "tcp", ts.tcpAddr, "")
	cl := dialClient(t, "tcp", ts.tcpAddr)
	cl.mustDo(t, "POST", "/v1/commit", commitBody("", 0, nil, []string{writeOp("a", "b")}))
	if m := sub.nextTxn(); version(m) != 1 {
		t.Fatalf("%v", m)
	}
	cl.c.Close()
	done := make(chan error, 1)
	go func() { done <- ts.srv.Shutdown(5 * time.Second) }()
	m := sub.nextTxn()
	if m["error"] != "shutdown" {
		t.Fatalf("last line %v", m)
	}
	if _, err := io.ReadAll(sub.resp.Body); err != nil {
		t.Fatalf("the stream did not end cleanly: %v", err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("shutdown did not finish")
	}
}

// A subscriber that goes away is forgotten; many subscribers on several
// loops all get every line.
func TestManySubscribersAndDisconnects(t *testing.T) {
	ts := startServer(t, nil)
	var subs []*stream
	for i := 0; i < 20; i++ {
		network, addr := "tcp", ts.tcpAddr
		if i%2 == 0 {
			network, addr = "unix", ts.unixPath
		}
		subs = append(subs, subscribe(t, network, addr, ""))
	}
	// Wait until every stream is adopted (the head is queued before).
	cl := dialClient(t, "unix", ts.unixPath)
	for i := 0; i < 10; i++ {
		cl.mustDo(t, "POST", "/v1/commit", commitBody("", 0, nil, []string{writeOp(fmt.Sprint("m", i), "x")}))
	}
	for i, s := range subs {
		for v := int64(1); v <= 10; v++ {
			if m := s.nextTxn(); version(m) != v {
				t.Fatalf("subscriber %d: %v, want %d", i, m, v)
			}
		}
		s.c.Close()
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, h := range ts.srv.handlers {
		for h.subs.has.Load() {
			if time.Now().After(deadline) {
				t.Fatal("closed subscribers are still held")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// Connection: close on a subscribe does not cut the stream after its head.
func TestSubscribeWithConnectionClose(t *testing.T) {
	ts := startServer(t, nil)
	c, err := net.DialTimeout("unix", ts.unixPath, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	io.WriteString(c, "GET /v1/subscribe HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	cl := dialClient(t, "tcp", ts.tcpAddr)
	cl.mustDo(t, "POST", "/v1/commit", commitBody("", 0, nil, []string{writeOp("cc", "x")}))
	s := &stream{t: t, c: c, resp: resp, br: bufio.NewReader(resp.Body)}
	if m := s.nextTxn(); version(m) != 1 {
		t.Fatalf("%v", m)
	}
}

// A subscription the pipeline refuses (from_version beyond the next) is
// answered with Connection: close (commit's Reply.Close, framed by the app
// layer), and the connection ends there, as it says.
func TestRefusedSubscribeSaysClose(t *testing.T) {
	ts := startServer(t, nil)
	c, err := net.DialTimeout("unix", ts.unixPath, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	io.WriteString(c, "GET /v1/subscribe?from_version=100 HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 400 || !resp.Close || !bytes.Contains(body, []byte("beyond the next version")) {
		t.Fatalf("answered %d close=%v %q %v", resp.StatusCode, resp.Close, body, err)
	}
	if rest, err := io.ReadAll(br); len(rest) != 0 || err != nil {
		t.Fatalf("after the refusal: %q, %v; want the end of the connection", rest, err)
	}
}
