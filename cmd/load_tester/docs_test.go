package main

import (
	"bytes"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Docs that run: every load_tester command line in the code blocks of
// README.md and docs/load_tester.md is run against servers this test
// starts, shortened (a short --duration, no warm-up, low rates and few
// connections: the test checks that the line works, not what this machine
// can do), with the files it names (CA, CSV, outputs) made in a temporary
// directory and its target rewritten to the test's server. Each line is in
// docExamples with the exit statuses it may end with, or with the reason
// it cannot run here; a line in neither fails the test, so a new example
// must be handled.

var docFiles = []string{"README.md", "docs/load_tester.md"}

// docExample is what a documented command line is expected to do.
type docExample struct {
	exits []int  // allowed exit statuses (a threshold example may cross: 99)
	skip  string // why it is not run here ("" runs it)
	// inputs are files the line reads that no earlier line writes: each
	// made as a copy of one an earlier line wrote (name -> its source).
	inputs map[string]string
	// slowMachine, when the output says it, also allows exit 1: a verdict
	// on this machine's speed (a knee search on a loaded machine under the
	// race detector finds no rate), not on the documented line.
	slowMachine string
}

var ok0 = docExample{exits: []int{exitOK}}

// findRateExample searches for a knee: a shortened search on a loaded
// machine may find none (exit 1, saying so), which is the machine's result.
var findRateExample = docExample{exits: []int{exitOK}, slowMachine: "find-rate: no rate met the objective"}

// thresholdExample may cross its thresholds on a shortened run at low
// rates ("exit 99 if crossed", as the docs say).
var thresholdExample = docExample{exits: []int{exitOK, exitThreshold}}

var docExamples = map[string]docExample{
	"build/load_tester --host 127.0.0.1 --port 8080 --path /ok --concurrency 100 --duration 10 --json result.json":                                                        ok0,
	"build/load_tester --unix-socket weaseldb.sock --concurrency 2000 --requests-per-conn 500 --connect-threads 2 --network-threads 10 --duration 120 --stats-interval 1": ok0,
	"build/load_tester --url http://127.0.0.1:8080/ok --rate 20000 --duration 10 --warmup 2 --hdr-log ok.hlog":                                                            ok0,
	"build/load_tester --url http://127.0.0.1:8080 --workload testdata/workloads/mixed.toml --rate 5000 --duration 5":                                                     ok0,
	"build/load_tester --url http://127.0.0.1:8080/ok --rate-steps 10000x2x4 --warmup 1 --duration 5 --json steps.json":                                                   ok0,
	"build/load_tester --url http://127.0.0.1:8080/ok --find-rate --slo p99=1ms --warmup 1 --duration 3 --json knee.json":                                                 findRateExample,
	"build/load_tester --url http://127.0.0.1:8080/ok --threshold p99<5ms --threshold errors<0.1%":                                                                        thresholdExample,
	"build/load_tester --url http://127.0.0.1:8080/ok --stages 5s:0,30s:20000,1m:20000,10s:0 --warmup 5":                                                                  ok0,
	"build/load_tester --url http://127.0.0.1:8080/ok --concurrency-stages 10s:50,30s:200,10s:0":                                                                          ok0,
	"build/load_tester --url http://127.0.0.1:8080/ok --rate 10000 --arrival poisson --seed 7 --duration 10":                                                              ok0,
	"build/load_tester --url http://127.0.0.1:8080/ok --check status==200 --check body contains \"ok\" --threshold checks>99.9%":                                          thresholdExample,
	"build/load_tester --url http://127.0.0.1:8080/v1/status?request_id={{data.id}} --data ids.csv --data-policy once --rate 2000":                                        ok0,
	"build/load_tester html result.json -o run.html":                                                                                                                      ok0,
	// Two runs to compare: the first example's result, twice.
	"build/load_tester compare before.json after.json -o cmp.html":                                        {exits: []int{exitOK}, inputs: map[string]string{"before.json": "result.json", "after.json": "result.json"}},
	"build/load_tester --url https://127.0.0.1:8443/ok --ca ca.pem --duration 10":                         ok0,
	"build/load_tester --url https://127.0.0.1:8443/ok --ca ca.pem --http2 --concurrency 10 --streams 10": ok0,
	"build/load_tester --url http://127.0.0.1:8080/ok --duration 600 --metrics-addr 127.0.0.1:9464":       ok0,
	"build/load_tester --unix-socket rate_curve.sock --path /ok --concurrency 100 --requests-per-conn 500 --connect-threads 2 --network-threads 1 --quiet --find-rate --slo p99=1ms --find-rate-start 2910 --find-rate-max 218572 --find-rate-factor 1.5 --find-rate-min 364 --find-rate-precision 0.1 --find-rate-steps 12 --find-rate-time 60 --warmup 0.5 --duration 2 --json knee.json": findRateExample,
	"build/load_tester --url http://127.0.0.1:8080/v1/commit --method POST --header Content-Type: application/json --body {\"request_id\":\"{{uuid}}\",\"leader_id\":\"l\",\"read_version\":0,\"operations\":[]} --rate 2000 --duration 5":                                                                                                                                                  ok0,
	"build/load_tester --url https://127.0.0.1:8443/ok --ca ca.pem --tls-resume --requests-per-conn 100 --duration 10":                 ok0,
	"build/load_tester --url https://127.0.0.1:8443/ok --ca ca.pem --http2 --concurrency 10 --streams 10 --duration 10":                ok0,
	"build/load_tester --url http://127.0.0.1:8080/ok --http2 --streams 16 --duration 10":                                              ok0,
	"build/load_tester --url http://127.0.0.1:8080/ok --duration 10 --threshold p99<5ms --threshold errors<0.1% --threshold rps>10000": thresholdExample,
	// Against the stall server (port 9000 in the doc): the requests it
	// holds end the run over --max-errors 0, as the doc shows.
	"build/load_tester --host 127.0.0.1 --port 9000 --rate 1000 --duration 6 --concurrency 50 --timeout 30 --json r.json": {exits: []int{exitFailure}},
	"build/load_tester --unix-socket rate_curve.sock --path /ok --concurrency 100 --requests-per-conn 500 --connect-threads 2 --network-threads 1 --quiet --find-rate --slo p99=1ms --find-rate-start 2910 --find-rate-max 218572 --find-rate-factor 1.5 --find-rate-min 364 --find-rate-precision 0.1 --find-rate-steps 12 --find-rate-time 60 --warmup 0.5 --duration 2 --json knee.json --hdr-log knee.hlog": findRateExample,
	"build/load_tester --url http://127.0.0.1:8080/v1/status?request_id={{data.id}} --header X-Tenant: {{data.tenant}} --data ids.csv --data-policy once --rate 2000":                                                                                                                                                                                                                                           ok0,
	"build/load_tester --unix-socket rate_curve.sock --path /ok --concurrency 100 --requests-per-conn 500 --connect-threads 2 --network-threads 1 --quiet --rate-steps 2910,7290,14600,36400,72900,109000,146000 --slo p99=1ms --warmup 0.5 --duration 2 --json rate_curve.json --hdr-log rate_curve.hlog":                                                                                                      ok0,
	"build/load_tester --url http://127.0.0.1:18080 --workload testdata/workloads/mixed.toml --rate 5000 --duration 5 --warmup 1 --json mixed.json":                                                                                                                                                                                                                                                             ok0,
	"build/load_tester --url http://127.0.0.1:18081/ok --duration 2 --concurrency 10 --quiet --threshold p99<5ms --threshold rps>1e6":                                                                                                                                                                                                                                                                           {exits: []int{exitThreshold}},
}

// docCommand is one load_tester command line of a doc.
type docCommand struct {
	where string   // file:line
	args  []string // the words after the program
	key   string   // the program and its words, joined by spaces: docExamples' key
}

func TestDocsCommandsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every documented load_tester command")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var cmds []docCommand
	for _, f := range docFiles {
		cmds = append(cmds, docCommands(t, filepath.Join(root, f), f)...)
	}
	if len(cmds) < 10 {
		t.Fatalf("found only %d load_tester command lines in %v: the extraction is broken", len(cmds), docFiles)
	}
	env := startDocServers(t, root)
	seen := map[string]bool{}
	for _, c := range cmds {
		ex, known := docExamples[c.key]
		switch {
		case !known:
			t.Errorf("%s: a load_tester command line this test does not know; add it to docExamples (with the exit statuses it may end with, or why it cannot run here):\n%q", c.where, c.key)
			continue
		case ex.skip != "":
			t.Logf("%s: skipped: %s", c.where, ex.skip)
			continue
		case seen[c.key]:
			continue // the same line in both docs runs once
		}
		seen[c.key] = true
		env.makeInputs(t, ex.inputs)
		args := env.shorten(t, c.args)
		var out, errOut bytes.Buffer
		code := run(args, &out, &errOut)
		if code == exitFailure && ex.slowMachine != "" && strings.Contains(out.String()+errOut.String(), ex.slowMachine) {
			t.Logf("%s: exit 1 on this machine: %s", c.where, ex.slowMachine)
			continue
		}
		if !slices.Contains(ex.exits, code) {
			t.Errorf("%s: exit %d, want one of %v\n  doc:  %s\n  ran:  %q\n%s%s", c.where, code, ex.exits, c.key, args, tail(out.String(), 15), errOut.String())
		}
	}
	for key := range docExamples {
		if !seen[key] && docExamples[key].skip == "" {
			t.Errorf("docExamples has a line no doc holds any more (remove it): %q", key)
		}
	}
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

var fence = regexp.MustCompile("(?m)^ *```")

// docCommands extracts the load_tester command lines from the fenced code
// blocks of a markdown file: a line (backslash continuations joined, a
// leading "$ " prompt dropped) whose first word is build/load_tester, or
// load_tester followed by a flag or a subcommand. Output lines that start
// with "load_tester:" or a table's "load_tester   N req/s" are not commands.
func docCommands(t *testing.T, path, name string) []docCommand {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []docCommand
	lines := strings.Split(string(data), "\n")
	inBlock := false
	for i := 0; i < len(lines); i++ {
		if fence.MatchString(lines[i]) {
			inBlock = !inBlock
			continue
		}
		if !inBlock {
			continue
		}
		start := i
		line := lines[i]
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, "\\") + " " + strings.TrimSpace(lines[i])
		}
		line = strings.TrimPrefix(strings.TrimSpace(line), "$ ")
		words, err := shellWords(line)
		if err != nil || len(words) == 0 {
			continue
		}
		prog := words[0]
		isCmd := prog == "build/load_tester" ||
			prog == "load_tester" && len(words) > 1 && (strings.HasPrefix(words[1], "-") || slices.Contains([]string{"html", "merge", "compare"}, words[1]))
		if !isCmd {
			continue
		}
		cmds = append(cmds, docCommand{where: fmt.Sprintf("%s:%d", name, start+1), args: words[1:], key: strings.Join(words, " ")})
	}
	return cmds
}

