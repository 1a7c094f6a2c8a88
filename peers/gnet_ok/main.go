// Command gnet_ok answers GET /ok as weaseldb does (200, JSON content type,
// {"status":"ok"}) on one gnet v2 event loop. It counts complete request
// heads and writes that many fixed responses in one Write, so a pipelined
// burst gets one write back; it parses no HTTP beyond that, which makes it
// the ceiling of a raw Go epoll loop rather than a fair HTTP server.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/panjf2000/gnet/v2"
)

// response is weaseldb's /ok answer byte for byte.
var response = []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{\"status\":\"ok\"}")

var headEnd = []byte("\r\n\r\n")

type okServer struct {
	gnet.BuiltinEventEngine
	out []byte // reused across calls: the loop is single-threaded
}

// OnTraffic answers every complete request head in the buffer and leaves a
// partial one for the next read.
func (s *okServer) OnTraffic(c gnet.Conn) gnet.Action {
	buf, _ := c.Peek(-1)
	n, used := 0, 0
	for {
		i := bytes.Index(buf[used:], headEnd)
		if i < 0 {
			break
		}
		used += i + len(headEnd)
		n++
	}
	if n == 0 {
		return gnet.None
	}
	_, _ = c.Discard(used)
	s.out = s.out[:0]
	for range n {
		s.out = append(s.out, response...)
	}
	if _, err := c.Write(s.out); err != nil {
		return gnet.Close
	}
	return gnet.None
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8082", "listen address")
	flag.Parse()
	fmt.Printf("gnet_ok: listening on %s\n", *addr)
	err := gnet.Run(&okServer{}, "tcp://"+*addr, gnet.WithMulticore(false), gnet.WithNumEventLoop(1), gnet.WithReusePort(false))
	if err != nil {
		fmt.Fprintf(os.Stderr, "gnet_ok: %v\n", err)
		os.Exit(1)
	}
}
