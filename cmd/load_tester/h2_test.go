package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"weaseldb/loadtester/result"
)

// --http2 end to end against Go's net/http servers: h2 over TLS (by ALPN)
// and h2c (prior knowledge) exit 0 with every request over HTTP/2; a
// server without HTTP/2 is refused in one line, exit 1.
func TestHTTP2EndToEnd(t *testing.T) {
	start := func(tlsOn, h2 bool) (string, *atomic.Int64) {
		var nonH2 atomic.Int64
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ProtoMajor != 2 {
				nonH2.Add(1)
			}
			w.Write([]byte("ok"))
		}))
		srv.Config.ErrorLog = log.New(io.Discard, "", 0)
		srv.Config.Protocols = new(http.Protocols)
		srv.Config.Protocols.SetHTTP1(true)
		srv.Config.Protocols.SetHTTP2(tlsOn && h2)
		srv.Config.Protocols.SetUnencryptedHTTP2(!tlsOn && h2)
		if tlsOn {
			srv.EnableHTTP2 = h2
			srv.StartTLS()
		} else {
			srv.Start()
		}
		t.Cleanup(srv.Close)
		return srv.URL, &nonH2
	}
	url, nonH2 := start(true, true)
	var out, errOut bytes.Buffer
	code := run([]string{"--url", url + "/ok", "--http2", "--streams", "4", "--insecure",
		"--concurrency", "2", "--duration", "0.3", "--stats-interval", "0.1", "--quiet", "--threshold", "errors<=0"}, &out, &errOut)
	if code != exitOK || !strings.Contains(out.String(), "ALPN h2") || nonH2.Load() != 0 {
		t.Errorf("h2: exit %d, %d requests not over HTTP/2\n%s%s", code, nonH2.Load(), out.String(), errOut.String())
	}
	url, nonH2 = start(false, true)
	out.Reset()
	errOut.Reset()
	if code := run([]string{"--url", url + "/ok", "--http2", "--streams", "4", "--concurrency", "2", "--duration", "0.3", "--quiet"}, &out, &errOut); code != exitOK || nonH2.Load() != 0 {
		t.Errorf("h2c: exit %d, %d requests not over HTTP/2\n%s%s", code, nonH2.Load(), out.String(), errOut.String())
	}
	for _, tlsOn := range []bool{true, false} {
		url, _ := start(tlsOn, false)
		args := []string{"--url", url + "/ok", "--http2", "--duration", "0.3", "--quiet"}
		if tlsOn {
			args = append(args, "--insecure")
		}
		errOut.Reset()
		if code := run(args, &out, &errOut); code != exitFailure || strings.Count(errOut.String(), "\n") != 1 || !strings.Contains(errOut.String(), "HTTP/2") {
			t.Errorf("no h2, tls %v: exit %d, %q", tlsOn, code, errOut.String())
		}
	}
	errOut.Reset()
	if code := run([]string{"--streams", "4"}, &out, &errOut); code != exitUsage || !strings.Contains(errOut.String(), "--streams: only with --http2") {
		t.Errorf("--streams alone: exit %d, %q", code, errOut.String())
	}
}

// startH2 starts Go's net/http server speaking HTTP/2 only: over TLS (h2
// by ALPN) or h2c (prior knowledge); a request over another protocol is
// answered 505. It returns the server's URL.
func startH2(t *testing.T, tlsOn bool, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			w.WriteHeader(http.StatusHTTPVersionNotSupported)
			return
		}
		h(w, r)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetHTTP2(tlsOn)
	srv.Config.Protocols.SetUnencryptedHTTP2(!tlsOn)
	if tlsOn {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv.URL
}