// shellWords splits a command line as a POSIX shell would for the docs'
// examples: single and double quotes, backslash escapes, and the line
// ending at an unquoted comment (#) or command separator (; & |).
func shellWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unclosed ' in %q", line)
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(line[i])
			}
			if i == len(line) {
				return nil, fmt.Errorf("unclosed \" in %q", line)
			}
			inWord = true
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case (c == '#' && !inWord) || c == ';' || c == '&' || c == '|':
			if inWord {
				words = append(words, cur.String())
			}
			return words, nil
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

func TestShellWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{`a --b 'p99<5ms' # exit 99`, []string{"a", "--b", "p99<5ms"}},
		{`a --check 'body contains "ok"'`, []string{"a", "--check", `body contains "ok"`}},
		{`a --x "say \"hi\"" ; echo "exit status $?"`, []string{"a", "--x", `say "hi"`}},
		{`a b&`, []string{"a", "b"}},
		{`a http://h/x#frag`, []string{"a", "http://h/x#frag"}},
	} {
		got, err := shellWords(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("shellWords(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := shellWords(`a 'open`); err == nil {
		t.Error("an unclosed quote was accepted")
	}
}

// docEnv is what the rewritten commands run against.
type docEnv struct {
	root, dir  string
	plain      string // host:port of an HTTP/1.1 and h2c server
	stall      string // host:port of a server that answers briefly, then holds every request (the doc's port 9000)
	tlsAddr    string // host:port of an HTTPS server (h2 by ALPN)
	socket     string // a unix socket served like plain
	ca         string // the TLS server's certificate
	csv        string // ids.csv: columns id and tenant
	freeMetric func() string
}

func startDocServers(t *testing.T, root string) *docEnv {
	t.Helper()
	dir := t.TempDir()
	env := &docEnv{root: root, dir: dir}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write([]byte(`{"status":"ok"}`))
	})
	protocols := func(h1, h2, h2c bool) *http.Protocols {
		p := new(http.Protocols)
		p.SetHTTP1(h1)
		p.SetHTTP2(h2)
		p.SetUnencryptedHTTP2(h2c)
		return p
	}
	plain := httptest.NewUnstartedServer(ok)
	plain.Config.Protocols = protocols(true, false, true)
	plain.Start()
	t.Cleanup(plain.Close)
	env.plain = plain.Listener.Addr().String()

	// The doc's stallserver, shortened: it answers for 100 ms after the
	// first request, then holds every request until its client goes.
	var first atomic.Int64
	stall := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now().UnixNano()
		first.CompareAndSwap(0, now)
		if now-first.Load() > int64(100*time.Millisecond) {
			<-r.Context().Done()
			return
		}
		w.Write([]byte("ok"))
	}))
	stall.Config.ErrorLog = log.New(io.Discard, "", 0)
	stall.Start()
	t.Cleanup(func() { stall.CloseClientConnections(); stall.Close() })
	env.stall = stall.Listener.Addr().String()

	tlsSrv := httptest.NewUnstartedServer(ok)
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0)
	tlsSrv.EnableHTTP2 = true
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	env.tlsAddr = tlsSrv.Listener.Addr().String()
	env.ca = filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(env.ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}

	env.socket = filepath.Join(dir, "weaseldb.sock")
	ln, err := net.Listen("unix", env.socket)
	if err != nil {
		t.Fatal(err)
	}
	unixSrv := &http.Server{Handler: ok, ErrorLog: log.New(io.Discard, "", 0)}
	go unixSrv.Serve(ln)
	t.Cleanup(func() { unixSrv.Close() })

	var rows strings.Builder
	rows.WriteString("id,tenant\n")
	for i := range 200 {
		fmt.Fprintf(&rows, "doc-example-request-%05d,tenant-%d\n", i, i%3)
	}
	env.csv = filepath.Join(dir, "ids.csv")
	if err := os.WriteFile(env.csv, []byte(rows.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	env.freeMetric = func() string { return freeAddr(t) }
	return env
}

// Caps that keep a documented run short and within what a loaded 2-CPU
// machine sustains: the line's shape is kept, its size is not.
const (
	docDuration    = "0.3"
	docMaxRate     = 1000
	docMaxConns    = 20
	docMaxThreads  = 2
	docStageLength = "0.15s"
)

// shorten rewrites a documented command's words to run here.
func (e *docEnv) shorten(t *testing.T, words []string) []string {
	t.Helper()
	if len(words) > 0 && !strings.HasPrefix(words[0], "-") {
		return e.subcommand(words)
	}
	var out []string
	has := map[string]bool{}
	for i := 0; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "--") || i+1 == len(words) || strings.HasPrefix(words[i+1], "--") {
			has[w] = true
			out = append(out, w) // a boolean flag or a positional word
			continue
		}
		v := words[i+1]
		i++
		has[w] = true
		out = append(out, w, e.rewrite(t, w, v))
	}
	if !has["--quiet"] {
		out = append(out, "--quiet")
	}
	if !has["--duration"] && !has["--stages"] && !has["--concurrency-stages"] {
		out = append(out, "--duration", docDuration)
	}
	if has["--find-rate"] {
		for flag, v := range map[string]string{"--find-rate-repeats": "1", "--find-rate-steps": "3", "--find-rate-max": strconv.Itoa(docMaxRate)} {
			if !has[flag] {
				out = append(out, flag, v)
			}
		}
		if !has["--find-rate-start"] {
			out = append(out, "--find-rate-start", "200")
		}
	}
	return out
}

