package app

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"testing"

	"weaseldb/internal/nettest"
	"weaseldb/server/config"
)

// server.listener = "reuseport": every loop has its own socket on the TCP
// port, so connections opened at once on an idle server reach every loop
// (weaseldb_loop_connections_accepted_total); the unix socket stays shared.
func TestReusePortListener(t *testing.T) {
	const loops, conns = 4, 200
	ts := startServer(t, func(c *config.Config) {
		c.Server.IOThreads = loops
		c.Server.Listener = config.ListenerReusePort
	})
	if got := len(ts.srv.Addrs()); got != 2 {
		t.Fatalf("Addrs %v: want one line per interface", ts.srv.Addrs())
	}
	for i := range conns {
		c := nettest.Dial(t, "tcp", ts.tcpAddr)
		defer c.Close()
		fmt.Fprintf(c, "GET /ok HTTP/1.1\r\nHost: x\r\nX-Request-Id: %d\r\n\r\n", i)
		if resp, _ := readResponse(t, bufio.NewReader(c)); resp.StatusCode != 200 {
			t.Fatalf("conn %d: %d", i, resp.StatusCode)
		}
	}
	u, err := net.Dial("unix", ts.unixPath)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	io.WriteString(u, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
	_, body := readResponse(t, bufio.NewReader(u))
	re := regexp.MustCompile(`(?m)^weaseldb_loop_connections_accepted_total\{loop="(\d+)"\} (\d+)`)
	per := map[int]int{}
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		i, _ := strconv.Atoi(m[1])
		n, _ := strconv.Atoi(m[2])
		per[i] = n
	}
	total := 0
	for i := range loops {
		if per[i] == 0 {
			t.Errorf("loop %d accepted no connection: %v", i, per)
		}
		total += per[i]
	}
	if total != conns+1 { // and the unix one
		t.Errorf("accepted %d in all (%v), want %d", total, per, conns+1)
	}
}
