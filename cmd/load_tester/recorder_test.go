package main

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// sent is what a recording server got in one request: the request target
// as it came on the wire, the headers and the body.
type sent struct {
	target string
	header http.Header
	body   string
}

// recorder is a server, HTTP/1.1 or HTTP/2 (h2c), that answers 200 and
// keeps every request it got.
type recorder struct {
	url  string
	mu   sync.Mutex
	reqs []sent // guarded by mu
}

// startRecorder starts a recorder speaking h2 (h2c by prior knowledge)
// when h2 is set, else HTTP/1.1.
func startRecorder(t *testing.T, h2 bool) *recorder {
	t.Helper()
	rec := &recorder{}
	handle := func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, sent{target: r.RequestURI, header: r.Header.Clone(), body: string(body)})
		rec.mu.Unlock()
		w.Write([]byte("ok"))
	}
	if h2 {
		rec.url = startH2(t, false, handle)
		return rec
	}
	s := startIDServer(t, handle)
	rec.url = s.srv.URL
	return rec
}

// got is every request so far.
func (rec *recorder) got() []sent {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]sent(nil), rec.reqs...)
}

// protocols runs f once over HTTP/1.1 and once over h2c, with the flags
// that select the protocol.
func protocols(t *testing.T, f func(t *testing.T, rec *recorder, flags []string)) {
	for _, h2 := range []bool{false, true} {
		name, flags := "http1", []string{}
		if h2 {
			name, flags = "h2c", []string{"--http2"}
		}
		t.Run(name, func(t *testing.T) { f(t, startRecorder(t, h2), flags) })
	}
}

// runRecorded runs load_tester with args, wanting exit 0, and returns what
// the server got.
func runRecorded(t *testing.T, rec *recorder, args ...string) []sent {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := run(append(args, "--quiet", "--warmup", "0"), &out, &errOut); code != exitOK {
		t.Fatalf("load_tester %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
	}
	got := rec.got()
	if len(got) == 0 {
		t.Fatalf("the server got no request")
	}
	return got
}