// A workload over HTTP/2, h2 and h2c, closed and open loop: two kinds
// picked by weight, each with its own results; {{seq}} unique per request
// across kinds; a data file under --data-policy once feeding each row to
// exactly one request (path, header and body together), the run ending
// when the rows run out; {{answered:KIND}} naming only a request the
// server answered (or the asking request's own seq); a kind check on the
// JSON and a header passing, and one turning a wrong 200 into a failure
// of kind check.
func TestHTTP2WorkloadDataAndChecks(t *testing.T) {
	const rows = 60
	for _, tc := range []struct {
		name  string
		tlsOn bool
		mode  []string
	}{
		{"h2 closed loop", true, []string{"--concurrency", "2"}},
		{"h2c closed loop", false, []string{"--concurrency", "2"}},
		{"h2c open loop", false, []string{"--concurrency", "2", "--rate", "600"}},
	} {
		tlsOn := tc.tlsOn
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			putRows := map[string]int{} // "id|name" -> requests
			seqs := map[string]int{}    // every request's {{seq}} -> requests
			putSeqs := map[string]bool{}
			var asked [][2]string // a get's {{answered:put}} and its own seq
			url := startH2(t, tlsOn, func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				mu.Lock()
				defer mu.Unlock()
				switch r.URL.Path {
				case "/put":
					var p struct {
						ID   string `json:"id"`
						Seq  int64  `json:"seq"`
						UUID string `json:"uuid"`
					}
					if err := json.Unmarshal(body, &p); err != nil || strconv.FormatInt(p.Seq, 10) != r.URL.Query().Get("seq") || len(p.UUID) != 36 {
						w.WriteHeader(http.StatusBadRequest)
						return
					}
					putRows[p.ID+"|"+r.Header.Get("X-Name")]++
					seqs[r.URL.Query().Get("seq")]++
					putSeqs[r.URL.Query().Get("seq")] = true
					w.Header().Set("Content-Type", "application/json")
					w.Write([]byte(`{"status":"ok"}`))
				case "/get":
					seqs[r.Header.Get("X-Seq")]++
					asked = append(asked, [2]string{r.URL.Query().Get("of"), r.Header.Get("X-Seq")})
					w.Write([]byte("ok")) // a 200 the kind's check fails
				}
			})
			dir := t.TempDir()
			var csv strings.Builder
			csv.WriteString("id,name\n")
			for i := range rows {
				fmt.Fprintf(&csv, "%d,name-%d\n", i, i)
			}
			workload := filepath.Join(dir, "w.toml")
			for name, text := range map[string]string{"rows.csv": csv.String(), "w.toml": `
[[request]]
name = "put"
weight = 2
method = "POST"
path = "/put?seq={{seq}}"
headers = ["X-Name: {{data.name}}", "Content-Type: application/json"]
body = '{"id":"{{data.id}}","seq":{{seq}},"uuid":"{{uuid}}"}'
data = "rows.csv"
data_policy = "once"
checks = ['json.status == "ok"', 'header[Content-Type] ~ json']

[[request]]
name = "get"
path = "/get?of={{answered:put}}"
headers = ["X-Seq: {{seq}}"]
checks = ['body contains "nope"']
`} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			jsonPath := filepath.Join(dir, "run.json")
			var out, errOut bytes.Buffer
			args := append([]string{"--url", url, "--http2", "--streams", "4", "--workload", workload,
				"--duration", "30", "--warmup", "0", "--max-errors", "1000000000", "--quiet", "--json", jsonPath}, tc.mode...)
			if tlsOn {
				args = append(args, "--insecure")
			}
			if code := run(args, &out, &errOut); code != exitOK {
				t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
			}
			res, err := result.ReadResult(jsonPath)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			for i := range rows {
				if n := putRows[fmt.Sprintf("%d|name-%d", i, i)]; n != 1 {
					t.Errorf("row %d was sent %d times, want once", i, n)
				}
			}
			if len(putRows) != rows {
				t.Errorf("the server saw %d distinct rows, want %d", len(putRows), rows)
			}
			for s, n := range seqs {
				if n != 1 {
					t.Errorf("{{seq}} %s sent %d times", s, n)
				}
			}
			referred := 0
			for _, a := range asked {
				switch {
				case putSeqs[a[0]]:
					referred++
				case a[0] != a[1]:
					t.Errorf("a get asked about %s, neither an answered put's seq nor its own (%s)", a[0], a[1])
				}
			}
			if referred == 0 {
				t.Errorf("no get of %d named an answered put", len(asked))
			}
			if len(res.Kinds) != 2 || res.Kinds[0].Name != "put" || res.Kinds[1].Name != "get" {
				t.Fatalf("kinds %+v", res.Kinds)
			}
			put, get := res.Kinds[0], res.Kinds[1]
			if put.Answered != rows || put.Failed != 0 || get.Answered != 0 || get.Failed == 0 {
				t.Errorf("put answered %d failed %d, get answered %d failed %d: want %d and 0, 0 and some",
					put.Answered, put.Failed, get.Answered, get.Failed, rows)
			}
			if res.ErrorsByKind["check"] != get.Failed || res.Answered != rows {
				t.Errorf("failed by check %d, answered %d: want %d and %d", res.ErrorsByKind["check"], res.Answered, get.Failed, rows)
			}
			if len(res.Checks) != 3 || res.Checks[0].Passed != rows || res.Checks[1].Passed != rows || res.Checks[2].Passed != 0 || res.Checks[2].Failed != get.Failed {
				t.Errorf("checks %+v", res.Checks)
			}
			if res.Due != res.Answered+res.Failed+res.Unfinished+res.Dropped || res.DurationS > 20 {
				t.Errorf("due %d, answered %d, failed %d, unfinished %d, dropped %d, %.1fs of 30",
					res.Due, res.Answered, res.Failed, res.Unfinished, res.Dropped, res.DurationS)
			}
			if !strings.Contains(strings.Join(res.Warnings, "\n"), "ran out of rows") {
				t.Errorf("no warning that the rows ran out: %q", res.Warnings)
			}
			for _, w := range res.Warnings {
				if strings.Contains(w, "mismatch") {
					t.Errorf("warning: %s", w)
				}
			}
		})
	}
}

