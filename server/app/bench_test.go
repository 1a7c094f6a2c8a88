package app

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	"weaseldb/server/config"
)

// benchServer starts a server on a unix socket with the benchmark settings
// of the issue (one loop, one release thread, WaitIfStageEmpty, no spin work).
func benchServer(b *testing.B) net.Conn {
	b.Helper()
	cfg := config.Default()
	sock := filepath.Join(b.TempDir(), "b.sock")
	cfg.Server.Interfaces = []config.Interface{{Type: config.InterfaceUnix, Path: sock}}
	cfg.Commit.PipelineWaitStrategy = config.WaitIfStageEmpty
	srv, err := New(cfg, withTestBackend(Options{}))
	if err != nil {
		b.Fatal(err)
	}
	srv.Start()
	b.Cleanup(func() { srv.Shutdown(5 * time.Second) })
	c, err := net.Dial("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

// countResponses reads n responses to GET /ok (each ends with the body).
func countResponses(br *bufio.Reader, n int) error {
	body := []byte(`{"status":"ok"}`)
	for seen := 0; seen < n; {
		line, err := br.ReadSlice('}')
		if err != nil {
			return err
		}
		if bytes.HasSuffix(line, body) {
			seen++
		}
	}
	return nil
}

// BenchmarkOKRoundTrip: one request at a time on one connection, through
// the loop and the four pipeline stages and back (ns/op is the round trip,
// including the in-process Go client's own netpoller wake-ups).
func BenchmarkOKRoundTrip(b *testing.B) {
	c := benchServer(b)
	req := []byte("GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Write(req); err != nil {
			b.Fatal(err)
		}
		if err := countResponses(br, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOKPipelined16: 16 requests per write (ns/op is per request).
func BenchmarkOKPipelined16(b *testing.B) {
	c := benchServer(b)
	req := bytes.Repeat([]byte("GET /ok HTTP/1.1\r\nHost: x\r\n\r\n"), 16)
	br := bufio.NewReader(c)
	b.ResetTimer()
	for sent := 0; sent < b.N; sent += 16 {
		if _, err := c.Write(req); err != nil {
			b.Fatal(err)
		}
		if err := countResponses(br, 16); err != nil {
			b.Fatal(fmt.Errorf("after %d: %w", sent, err))
		}
	}
}
