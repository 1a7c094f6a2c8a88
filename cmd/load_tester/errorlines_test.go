package main

import (
	"bytes"
	"strings"
	"testing"
)

// What a user mistypes is refused in one line that names the flag and
// says what to type, exit 2 (a usage error), before any load.
func TestMistypedFlagsOneClearLine(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		want     string // in the line
		notWant  string // never in it
		wantCode int
	}{
		{[]string{"--url", "127.0.0.1:8080/ok"}, "add http://", "first path segment", exitUsage},
		{[]string{"--url", "http://h:99999/ok"}, "--url \"http://h:99999/ok\": port 99999", "--host/--port", exitUsage},
		{[]string{"--metrics-addr", "9467"}, "--metrics-addr \"9467\": want HOST:PORT", "listen tcp", exitUsage},
		{[]string{"--host", "http://127.0.0.1"}, "--host \"http://127.0.0.1\": want a host name or address", "target down", exitUsage},
		{[]string{"--check", "status=200"}, "--check \"status=200\": want an operator", "for flag -check", exitUsage},
		{[]string{"--workload", "nothere.toml"}, "--workload nothere.toml: open nothere.toml", "workload: ", exitUsage},
		{[]string{"--url", "https://127.0.0.1:1/ok", "--ca", "/nonexistent/ca.pem"}, "--ca /nonexistent/ca.pem: cannot read it", "", exitUsage},
		{[]string{"--body-file", "/nonexistent/body.json"}, "--body-file /nonexistent/body.json: cannot read it", "", exitUsage},
		{[]string{"--url", "https://127.0.0.1:1/ok", "--cert", "/nonexistent/c.pem", "--key", "/nonexistent/k.pem"}, "--cert /nonexistent/c.pem: cannot read it", "", exitUsage},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(append(tc.args, "--duration", "0.1"), &out, &errOut)
			msg := errOut.String()
			if code != tc.wantCode || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, tc.want) || tc.notWant != "" && strings.Contains(msg, tc.notWant) {
				t.Errorf("exit %d, stderr %q: want exit %d and one line holding %q (not %q)", code, msg, tc.wantCode, tc.want, tc.notWant)
			}
		})
	}
}
