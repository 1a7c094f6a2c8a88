package loadtester

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testServer is a small HTTP/1.1 server for the tests: a reader goroutine per
// connection parses requests, a writer answers them in order after an
// injected delay, so pipelining depth and latency are under the test's
// control.
type testServer struct {
	ln         net.Listener
	delay      time.Duration
	closeEvery int                   // answer every Nth request with Connection: close (0: never)
	stallUntil atomic.Int64          // UnixNano: responses wait until then
	conns      atomic.Int64          // connections accepted
	requests   atomic.Int64          // requests parsed
	maxDepth   atomic.Int64          // most requests seen waiting for their response on one connection
	keepBodies bool                  // record request bodies in bodies
	bodies     []string              // guarded by mu
	respond    func(w *bytes.Buffer) // writes one response; nil: 200 with a small body
	// holdFrom (UnixNano, 0: never): requests that arrive from then on are
	// never answered; their connection holds until the server is killed.
	holdFrom atomic.Int64
	// decide, when set, picks what happens to the n-th request the server
	// reads (n counts from 1 over the whole server) after its delay.
	decide func(n int64) reply
	seq    atomic.Int64 // requests numbered for decide
	// events, when set, is called under mu with "arrive" as each request
	// is read and "answer" just before its response is written, with its
	// request line and body: one order over every connection.
	events func(event, line, body string)
	mu     sync.Mutex
	open   map[net.Conn]struct{}
	done   chan struct{}
}

func startTestServer(t *testing.T, network string, configure func(*testServer)) *testServer {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = t.TempDir() + "/s.sock"
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	return startTestServerOn(t, ln, configure)
}

// startTestServerOn is startTestServer on a listener of the test's own (a
// TLS listener: tls_test.go).
func startTestServerOn(t *testing.T, ln net.Listener, configure func(*testServer)) *testServer {
	t.Helper()
	s := &testServer{ln: ln, open: map[net.Conn]struct{}{}, done: make(chan struct{})}
	if configure != nil {
		configure(s)
	}
	go s.serve()
	t.Cleanup(s.kill)
	return s
}

func (s *testServer) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		select {
		case <-s.done:
			s.mu.Unlock()
			c.Close()
			return
		default:
		}
		s.open[c] = struct{}{}
		s.mu.Unlock()
		s.conns.Add(1)
		go s.handle(c)
	}
}

// kill closes the listener and every connection (a server that dies).
func (s *testServer) kill() {
	s.mu.Lock()
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	s.ln.Close()
	for c := range s.open {
		c.Close()
	}
	s.mu.Unlock()
}

// action is what the test server does with one request.
type action int

const (
	actAnswer   action = iota // a complete response
	actHold                   // never answer: the connection holds until the server dies
	actTruncate               // half a response, then close
	actReset                  // close with SO_LINGER 0 (an RST) instead of answering
)

// reply is what decide picks for one request: an action, after a delay
// from its arrival (on top of the server's delay).
type reply struct {
	act   action
	delay time.Duration
}

// port of a TCP server.
func (s *testServer) port() int { return s.ln.Addr().(*net.TCPAddr).Port }

func (s *testServer) handle(c net.Conn) {
	defer func() {
		s.mu.Lock()
		delete(s.open, c)
		s.mu.Unlock()
		c.Close()
	}()
	type arrival struct {
		at         time.Time
		line, body string
		reply
	}
	arrivals := make(chan arrival, 4096)
	var pending atomic.Int64
	go func() {
		defer close(arrivals)
		r := bufio.NewReader(c)
		for {
			line, body, err := readRequestLine(r)
			if err != nil {
				return
			}
			s.event("arrive", line, body)
			s.requests.Add(1)
			d := pending.Add(1)
			for m := s.maxDepth.Load(); d > m && !s.maxDepth.CompareAndSwap(m, d); m = s.maxDepth.Load() {
			}
			if s.keepBodies {
				s.mu.Lock()
				s.bodies = append(s.bodies, body)
				s.mu.Unlock()
			}
			a := arrival{at: time.Now(), line: line, body: body}
			if from := s.holdFrom.Load(); from != 0 && a.at.UnixNano() >= from {
				a.act = actHold
			} else if s.decide != nil {
				a.reply = s.decide(s.seq.Add(1))
			}
			arrivals <- a
		}
	}()
	var out bytes.Buffer
	n := 0
	for a := range arrivals {
		if wait := time.Until(a.at.Add(s.delay + a.delay)); wait > 0 {
			time.Sleep(wait)
		}
		for until := s.stallUntil.Load(); time.Now().UnixNano() < until; {
			time.Sleep(time.Millisecond)
		}
		switch a.act {
		case actHold:
			<-s.done
			return
		case actReset:
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
			return
		case actTruncate:
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf"))
			return
		}
		n++
		out.Reset()
		closing := s.closeEvery > 0 && n%s.closeEvery == 0
		switch {
		case s.respond != nil:
			s.respond(&out)
		case closing:
			out.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
		default:
			out.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok")
		}
		pending.Add(-1)
		s.event("answer", a.line, a.body)
		if _, err := c.Write(out.Bytes()); err != nil || closing {
			return
		}
	}
}

// event reports one request event to s.events, if set.
func (s *testServer) event(event, line, body string) {
	if s.events == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events(event, line, body)
}

// readRequestLine reads one request: its request line and its body.
func readRequestLine(r *bufio.Reader) (requestLine, body string, err error) {
	length := 0
	for first := true; ; first = false {
		line, err := r.ReadString('\n')
		if err != nil {
			return "", "", err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if first {
				return "", "", fmt.Errorf("empty request line")
			}
			break
		}
		if first {
			requestLine = line
		}
		if name, value, ok := strings.Cut(line, ":"); ok && strings.EqualFold(name, "content-length") {
			if length, err = strconv.Atoi(strings.TrimSpace(value)); err != nil {
				return "", "", err
			}
		}
	}
	b := make([]byte, length)
	_, err = io.ReadFull(r, b)
	return requestLine, string(b), err
}

// testConfig is a short closed-loop run against s.
func testConfig(s *testServer) Config {
	_ = os.Getenv(testIOBackendEnv) // read while a test runs, so the test cache keys on it (engine_test.go)
	cfg := DefaultConfig()
	if ua, ok := s.ln.Addr().(*net.UnixAddr); ok {
		cfg.UnixSocket = ua.Name
	} else {
		cfg.Port = s.port()
	}
	cfg.Concurrency = 4
	cfg.Duration = time.Second
	cfg.StatsInterval = 250 * time.Millisecond
	cfg.Timeout = 5 * time.Second
	return cfg
}
