package loadtester

import (
	"strings"
	"testing"
)

// SetURL keeps the URL's path and query as typed: placeholders render as
// they do in --path, never percent-encoded into literal text, and a %XX
// the user typed stays as it is. A URL it cannot read is refused in one
// line that says what to type.
func TestSetURLKeepsThePathAsTyped(t *testing.T) {
	for _, tc := range []struct {
		url, path, host string
		port            int
		wantErr         string
	}{
		{url: "http://127.0.0.1:9100/a/{{seq}}?u={{uuid}}", path: "/a/{{seq}}?u={{uuid}}", host: "127.0.0.1", port: 9100},
		{url: "http://h/users/{{data.id}}", path: "/users/{{data.id}}", host: "h", port: 80},
		{url: "https://h/a%20b/{{seq%4}}?q=%2F", path: "/a%20b/{{seq%4}}?q=%2F", host: "h", port: 443},
		{url: "http://h:8080", path: "/", host: "h", port: 8080},
		{url: "http://h:8080?x=1", path: "/?x=1", host: "h", port: 8080},
		{url: "http://h/x#frag", path: "/x", host: "h", port: 80},
		{url: "http://[::1]:9/x", path: "/x", host: "::1", port: 9},
		{url: "127.0.0.1:8080/ok", wantErr: "add http://"},
		{url: "http://h:99999/ok", wantErr: "port 99999"},
		{url: "http://h:0/ok", wantErr: "port 0"},
		{url: "http:///ok", wantErr: "no host"},
		{url: "ftp://h/", wantErr: "want http:// or https://"},
	} {
		cfg := DefaultConfig()
		err := cfg.SetURL(tc.url)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.HasPrefix(err.Error(), "--url") || strings.Contains(err.Error(), "\n") {
				t.Errorf("SetURL(%q) = %v, want one line from --url saying %q", tc.url, err, tc.wantErr)
			}
			continue
		}
		if err != nil || cfg.Path != tc.path || cfg.Host != tc.host || cfg.Port != tc.port {
			t.Errorf("SetURL(%q): path %q host %q port %d err %v, want %q %q %d", tc.url, cfg.Path, cfg.Host, cfg.Port, err, tc.path, tc.host, tc.port)
		}
	}
}

// FuzzSetURL: any --url is taken or refused without a panic; one taken
// gives a target that starts with / and holds no space or control
// character, and a port in 1..65535.
func FuzzSetURL(f *testing.F) {
	for _, s := range []string{"http://h:1/a/{{seq}}?q={{uuid}}", "https://[::1]/x#y", "127.0.0.1:8080/ok", "http://h:99999/", "http://h/a b", "http://"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		cfg := DefaultConfig()
		if err := cfg.SetURL(raw); err != nil {
			return
		}
		if !strings.HasPrefix(cfg.Path, "/") || hasSpaceOrControl(cfg.Path) || cfg.Port < 1 || cfg.Port > 65535 || cfg.Host == "" {
			t.Fatalf("%q: path %q host %q port %d", raw, cfg.Path, cfg.Host, cfg.Port)
		}
	})
}
