package app

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"weaseldb/internal/nettest"
	"weaseldb/server/config"
)

// server.admin_address serves pprof and /metrics on its own listener; the
// main listeners answer /debug/ with 404; the admin listener stops with the
// server.
func TestAdminListener(t *testing.T) {
	cfg := config.Default()
	cfg.Server.Interfaces = []config.Interface{{Type: config.InterfaceTCP, Address: "127.0.0.1", Port: 0}}
	cfg.Server.AdminAddress = "127.0.0.1:0"
	srv, err := New(cfg, withTestBackend(Options{OnLoopError: func(err error) { t.Errorf("loop: %v", err) }}))
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			srv.Shutdown(5 * time.Second)
		}
	})
	admin := "http://" + srv.AdminAddr()
	client := &http.Client{Timeout: 30 * time.Second}
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := client.Get(url)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		return resp.StatusCode, string(body)
	}
	for _, tc := range []struct{ path, want string }{
		{"/debug/pprof/", "goroutine"},
		{"/debug/pprof/goroutine?debug=1", "goroutine profile"},
		{"/debug/pprof/heap?debug=1", "heap profile"},
		{"/debug/pprof/cmdline", ""},
		{"/debug/pprof/profile?seconds=1", ""},
		{"/metrics", "weaseldb_"},
	} {
		if code, body := get(admin + tc.path); code != 200 || !strings.Contains(body, tc.want) {
			t.Errorf("admin %s: %d %.80q, want 200 with %q", tc.path, code, body, tc.want)
		}
	}

	// The main listener: /debug/ is no route of it.
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", srv.TCPPort(0)), nettest.DialTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(c)
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/goroutine?debug=1", "/debug/pprof/profile"} {
		io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n")
		if resp, _ := readResponse(t, br); resp.StatusCode != 404 {
			t.Errorf("main %s: %d, want 404", path, resp.StatusCode)
		}
	}

	addr := srv.AdminAddr()
	stopped = true
	if err := srv.Shutdown(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatalf("admin listener %s still accepts after Shutdown", addr)
	}
}

// Without admin_address there is no admin listener; a taken address is an
// error from New that names the key.
func TestAdminListenerOffAndTaken(t *testing.T) {
	ts := startServer(t, nil)
	if a := ts.srv.AdminAddr(); a != "" {
		t.Fatalf("AdminAddr %q without admin_address", a)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := config.Default()
	cfg.Server.Interfaces = []config.Interface{{Type: config.InterfaceTCP, Address: "127.0.0.1", Port: 0}}
	cfg.Server.AdminAddress = ln.Addr().String()
	if srv, err := New(cfg, withTestBackend(Options{})); err == nil {
		srv.Shutdown(time.Second)
		t.Fatal("New with a taken admin address: no error")
	} else if !strings.Contains(err.Error(), "server.admin_address") {
		t.Fatalf("error %q does not name server.admin_address", err)
	}
}