// Request bodies past every window and frame, over h2 and h2c, static
// (--body-file of 1 and 4 MiB) and rendered (1 MiB between two {{seq}}):
// each arrives whole, as long as its content-length says, byte for byte.
func TestHTTP2LargeBodies(t *testing.T) {
	dir := t.TempDir()
	pattern := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + i%26)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		body []byte // as written to the file
		want func(got []byte) bool
	}{
		{"1 MiB", pattern(1 << 20), nil},
		{"4 MiB", pattern(4 << 20), nil},
		// The seq at both ends: a body that waited for a window and was
		// overwritten by the next request's would end with another.
		{"1 MiB rendered", append(append([]byte("{{seq}}:"), pattern(1<<20)...), ":{{seq}}"...), func(got []byte) bool {
			head, rest, _ := bytes.Cut(got, []byte(":"))
			mid, tail, _ := bytes.Cut(rest, []byte(":"))
			_, err := strconv.ParseUint(string(head), 10, 64)
			return err == nil && bytes.Equal(head, tail) && bytes.Equal(mid, pattern(1<<20))
		}},
	} {
		file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
		if err := os.WriteFile(file, tc.body, 0o644); err != nil {
			t.Fatal(err)
		}
		want := tc.want
		if want == nil {
			want = func(got []byte) bool { return bytes.Equal(got, tc.body) }
		}
		for _, tlsOn := range []bool{true, false} {
			t.Run(tc.name+map[bool]string{true: " h2", false: " h2c"}[tlsOn], func(t *testing.T) {
				var whole, broken atomic.Int64
				url := startH2(t, tlsOn, func(w http.ResponseWriter, r *http.Request) {
					got, err := io.ReadAll(r.Body)
					if err != nil || int64(len(got)) != r.ContentLength || !want(got) {
						broken.Add(1)
						w.WriteHeader(http.StatusBadRequest)
						return
					}
					whole.Add(1)
				})
				jsonPath := filepath.Join(t.TempDir(), "run.json")
				var out, errOut bytes.Buffer
				args := []string{"--url", url + "/up", "--http2", "--streams", "2", "--method", "POST", "--body-file", file,
					"--concurrency", "2", "--duration", "0.5", "--quiet", "--json", jsonPath,
					// A body of megabytes may take seconds on a loaded machine
					// under the race detector. No warm-up, so the first requests
					// are the window's, and a drain that waits for them (it ends
					// once nothing is in flight): the run always has answers.
					"--warmup", "0", "--drain", "60", "--timeout", "60"}
				if tlsOn {
					args = append(args, "--insecure")
				}
				if code := run(args, &out, &errOut); code != exitOK {
					t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
				}
				res, err := result.ReadResult(jsonPath)
				if err != nil {
					t.Fatal(err)
				}
				if broken.Load() != 0 || whole.Load() == 0 || res.Answered == 0 || res.Errors != 0 || res.StatusCodes["200"] != res.Answered {
					t.Errorf("the server read %d bodies whole and %d broken; answered %d, errors %v, statuses %v",
						whole.Load(), broken.Load(), res.Answered, res.ErrorsByKind, res.StatusCodes)
				}
			})
		}
	}
}

