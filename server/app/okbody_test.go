package app

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"testing"

	"weaseldb/server/config"
)

// GET /ok answers a JSON body of exactly benchmark.ok_body_bytes, with and
// without a request id (the prebuilt response and the one built per
// request), and HEAD the same Content-Length with no body: the GET
// pipelined behind it parses.
func TestOKBodyBytes(t *testing.T) {
	for _, n := range []int{config.MinOkBodyBytes, 16, 24, 1000, 256 << 10} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			ts := startServer(t, func(c *config.Config) { c.Benchmark.OkBodyBytes = n })
			both(t, ts, func(t *testing.T, dial func() net.Conn) {
				c := dial()
				br := bufio.NewReader(c)
				fmt.Fprintf(c, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n%sHEAD /ok HTTP/1.1\r\nHost: x\r\n\r\nGET /ok HTTP/1.0\r\n\r\n", okRequest(7))
				for i := range 2 {
					resp, body := readResponse(t, br)
					var v struct{ Status string }
					if resp.StatusCode != 200 || len(body) != n || resp.ContentLength != int64(n) {
						t.Fatalf("GET %d: status %d, Content-Length %d, body of %d bytes; want %d", i, resp.StatusCode, resp.ContentLength, len(body), n)
					}
					if err := json.Unmarshal([]byte(body), &v); err != nil || v.Status != "ok" {
						t.Fatalf("GET %d: body %.60q: status %q, %v", i, body, v.Status, err)
					}
				}
				head := readHeadResponse(t, br)
				if head.StatusCode != 200 || head.ContentLength != int64(n) {
					t.Fatalf("HEAD: status %d, Content-Length %d, want %d", head.StatusCode, head.ContentLength, n)
				}
				resp, body := readResponse(t, br)
				if resp.StatusCode != 200 || len(body) != n {
					t.Fatalf("GET after HEAD: status %d, body of %d bytes (HEAD sent a body?)", resp.StatusCode, len(body))
				}
				if rest, _ := io.ReadAll(br); len(rest) != 0 {
					t.Fatalf("%d bytes after the HTTP/1.0 response", len(rest))
				}
			})
		})
	}
}