// rewrite is a flag's value as the shortened run takes it.
func (e *docEnv) rewrite(t *testing.T, flag, v string) string {
	switch flag {
	case "--url":
		return e.target(t, v)
	case "--host":
		host, _, _ := net.SplitHostPort(e.plain)
		return host
	case "--port":
		addr := e.plain
		if v == "9000" {
			addr = e.stall
		}
		_, port, _ := net.SplitHostPort(addr)
		return port
	case "--unix-socket":
		return e.socket
	case "--ca":
		return e.ca
	case "--data":
		return e.csv
	case "--workload":
		return filepath.Join(e.root, v)
	case "--json", "--hdr-log", "--html", "--vegeta":
		return filepath.Join(e.dir, filepath.Base(v))
	case "--metrics-addr":
		return e.freeMetric()
	case "--duration":
		return docDuration
	case "--warmup":
		return "0"
	case "--stats-interval":
		return "0.1"
	case "--rate", "--find-rate-start":
		return capInt(t, v, docMaxRate)
	case "--find-rate-max":
		return strconv.Itoa(docMaxRate)
	case "--find-rate-min":
		return "50"
	case "--find-rate-steps":
		return "3"
	case "--find-rate-time":
		return "5"
	case "--concurrency":
		return capInt(t, v, docMaxConns)
	case "--network-threads", "--connect-threads":
		return capInt(t, v, docMaxThreads)
	case "--stages":
		return stagesCapped(t, v, docMaxRate)
	case "--concurrency-stages":
		return stagesCapped(t, v, docMaxConns)
	case "--rate-steps":
		return rateStepsCapped(t, v)
	case "--slo":
		return sloLoosened(v)
	}
	return v
}

