package main

import (
	"bytes"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The target's flags never override one another in silence: --url and
// --path together are refused in either order, naming both; --unix-socket
// with --url connects to the socket and sends the URL's path, with its
// host as the Host header (and SNI), as curl --unix-socket does; with
// --host or --port it is refused.
func TestTargetFlagsCombine(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		check   func(options) bool
		wantErr string
	}{
		{"url then path", []string{"--url", "http://h:1/a", "--path", "/b/{{seq}}"}, nil, "--url and --path"},
		{"path then url", []string{"--path", "/b/{{seq}}", "--url", "http://h:1"}, nil, "--url and --path"},
		{"socket and host", []string{"--unix-socket", "w.sock", "--host", "h"}, nil, "--unix-socket and --host"},
		{"socket and port", []string{"--unix-socket", "w.sock", "--port", "9"}, nil, "--unix-socket and --port"},
		{"socket and url", []string{"--unix-socket", "w.sock", "--url", "http://h:9/x/{{seq}}"}, func(o options) bool {
			c := o.cfg
			return c.UnixSocket == "w.sock" && c.Path == "/x/{{seq}}" && slices.Equal(c.Headers, []string{"Host: h:9"})
		}, ""},
		{"socket and https url", []string{"--unix-socket", "w.sock", "--url", "https://name/x"}, func(o options) bool {
			c := o.cfg
			return c.TLS != nil && c.TLS.ServerName == "name" && slices.Equal(c.Headers, []string{"Host: name"})
		}, ""},
		{"socket, url and own Host and SNI", []string{"--unix-socket", "w.sock", "--url", "https://name/x", "--header", "host: other", "--sni", "s"},
			func(o options) bool {
				c := o.cfg
				return c.TLS.ServerName == "s" && slices.Equal(c.Headers, []string{"host: other"})
			}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, _, err := parseArgs(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !tc.check(o) {
				t.Fatalf("err %v, options %+v", err, o.cfg)
			}
		})
	}
}

// --unix-socket with --url, end to end: the socket gets the URL's path,
// rendered, with the URL's host as Host.
func TestUnixSocketWithURL(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Host+" "+r.RequestURI)
		mu.Unlock()
		w.Write([]byte("ok"))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	var out, errOut bytes.Buffer
	if code := run([]string{"--unix-socket", sock, "--url", "http://api.example:8080/x/{{seq}}", "--concurrency", "1", "--duration", "0.2", "--warmup", "0", "--quiet"}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 || !regexp.MustCompile(`^api\.example:8080 /x/[0-9]+$`).MatchString(got[0]) {
		t.Fatalf("the socket got %q, want Host api.example:8080 and /x/N", got)
	}
}
