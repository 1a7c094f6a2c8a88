package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"weaseldb/internal/nettest"
	"weaseldb/internal/procstat"
	"weaseldb/internal/serverproc"
)

// The attack of issue 13, end to end: with the descriptor limit below the
// number of silent clients, every new client used to be locked out for as
// long as the silent ones stayed. Now the silent ones are cut at the header
// timeout, the extra ones are closed at once (max_connections stays below
// the descriptor limit), the loops never spin, and a legitimate client is
// served within header_timeout + 1 s.
func TestSlowlorisBelowTheDescriptorLimit(t *testing.T) {
	const (
		nofile        = 200
		silentClients = 250
		headerTimeout = time.Second
	)
	dir := t.TempDir()
	// The process's descriptor limit: a wrapper that lowers it (soft and
	// hard, so Go's own raise of the soft limit cannot undo it) and execs
	// the server, which then gets the signals itself.
	wrapper := filepath.Join(dir, "weaseldb-nofile")
	script := fmt.Sprintf("#!/bin/sh\nulimit -n %d || exit 99\nexec %q \"$@\"\n", nofile, binary)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("[server]\ninterfaces = [{ type = \"tcp\", address = \"127.0.0.1\", port = 0 }]\nheader_timeout_seconds = %g\n[commit]\npipeline_wait_strategy = \"WaitIfStageEmpty\"\n", headerTimeout.Seconds())
	p, err := serverproc.Start(serverproc.Spec{Name: "weaseldb", Binary: wrapper, ConfigFile: writeConfig(t, cfg), Log: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(5 * time.Second) })
	if v, ok := p.StartupValue("weaseldb: max_connections "); !ok || !strings.Contains(v, fmt.Sprintf("RLIMIT_NOFILE %d", nofile)) {
		t.Fatalf("startup line: %q %v (want the limit derived from RLIMIT_NOFILE %d)", v, ok, nofile)
	}
	addr := p.Listeners()[0].Address

	// The silent clients: a partial head each, then nothing.
	start := time.Now()
	var silent []net.Conn
	for i := 0; i < silentClients; i++ {
		c, err := net.DialTimeout("tcp", addr, nettest.DialTimeout)
		if err != nil {
			t.Fatalf("silent client %d: %v", i, err)
		}
		silent = append(silent, c)
		io.WriteString(c, "GET /ok HTTP/1.1\r\nHost: x\r\n")
	}
	defer func() {
		for _, c := range silent {
			c.Close()
		}
	}()
	cpu0, errCPU := procstat.PidCPU(p.Pid())

	// A legitimate client retries until served.
	served := time.Duration(0)
	for time.Since(start) < headerTimeout+5*time.Second {
		if ok := getOK(addr); ok {
			served = time.Since(start)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if served == 0 || served > headerTimeout+time.Second {
		t.Fatalf("legitimate client served after %v, want within %v (header_timeout + 1 s)", served, headerTimeout+time.Second)
	}
	// The silent clients that got a connection were answered 408 and
	// closed; the others were closed at once.
	got408, gotEOF := 0, 0
	for _, c := range silent {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b, _ := io.ReadAll(c)
		switch {
		case strings.HasPrefix(string(b), "HTTP/1.1 408"):
			got408++
		case len(b) == 0:
			gotEOF++
		default:
			t.Fatalf("a silent client read %q", b)
		}
	}
	if got408 == 0 || gotEOF == 0 || got408+gotEOF != silentClients {
		t.Fatalf("408s %d, closed at once %d, of %d", got408, gotEOF, silentClients)
	}
	// No spinning while it refused and waited: well under a core.
	if errCPU == nil {
		if cpu1, err := procstat.PidCPU(p.Pid()); err == nil {
			if frac := float64(cpu1-cpu0) / float64(time.Since(start)); frac > 0.5 {
				t.Errorf("the server used %.0f%% of a core during the attack", frac*100)
			}
		}
	}
}

func getOK(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := io.WriteString(c, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return false
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == 200
}
