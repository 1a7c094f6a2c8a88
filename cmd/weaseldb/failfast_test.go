package main

import (
	"bufio"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"weaseldb/internal/nettest"
	"weaseldb/internal/serverproc"
	"weaseldb/internal/syncbuf"
)

// An event loop that panics ends the server (fail fast): its connections
// close at once, the other loops' connections get what they are owed and
// close, and the process exits 1 saying why, so a supervisor restarts it
// whole instead of it running on, short of a loop.
func TestLoopPanicFailsFast(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "weaseldb-faultinject")
	if out, err := exec.Command("go", "build", "-tags", "faultinject", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	var log syncbuf.Buffer
	p, err := serverproc.Start(serverproc.Spec{Name: "weaseldb", Binary: bin, StartTimeout: 15 * time.Second, Log: &log,
		ConfigFile: writeConfig(t, "[server]\nio_threads = 2\ninterfaces = [{ type = \"tcp\", address = \"127.0.0.1\", port = 0 }]\n")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(5 * time.Second) })
	addr := p.Listeners()[0].Address

	// Connections spread over both loops; each is answered before the panic.
	var idle []net.Conn
	for i := 0; i < 8; i++ {
		c, err := net.DialTimeout("tcp", addr, nettest.DialTimeout)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(20 * time.Second))
		io.WriteString(c, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
		if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || !strings.Contains(line, "200") {
			t.Fatalf("connection %d: %q %v", i, line, err)
		}
		idle = append(idle, c)
	}
	victim, err := net.DialTimeout("tcp", addr, nettest.DialTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	victim.SetDeadline(time.Now().Add(20 * time.Second))
	io.WriteString(victim, "GET /debug/panic HTTP/1.1\r\nHost: x\r\n\r\n")
	if rest, err := io.ReadAll(victim); len(rest) != 0 || (err != nil && !strings.Contains(err.Error(), "reset")) {
		t.Errorf("the panicking request's connection: %q %v; want it closed with no answer", rest, err)
	}
	if !p.ExitedWithin(15 * time.Second) {
		t.Fatal("the server still runs after a loop panicked")
	}
	if code := p.ExitCode(); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	for i, c := range idle { // every connection, on either loop, was closed
		if rest, err := io.ReadAll(c); len(rest) != 0 || (err != nil && !strings.Contains(err.Error(), "reset")) {
			t.Errorf("idle connection %d after the stop: %q %v", i, rest, err)
		}
	}
	out := log.String()
	for _, want := range []string{"event loop", "panicked: fault injection: GET /debug/panic", "stopping: an event loop failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("the server's output lacks %q:\n%s", want, out)
		}
	}
}
