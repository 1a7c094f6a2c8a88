package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"weaseldb/loadtester/result"
)

// idServer answers every request 200 and counts, by the id query
// parameter, the requests it saw.
type idServer struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen map[string]int // guarded by mu
}

func startIDServer(t *testing.T, handler func(w http.ResponseWriter, r *http.Request)) *idServer {
	t.Helper()
	s := &idServer{seen: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen[r.URL.Query().Get("id")+"|"+r.Header.Get("X-Name")]++
		s.mu.Unlock()
		if handler != nil {
			handler(w, r)
			return
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *idServer) port() string { return strconv.Itoa(s.srv.Listener.Addr().(*net.TCPAddr).Port) }

func (s *idServer) counts() map[string]int {
	s.srv.Close() // every handler has returned
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen
}

// writeCSV writes a data file of rows id,name (i, name-i) and returns it.
func writeCSV(t *testing.T, rows int) string {
	var b strings.Builder
	b.WriteString("id,name\n")
	for i := range rows {
		fmt.Fprintf(&b, "%d,name-%d\n", i, i)
	}
	path := filepath.Join(t.TempDir(), "rows.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A CSV feeds requests: under --data-policy once every row goes to exactly
// one request, with its columns together in the path and a header, and
// the run ends when the rows run out, saying so, with every due request
// accounted for; in the open loop, a ramp and the closed loop alike (a
// stage the run never reached says so).
func TestDataOnceFeedsEachRowOnceThenEnds(t *testing.T) {
	const rows = 60
	for _, mode := range [][]string{{"--rate", "600", "--duration", "30"}, {"--stages", "0.5s:600,30s:600"}, {"--concurrency", "3", "--duration", "30"}} {
		t.Run(mode[0], func(t *testing.T) {
			s := startIDServer(t, nil)
			jsonPath := filepath.Join(t.TempDir(), "run.json")
			var out, errOut bytes.Buffer
			args := append([]string{"--url", "http://127.0.0.1:" + s.port() + "/ok?id={{data.id}}", "--header", "X-Name: {{data.name}}",
				"--data", writeCSV(t, rows), "--data-policy", "once", "--warmup", "0", "--quiet", "--json", jsonPath}, mode...)
			if code := run(args, &out, &errOut); code != exitOK {
				t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
			}
			seen := s.counts()
			for i := range rows {
				if n := seen[fmt.Sprintf("%d|name-%d", i, i)]; n != 1 {
					t.Errorf("row %d was sent %d times, want once", i, n)
				}
			}
			if len(seen) != rows {
				t.Errorf("the server saw %d distinct rows, want %d: %v", len(seen), rows, seen)
			}
			res, err := result.ReadResult(jsonPath)
			if err != nil {
				t.Fatal(err)
			}
			if res.Due != rows || res.Answered != rows || res.Interrupted {
				t.Errorf("due %d, answered %d, interrupted %v: want %d due and answered, not interrupted", res.Due, res.Answered, res.Interrupted, rows)
			}
			if res.DurationS > 20 {
				t.Errorf("the run lasted %.1fs of its 30: it did not end when the rows ran out", res.DurationS)
			}
			if !strings.Contains(strings.Join(res.Warnings, "\n"), "ran out of rows") || !strings.Contains(out.String(), "ran out of rows") {
				t.Errorf("no warning that the rows ran out: %q\n%s", res.Warnings, out.String())
			}
			if mode[0] == "--stages" && (len(res.Stages) != 2 || res.Stages[0].Due != rows || res.Stages[1].Unmeasured != "after the end") {
				t.Errorf("stages %+v: want every row in the first, the second never reached", res.Stages)
			}
		})
	}
}

// --data-policy loop takes the rows in order, wrapping: over a run every
// row is sent, none far more often than another.
func TestDataLoopWraps(t *testing.T) {
	s := startIDServer(t, nil)
	var out, errOut bytes.Buffer
	code := run([]string{"--url", "http://127.0.0.1:" + s.port() + "/ok?id={{data.id}}", "--header", "X-Name: {{data.name}}",
		"--data", writeCSV(t, 5), "--concurrency", "1", "--duration", "0.3", "--warmup", "0", "--quiet"}, &out, &errOut)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	seen := s.counts()
	lo, hi := 1<<30, 0
	for i := range 5 {
		n := seen[fmt.Sprintf("%d|name-%d", i, i)]
		lo, hi = min(lo, n), max(hi, n)
	}
	if len(seen) != 5 || lo < 2 || hi-lo > 1 {
		t.Errorf("rows sent %v: want all 5, each as often as the others within one (one connection, in order)", seen)
	}
}

// A workload's kinds each read their own data file and judge their own
// checks: a kind whose check fails has its requests failed with kind
// check, the other's pass, and the checks' rows name their kinds.
func TestWorkloadKindsHaveDataAndChecks(t *testing.T) {
	s := startIDServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"ok"}`))
	})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "users.csv"), []byte("user\nann\nbob\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	workload := filepath.Join(dir, "w.toml")
	if err := os.WriteFile(workload, []byte(`
[[request]]
name = "user"
path = "/u?id={{data.user}}"
data = "users.csv"
checks = ['json.status == "ok"']

[[request]]
name = "wrong"
path = "/w"
checks = ['body contains "nope"']
`), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonPath := filepath.Join(dir, "run.json")
	var out, errOut bytes.Buffer
	code := run([]string{"--port", s.port(), "--workload", workload, "--concurrency", "2", "--duration", "0.4", "--warmup", "0",
		"--max-errors", "1000000000", "--quiet", "--json", jsonPath}, &out, &errOut)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	res, err := result.ReadResult(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Checks) != 2 || strings.Join(res.Checks[0].Kinds, ",") != "user" || strings.Join(res.Checks[1].Kinds, ",") != "wrong" {
		t.Fatalf("checks %+v: want one per kind, each naming its kind", res.Checks)
	}
	user, wrong := res.Checks[0], res.Checks[1]
	if user.Failed != 0 || user.Passed == 0 || wrong.Passed != 0 || wrong.Failed == 0 {
		t.Errorf("checks %+v: want the user kind's always passed, the wrong kind's always failed", res.Checks)
	}
	if res.ErrorsByKind["check"] != wrong.Failed || res.Answered != user.Passed {
		t.Errorf("failed by check %d, answered %d; want %d and %d", res.ErrorsByKind["check"], res.Answered, wrong.Failed, user.Passed)
	}
	seen := s.counts()
	if seen["ann|"] == 0 || seen["bob|"] == 0 {
		t.Errorf("the user kind's rows were not both sent: %v", seen)
	}
}

// A bad data file, column or policy is refused at start: one line naming
// it, exit 2, no load.
func TestDataBadInput(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := file("good.csv", "id,name\n1,a\n")
	ragged := file("ragged.csv", "id,name\n1,a\n2\n")
	headerOnly := file("header.csv", "id,name\n")
	empty := file("empty.csv", "")
	latin1 := file("latin1.csv", "id\n\xe9t\xe9\n")
	dupColumn := file("dup.csv", "id,id\n1,2\n")
	badKindPolicy := file("policy.toml", "[[request]]\nname = \"a\"\npath = \"/{{data.id}}\"\ndata = \"good.csv\"\ndata_policy = \"sometimes\"\n")
	unknownKindColumn := file("column.toml", "[[request]]\nname = \"a\"\npath = \"/{{data.nope}}\"\ndata = \"good.csv\"\n")
	badKindCheck := file("check.toml", "[[request]]\nname = \"a\"\npath = \"/\"\nchecks = [\"status = 200\"]\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--path", "/{{data.id}}", "--data", filepath.Join(dir, "missing.csv")}, "--data: open"},
		{[]string{"--path", "/{{data.id}}", "--data", ragged}, "ragged.csv: line 3"},
		{[]string{"--path", "/{{data.id}}", "--data", headerOnly}, "header.csv"},
		{[]string{"--path", "/{{data.id}}", "--data", empty}, "empty.csv"},
		{[]string{"--path", "/{{data.id}}", "--data", latin1}, "not UTF-8"},
		{[]string{"--path", "/{{data.id}}", "--data", dupColumn}, "dup.csv"},
		{[]string{"--path", "/{{data.nope}}", "--data", good}, `no column "nope"`},
		{[]string{"--path", "/{{data.id}}"}, "{{data.id}}: no data file"},
		{[]string{"--path", "/{{data.id", "--data", good}, "no closing }}"},
		{[]string{"--path", "/", "--data", good}, "nothing reads it"},
		{[]string{"--path", "/{{data.id}}", "--data", good, "--data-policy", "twice"}, `--data-policy "twice"`},
		{[]string{"--data-policy", "once"}, "only with --data"},
		{[]string{"--workload", badKindPolicy}, "request[1].data_policy"},
		{[]string{"--workload", unknownKindColumn}, `no column "nope"`},
		{[]string{"--workload", badKindCheck}, "request[1].checks[1]"},
	} {
		var out, errOut bytes.Buffer
		code := run(append([]string{"--port", "1"}, tc.args...), &out, &errOut)
		if code != exitUsage || strings.Count(errOut.String(), "\n") != 1 || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q: want %d and one line with %q", tc.args, code, errOut.String(), exitUsage, tc.want)
		}
	}
}
