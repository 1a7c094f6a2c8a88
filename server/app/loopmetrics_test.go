package app

import (
	"bufio"
	"io"
	"net"
	"regexp"
	"strconv"
	"testing"
	"time"

	"weaseldb/internal/nettest"
	"weaseldb/server/config"
)

// TestPerLoopMetrics: /metrics counts each loop's accepted connections and
// routed requests (weaseldb_loop_connections_accepted_total and
// weaseldb_loop_requests_total, by loop index), one series per loop, and
// their sums are exactly what the clients did. The many-CPU check reads
// them to see that every loop took its share (EPOLLEXCLUSIVE).
func TestPerLoopMetrics(t *testing.T) {
	const loops, conns, perConn = 4, 24, 5
	ts := startServer(t, func(c *config.Config) { c.Server.IOThreads = loops })
	for i := 0; i < conns; i++ {
		c, err := net.DialTimeout("unix", ts.unixPath, nettest.DialTimeout)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(20 * time.Second))
		br := bufio.NewReader(c)
		for k := 0; k < perConn; k++ {
			io.WriteString(c, okRequest(k))
			readResponse(t, br)
		}
		c.Close()
	}
	c, err := net.DialTimeout("unix", ts.unixPath, nettest.DialTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(c)
	var accepted, requests map[string]int
	deadline := time.Now().Add(10 * time.Second)
	for {
		io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
		_, body := readResponse(t, br)
		accepted = seriesByLoop(t, body, "weaseldb_loop_connections_accepted_total")
		requests = seriesByLoop(t, body, "weaseldb_loop_requests_total")
		// This scrape's own connection and request count too; a loop adds
		// its turn's requests at the end of the turn, so the scrape that
		// reads them may be one turn early: read again until they settle.
		if sum(accepted) == conns+1 && sum(requests) >= conns*perConn+1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(accepted) != loops || len(requests) != loops {
		t.Fatalf("series: accepted %v, requests %v; want one per loop (%d)", accepted, requests, loops)
	}
	if got := sum(accepted); got != conns+1 {
		t.Errorf("accepted over the loops %v sum to %d, want %d", accepted, got, conns+1)
	}
	// Every /ok of the clients, plus the scrapes so far (at least one).
	if got := sum(requests); got < conns*perConn+1 {
		t.Errorf("requests over the loops %v sum to %d, want at least %d", requests, got, conns*perConn+1)
	}
}

func seriesByLoop(t *testing.T, body, name string) map[string]int {
	t.Helper()
	out := map[string]int{}
	re := regexp.MustCompile(`(?m)^` + name + `\{loop="(\d+)"\} (\d+)$`)
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		n, err := strconv.Atoi(m[2])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[m[1]] = n
	}
	return out
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