// target points a documented URL at the test's server of its scheme,
// keeping its path and query as typed.
func (e *docEnv) target(t *testing.T, u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		t.Fatalf("documented --url %q has no scheme", u)
	}
	hostPort, path := rest, ""
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		hostPort, path = rest[:i], rest[i:]
	}
	_ = hostPort
	addr := e.plain
	if scheme == "https" {
		addr = e.tlsAddr
	}
	return scheme + "://" + addr + path
}

// makeInputs copies results earlier lines wrote to the names a line reads.
func (e *docEnv) makeInputs(t *testing.T, inputs map[string]string) {
	for name, from := range inputs {
		data, err := os.ReadFile(filepath.Join(e.dir, from))
		if err != nil {
			t.Fatalf("input %s: an earlier line should have written %s: %v", name, from, err)
		}
		if err := os.WriteFile(filepath.Join(e.dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// subcommand rewrites the file arguments of html/merge/compare into the
// test's directory, where earlier examples wrote their results.
func (e *docEnv) subcommand(words []string) []string {
	out := []string{words[0]}
	for _, w := range words[1:] {
		if strings.HasPrefix(w, "-") {
			out = append(out, w)
			continue
		}
		out = append(out, filepath.Join(e.dir, filepath.Base(w)))
	}
	return out
}

// sloLoosened keeps each objective's percentile with a limit a loaded
// machine meets (1s): a documented 1 ms objective is this machine's
// result, not the line's, and a search that finds no rate exits 1.
func sloLoosened(v string) string {
	var objs []string
	for _, o := range strings.Split(v, ",") {
		p, _, _ := strings.Cut(o, "=")
		objs = append(objs, p+"=1s")
	}
	return strings.Join(objs, ",")
}

func capInt(t *testing.T, v string, most int) string {
	n, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("documented value %q is not a number", v)
	}
	return strconv.Itoa(int(min(n, float64(most))))
}

// stagesCapped keeps each DURATION:TARGET stage, shortened and capped.
func stagesCapped(t *testing.T, v string, most int) string {
	var stages []string
	for _, s := range strings.Split(v, ",") {
		_, target, ok := strings.Cut(s, ":")
		if !ok {
			t.Fatalf("documented stage %q has no target", s)
		}
		stages = append(stages, docStageLength+":"+capInt(t, target, most))
	}
	return strings.Join(stages, ",")
}

// rateStepsCapped keeps the form (a list, or STARTxFACTORxCOUNT) with two
// low steps.
func rateStepsCapped(t *testing.T, v string) string {
	if parts := strings.Split(v, "x"); len(parts) == 3 {
		return capInt(t, parts[0], docMaxRate/4) + "x" + parts[1] + "x2"
	}
	list := strings.Split(v, ",")
	if len(list) > 2 {
		list = list[:2]
	}
	for i, r := range list {
		list[i] = capInt(t, r, docMaxRate)
	}
	return strings.Join(list, ",")
}
