package app

import (
	"bufio"
	"bytes"
	"net"
	"strings"
	"testing"
	"time"

	"weaseldb/internal/nettest"
	"weaseldb/server/config"
)

// event_batch_size bounds the events one epoll_wait takes, not a push:
// 8 requests that arrive in one write are read in one turn and go to the
// pipeline in one push, even with event_batch_size = 1 (docs/config.md
// says so).
func TestEventBatchSizeDoesNotBoundAPush(t *testing.T) {
	ts := startServer(t, func(c *config.Config) {
		c.Server.EventBatchSize = 1
		c.Server.IOThreads = 1
	})
	c, err := net.DialTimeout("tcp", ts.tcpAddr, nettest.DialTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	var reqs strings.Builder
	for i := range 8 {
		reqs.WriteString(okRequest(i))
	}
	if _, err := c.Write([]byte(reqs.String())); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	for range 8 {
		if resp, _ := readResponse(t, br); resp.StatusCode != 200 {
			t.Fatalf("GET /ok: %s", resp.Status)
		}
	}
	body, err := ts.srv.Metrics.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"weaseldb_pipeline_push_size_sum 8\n", "weaseldb_pipeline_push_size_count 1\n"} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("metrics lack %q:\n%s", strings.TrimSpace(want), grepLines(body, "push_size"))
		}
	}
}

func grepLines(body []byte, sub string) string {
	var out []string
	for _, l := range strings.Split(string(body), "\n") {
		if strings.Contains(l, sub) && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
