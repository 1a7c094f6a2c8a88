package main

import (
	"bytes"
	"net"
	"strings"
	"testing"
	"time"
)

// A --metrics-addr that cannot be bound fails at start, in one line that
// names it, before any request reaches the target.
func TestMetricsAddrBusyFailsBeforeLoad(t *testing.T) {
	s := startOKServer(t, 0)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var stdout, stderr bytes.Buffer
	code := run([]string{"--port", s.port(), "--duration", "1", "--metrics-addr", ln.Addr().String()}, &stdout, &stderr)
	if code != exitUsage {
		t.Errorf("exit %d, want %d", code, exitUsage)
	}
	if lines := strings.Count(stderr.String(), "\n"); lines != 1 || !strings.Contains(stderr.String(), "--metrics-addr "+ln.Addr().String()) {
		t.Errorf("stderr %q, want one line naming --metrics-addr", stderr.String())
	}
	if n := s.conns.Load(); n != 0 {
		t.Errorf("the target saw %d connections, want none", n)
	}
}

func TestMetricsLingerNeedsAddr(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--metrics-linger", "5"}, &stdout, &stderr); code != exitUsage ||
		!strings.Contains(stderr.String(), "--metrics-linger: only with --metrics-addr") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

// A run that fails before its load (the target down) has no final counts
// for a scrape to read: --metrics-linger does not hold the tool up, and
// only the run's own error is said.
func TestMetricsLingerWithoutARunReturnsAtOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close() // nothing listens there now: connections are refused
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"--port", port, "--duration", "1", "--metrics-addr", "127.0.0.1:0", "--metrics-linger", "600"}, &stdout, &stderr)
	}()
	select {
	case code := <-done:
		if code != exitFailure {
			t.Errorf("exit %d, want %d", code, exitFailure)
		}
	case <-time.After(time.Minute): // far below the 600 s linger
		t.Fatal("load_tester lingered although no run finished")
	}
	if strings.Contains(stderr.String(), "metrics-linger") {
		t.Errorf("stderr %q speaks of --metrics-linger: nothing was there to scrape", stderr.String())
	}
}
