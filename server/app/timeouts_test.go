package app

import (
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"weaseldb/server/config"
)

// The server's timeouts over HTTP (the rules themselves are tested to the
// nanosecond in server/eventloop): a partial head or body gets 408 after
// the earlier responses, the closes are counted in /metrics by cause, and
// max_connections refuses the extra connections while serving the others.

const lateBy = 2 * time.Second // how late a close may come on a busy machine

func shortTimeouts(c *config.Config) {
	c.Server.HeaderTimeoutSeconds = 0.3
	c.Server.BodyTimeoutSeconds = 0.3
	c.Server.IdleTimeoutSeconds = 0.6
	c.Server.WriteTimeoutSeconds = 0.5
}

func readToEOF(t *testing.T, c net.Conn) string {
	t.Helper()
	all, err := io.ReadAll(c)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read: %v (got %q)", err, all)
	}
	return string(all)
}

func TestPartialHeadGets408AfterEarlierResponses(t *testing.T) {
	ts := startServer(t, shortTimeouts)
	c, _ := dialTCP(t, ts)
	start := time.Now()
	io.WriteString(c, okRequest(1)+okRequest(2)+"GET /ok HTTP/1.1\r\nHost: x\r\nX-Pad: never end")
	all := readToEOF(t, c)
	if el := time.Since(start); el < 300*time.Millisecond || el > 300*time.Millisecond+lateBy {
		t.Errorf("closed after %v, want about 0.3 s", el)
	}
	if strings.Count(all, "HTTP/1.1 200 OK") != 2 || !strings.Contains(all, "HTTP/1.1 408 Request Timeout") ||
		strings.Index(all, "408") < strings.LastIndex(all, "200 OK") {
		t.Fatalf("want two 200s then a 408, got %q", all)
	}
}

func TestPartialBodyGets408(t *testing.T) {
	ts := startServer(t, shortTimeouts)
	c, _ := dialTCP(t, ts)
	io.WriteString(c, "POST /v1/commit HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"operations\":")
	// Body bytes every 0.2 s (under the 0.3 s body timeout) keep it alive
	// well past the header timeout.
	for i := 0; i < 4; i++ {
		time.Sleep(200 * time.Millisecond)
		if _, err := io.WriteString(c, " "); err != nil {
			t.Fatalf("cut while the body was still coming: %v", err)
		}
	}
	all := readToEOF(t, c)
	if !strings.HasPrefix(all, "HTTP/1.1 408 Request Timeout") {
		t.Fatalf("got %q", all)
	}
}

func TestTimeoutClosesAreInMetrics(t *testing.T) {
	ts := startServer(t, shortTimeouts)
	silent, _ := dialTCP(t, ts)
	readToEOF(t, silent) // closed at the header timeout, no 408: nothing was sent
	idle, br := dialTCP(t, ts)
	io.WriteString(idle, okRequest(1))
	readResponse(t, br)
	readToEOF(t, idle) // closed at the idle timeout
	c, br := dialTCP(t, ts)
	io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
	_, body := readResponse(t, br)
	for _, want := range []string{
		`weaseldb_connections_closed_total{cause="header_timeout"} 1`,
		`weaseldb_connections_closed_total{cause="idle_timeout"} 1`,
		`weaseldb_connections_closed_total{cause="write_timeout"} 0`,
		`weaseldb_connections_closed_total{cause="connection_limit"} 0`,
		`weaseldb_loop_wakeups_total`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestMaxConnectionsFromConfig(t *testing.T) {
	ts := startServer(t, func(c *config.Config) { c.Server.MaxConnections = 2 })
	if got := ts.srv.ConnectionLimit(); got.Max != 2 || got.Auto {
		t.Fatalf("limit %+v", got)
	}
	a, bra := dialTCP(t, ts)
	b, brb := dialTCP(t, ts)
	io.WriteString(a, okRequest(1))
	io.WriteString(b, okRequest(2))
	readResponse(t, bra)
	readResponse(t, brb)
	extra, _ := dialTCP(t, ts)
	io.WriteString(extra, okRequest(3))
	if got := readToEOF(t, extra); got != "" {
		t.Fatalf("the connection past max_connections was served: %q", got)
	}
	io.WriteString(a, okRequest(4))
	if resp, _ := readResponse(t, bra); resp.StatusCode != 200 {
		t.Fatalf("an earlier connection after the refusal: %d", resp.StatusCode)
	}
	if n := ts.srv.Counters().Open; n != 2 {
		t.Fatalf("open %d, want 2", n)
	}
}

func TestAutomaticConnectionLimitFollowsRlimit(t *testing.T) {
	cfg := config.Default()
	cl := connectionLimit(cfg, 2)
	if !cl.Auto || cl.NoFile == 0 || cl.Max != int(min(cl.NoFile-uint64(cl.Reserve), 1<<24)) || cl.Reserve < 2 {
		t.Fatalf("limit %+v", cl)
	}
	cfg.Server.MaxConnections = 1 << 24
	if cl := connectionLimit(cfg, 2); cl.Max != 1<<24 || (cl.NoFile < 1<<24 && cl.Warning == "") {
		t.Fatalf("an explicit limit above RLIMIT_NOFILE gives no warning: %+v", cl)
	}
}

// The defaults are on: a server from config.Default() times out a silent
// connection (after 10 s: checked through the effective loop options, not
// by waiting).
func TestDefaultTimeoutsAreOn(t *testing.T) {
	lo := loopOptions(config.Default(), Options{})
	if lo.HeaderTimeout != 10*time.Second || lo.BodyTimeout != 30*time.Second || lo.IdleTimeout != time.Minute || lo.WriteTimeout != 30*time.Second {
		t.Fatalf("loop options %+v", lo)
	}
}
