package main

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFile writes text to name in a test's directory and returns its path.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Data values reach the server as they are in the file, over HTTP/1.1 and
// h2, wherever they go: a space, a "/", "?", "#", "%" or "&" in a path
// segment or a query value is encoded (never a second parameter, never a
// broken request line), a quote in a JSON body escaped; a file exported
// with a byte order mark reads the same.
func TestDataValuesReachTheServerIntact(t *testing.T) {
	values := []string{"a b", "c&d=e", "x/y?z#w", "50%", `say "hi"`, "é"}
	var csv strings.Builder
	csv.WriteString("\xef\xbb\xbfid,v\n")
	for i, v := range values {
		csv.WriteString(string(rune('0'+i)) + `,"` + strings.ReplaceAll(v, `"`, `""`) + "\"\n")
	}
	data := writeFile(t, "values.csv", csv.String())
	protocols(t, func(t *testing.T, rec *recorder, flags []string) {
		got := runRecorded(t, rec, append(flags, "--url", rec.url+"/u/{{data.v}}/end?q={{data.v}}&id={{data.id}}", "--method", "POST",
			"--header", "X-Id: {{data.id}}", "--body", `{"v":"{{json:data.v}}"}`, "--data", data, "--data-policy", "once",
			"--concurrency", "1", "--duration", "10")...)
		if len(got) != len(values) {
			t.Fatalf("the server got %d requests, want %d", len(got), len(values))
		}
		for _, s := range got {
			u, err := url.ParseRequestURI(s.target)
			if err != nil {
				t.Fatalf("target %q: %v", s.target, err)
			}
			q := u.Query()
			want := values[q.Get("id")[0]-'0']
			seg := strings.TrimSuffix(strings.TrimPrefix(u.EscapedPath(), "/u/"), "/end")
			if p, err := url.PathUnescape(seg); err != nil || p != want || strings.Contains(seg, "/") {
				t.Errorf("target %q: path segment %q, want %q as one segment", s.target, seg, want)
			}
			if len(q) != 2 || q.Get("q") != want {
				t.Errorf("target %q: query %v, want q=%q and id only", s.target, q, want)
			}
			var body struct{ V string }
			if err := json.Unmarshal([]byte(s.body), &body); err != nil || body.V != want {
				t.Errorf("body %q: %v, want v %q", s.body, err, want)
			}
			if s.header.Get("X-Id") != q.Get("id") {
				t.Errorf("X-Id %q, want %q", s.header.Get("X-Id"), q.Get("id"))
			}
		}
	})
}

// A value with CR or LF used in a header is refused before the run, in one
// line naming the file, the row and the column, exit 2: it would inject a
// header (the server saw X-Evil: 1); over HTTP/1.1 and h2 alike, and no
// request is sent.
func TestDataLineBreakInHeaderRefused(t *testing.T) {
	data := writeFile(t, "evil.csv", "v\nok\n\"x\r\nX-Evil: 1\"\n")
	protocols(t, func(t *testing.T, rec *recorder, flags []string) {
		var out, errOut bytes.Buffer
		code := run(append(flags, "--url", rec.url+"/ok", "--header", "X-V: {{data.v}}", "--data", data, "--duration", "1", "--quiet"), &out, &errOut)
		msg := errOut.String()
		if code != exitUsage || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, data) || !strings.Contains(msg, "row 2") || !strings.Contains(msg, "column v") {
			t.Errorf("exit %d, stderr %q: want exit 2 and one line naming %s, row 2 and column v", code, msg, data)
		}
		if n := len(rec.got()); n != 0 {
			t.Errorf("the server got %d requests, want none", n)
		}
	})
}

// --path with a space is refused (exit 2) as a workload's path is.
func TestPathWithSpaceIsAUsageError(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"--path", "/a b"}, &out, &errOut); code != exitUsage || !strings.Contains(errOut.String(), "--path") {
		t.Fatalf("exit %d, %q: want 2 naming --path", code, errOut.String())
	}
}
