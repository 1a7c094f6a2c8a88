package main

import (
	"slices"
	"strings"
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