// Bad input with --http2 is refused at start as without it: one line
// naming it, exit 2, no load.
func TestHTTP2BadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--path", "/?id={{data.id}}"}, "no data file"},
		{[]string{"--header", "X-N: {{seq%0}}"}, "{{seq%0}}"},
		{[]string{"--body", "{{answered:put}}", "--method", "POST"}, "only in a workload"},
		{[]string{"--check", "body ~ ("}, "regular expression"},
		{[]string{"--pipeline", "3"}, "--pipeline with --http2"},
	} {
		var out, errOut bytes.Buffer
		code := run(append([]string{"--port", "1", "--http2"}, tc.args...), &out, &errOut)
		if code != exitUsage || strings.Count(errOut.String(), "\n") != 1 || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q: want %d and one line with %q", tc.args, code, errOut.String(), exitUsage, tc.want)
		}
	}
}

// Ramps over HTTP/2, h2 and h2c: the open loop's rate ramped with Poisson
// arrivals and a check that half the answers fail (a wrong 200), and the
// closed loop's connections ramped up and back to none. Every due request
// is accounted for, the stages add up to the run, the check's failures
// are failed with kind check, and the closed loop's ramp leaves no
// connection open.
func TestHTTP2Ramps(t *testing.T) {
	for _, tlsOn := range []bool{false, true} {
		var n atomic.Int64
		url := startH2(t, tlsOn, func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1)%2 == 0 {
				w.Write([]byte(`{"status":"error"}`))
				return
			}
			w.Write([]byte(`{"status":"ok"}`))
		})
		for _, ramp := range [][]string{
			{"--stages", "0.3s:0,0.5s:1000,0.3s:0", "--warmup", "0.3", "--arrival", "poisson", "--concurrency", "4"},
			{"--concurrency-stages", "0.4s:4,0.4s:0"},
		} {
			jsonPath := filepath.Join(t.TempDir(), "ramp.json")
			var out, errOut bytes.Buffer
			args := append([]string{"--url", url + "/ok", "--http2", "--streams", "4", "--check", `json.status == "ok"`,
				"--max-errors", "1000000000", "--quiet", "--json", jsonPath}, ramp...)
			if tlsOn {
				args = append(args, "--insecure")
			}
			if code := run(args, &out, &errOut); code != exitOK {
				t.Fatalf("tls %v %v: exit %d\n%s%s", tlsOn, ramp, code, out.String(), errOut.String())
			}
			res, err := result.ReadResult(jsonPath)
			if err != nil {
				t.Fatal(err)
			}
			var due int64
			for _, st := range res.Stages {
				due += st.Due
			}
			switch {
			case res.Protocol == "" || !strings.HasPrefix(res.Protocol, "h2"):
				t.Errorf("tls %v %v: protocol %q, want h2 or h2c", tlsOn, ramp, res.Protocol)
			case res.Due != res.Answered+res.Failed+res.Unfinished+res.Dropped || res.Answered == 0:
				t.Errorf("tls %v %v: due %d != answered %d + failed %d + unfinished %d + dropped %d", tlsOn, ramp, res.Due, res.Answered, res.Failed, res.Unfinished, res.Dropped)
			case len(res.Stages) < 2 || due != res.Due:
				t.Errorf("tls %v %v: stages %+v add up to %d due, the run has %d", tlsOn, ramp, res.Stages, due, res.Due)
			case res.ErrorsByKind["check"] == 0 || res.ErrorsByKind["check"] != res.Failed:
				t.Errorf("tls %v %v: failed %d, of which check %d: want the wrong 200s failed by the check", tlsOn, ramp, res.Failed, res.ErrorsByKind["check"])
			}
			if ramp[0] == "--concurrency-stages" {
				if k := len(res.Intervals); k == 0 || res.Intervals[k-1].OpenConnections != 0 {
					t.Errorf("tls %v: the connections' ramp ends at 0, yet %+v", tlsOn, res.Intervals)
				}
			}
		}
	}
}
