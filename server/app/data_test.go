package app

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"weaseldb/server/config"
)

// client is one keep-alive connection speaking to the data routes.
type client struct {
	c  net.Conn
	br *bufio.Reader
}

func dialClient(t *testing.T, network, addr string) *client {
	t.Helper()
	c, err := net.DialTimeout(network, addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(60 * time.Second))
	t.Cleanup(func() { c.Close() })
	return &client{c: c, br: bufio.NewReader(c)}
}

// do sends one request and reads its answer (safe from any goroutine).
func (cl *client) do(method, target, body string) (int, string, error) {
	req := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", method, target, len(body), body)
	if _, err := io.WriteString(cl.c, req); err != nil {
		return 0, "", err
	}
	resp, err := http.ReadResponse(cl.br, nil)
	if err != nil {
		return 0, "", err
	}
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func (cl *client) mustDo(t *testing.T, method, target, body string) (int, map[string]any) {
	t.Helper()
	code, text, err := cl.do(method, target, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("%s %s: %d %q is not a JSON object: %v", method, target, code, text, err)
	}
	return code, m
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func writeOp(k, v string) string {
	return fmt.Sprintf(`{"type":"write","key":%q,"value":%q}`, b64(k), b64(v))
}

func commitBody(id string, readVersion int64, pre, ops []string) string {
	idField := ""
	if id != "" {
		idField = fmt.Sprintf(`"request_id":%q,`, id)
	}
	return fmt.Sprintf(`{%s"read_version":%d,"preconditions":[%s],"operations":[%s]}`,
		idField, readVersion, strings.Join(pre, ","), strings.Join(ops, ","))
}

func pointRead(k string) string { return fmt.Sprintf(`{"type":"point_read","key":%q}`, b64(k)) }

func rangeRead(b, e string) string {
	return fmt.Sprintf(`{"type":"range_read","begin":%q,"end":%q}`, b64(b), b64(e))
}

func version(m map[string]any) int64 { v, _ := m["version"].(float64); return int64(v) }

// reqID makes a request id long enough for min_request_id_length (20).
func reqID(name string) string { return name + "-" + strings.Repeat("x", max(0, 20-len(name))) }

func networks(ts *testServer) map[string]string {
	return map[string]string{"tcp": ts.tcpAddr, "unix": ts.unixPath}
}

func TestCommitsAndConflicts(t *testing.T) {
	ts := startServer(t, nil)
	for network, addr := range networks(ts) {
		t.Run(network, func(t *testing.T) {
			cl := dialClient(t, network, addr)
			key := network + "/k"
			code, m := cl.mustDo(t, "POST", "/v1/commit", commitBody("", 0, nil, []string{writeOp(key, "v1")}))
			if code != 200 || m["status"] != "committed" {
				t.Fatalf("first write: %d %v", code, m)
			}
			v1 := version(m)
			// Read at v1-1: the write at v1 conflicts.
			code, m = cl.mustDo(t, "POST", "/v1/commit", commitBody("", v1-1, []string{pointRead("other"), pointRead(key)}, []string{writeOp(key, "v2")}))
			conflict, _ := m["conflict"].(map[string]any)
			if code != 409 || m["status"] != "not_committed" || m["reason"] != "conflict" || conflict["index"] != 1.0 || conflict["key"] != b64(key) {
				t.Fatalf("stale point read: %d %v", code, m)
			}
			// The same range read conflicts; at read_version v1 nothing does.
			code, m = cl.mustDo(t, "POST", "/v1/commit", commitBody("", v1-1, []string{rangeRead(network, network+"0")}, nil))
			if code != 409 || m["reason"] != "conflict" {
				t.Fatalf("stale range read: %d %v", code, m)
			}
			code, m = cl.mustDo(t, "POST", "/v1/commit", commitBody("", v1, []string{pointRead(key), rangeRead(network, network+"0")}, []string{writeOp(key, "v3")}))
			if code != 200 || m["status"] != "committed" || version(m) <= v1 {
				t.Fatalf("fresh read: %d %v", code, m)
			}
			last := version(m)
			code, m = cl.mustDo(t, "POST", "/v1/commit", commitBody("", last+100, []string{pointRead(key)}, nil))
			if code != 409 || m["reason"] != "read_version_in_future" {
				t.Fatalf("future read_version: %d %v", code, m)
			}
			code, m = cl.mustDo(t, "GET", "/v1/version", "")
			if code != 200 || version(m) != last+1 {
				t.Fatalf("version: %d %v, want %d", code, m, last+1)
			}
		})
	}
}

func TestDuplicateRequestIDs(t *testing.T) {
	ts := startServer(t, nil)
	cl := dialClient(t, "unix", ts.unixPath)
	id := reqID("dup")
	body := commitBody(id, 0, nil, []string{writeOp("d", "1")})
	_, first := cl.mustDo(t, "POST", "/v1/commit", body)
	code, again := cl.mustDo(t, "POST", "/v1/commit", body)
	if code != 200 || again["duplicate"] != true || version(again) != version(first) || again["request_id"] != id {
		t.Fatalf("duplicate: %d %v (first %v)", code, again, first)
	}
	// A refused commit's duplicate is refused too, and applies nothing.
	bad := reqID("dup-refused")
	refused := commitBody(bad, 0, []string{pointRead("d")}, []string{writeOp("d", "2")})
	code, m := cl.mustDo(t, "POST", "/v1/commit", refused)
	if code != 409 {
		t.Fatalf("conflict: %d %v", code, m)
	}
	code, m2 := cl.mustDo(t, "POST", "/v1/commit", refused)
	if code != 409 || m2["duplicate"] != true || version(m2) != version(m) {
		t.Fatalf("refused duplicate: %d %v", code, m2)
	}
	for _, tc := range []struct {
		id, status string
		version    int64
	}{{id, "committed", version(first)}, {bad, "not_committed", version(m)}, {reqID("never"), "not_found", 0}} {
		code, st := cl.mustDo(t, "GET", "/v1/status?request_id="+tc.id, "")
		if code != 200 || st["status"] != tc.status || version(st) != tc.version {
			t.Errorf("status of %q: %d %v, want %s at %d", tc.id, code, st, tc.status, tc.version)
		}
	}
}

// Retention keeps an id until it is past both limits: with 5 versions and
// an hour, 10 commits later it is still known; a policy of 2 versions and
// 1 second forgets it once both have passed.
func TestStatusAcrossRetention(t *testing.T) {
	ts := startServer(t, func(c *config.Config) { c.Commit.RequestIDRetentionVersions = 5 })
	cl := dialClient(t, "tcp", ts.tcpAddr)
	old := reqID("old")
	_, m := cl.mustDo(t, "POST", "/v1/commit", commitBody(old, 0, nil, []string{writeOp("r", "0")}))
	oldVersion := version(m)
	status := func(id string, minVersion int64) map[string]any {
		t.Helper()
		_, st := cl.mustDo(t, "GET", fmt.Sprintf("/v1/status?request_id=%s&min_version=%d", id, minVersion), "")
		return st
	}
	for i := 0; i < 10; i++ {
		cl.mustDo(t, "POST", "/v1/commit", commitBody(reqID(fmt.Sprint("new", i)), 0, nil, []string{writeOp("r", fmt.Sprint(i))}))
	}
	if st := status(old, 0); st["status"] != "committed" || version(st) != oldVersion {
		t.Fatalf("past retention_versions, within the hour: %v", st)
	}
	// An id unknown from a min_version still kept is certainly not there.
	_, v := cl.mustDo(t, "GET", "/v1/version", "")
	if st := status(reqID("unknown"), version(v)); st["status"] != "not_found" {
		t.Fatalf("unknown id from the current version: %v", st)
	}
	// A retention policy narrows what is kept: 2 versions and 1 second.
	if code, p := cl.mustDo(t, "PUT", "/v1/retention/narrow", `{"versions": 2, "seconds": 1}`); code != 201 {
		t.Fatalf("put policy: %d %v", code, p)
	}
	time.Sleep(1100 * time.Millisecond)
	for i := 0; i < 3; i++ {
		cl.mustDo(t, "POST", "/v1/commit", commitBody("", 0, nil, []string{writeOp("r", fmt.Sprint(i))}))
	}
	st := status(old, 0)
	if st["status"] != "log_truncated" || st["reason"] != "retention" || st["oldest_version"].(float64) <= float64(oldVersion) {
		t.Fatalf("past both limits of the policy: %v", st)
	}
	// The subscription log is bounded by the same limits.
	code, text, err := cl.do("GET", fmt.Sprintf("/v1/subscribe?from_version=%d", oldVersion), "")
	if err != nil || code != 410 || !strings.Contains(text, "log_truncated") {
		t.Fatalf("subscribe from a dropped version: %d %s %v", code, text, err)
	}
}

// The sequence, for every combination of one limit passed and the
// other not: retention of 5 versions (config) and 1 second (a policy; the
// config's minimum is an hour). The retry after 6 more commits, or after
// the second, is answered with the first outcome and applies nothing; past
// both limits it is applied again, as the client's retention chose.
func TestRetryWithinRetentionIsNeverApplied(t *testing.T) {
	for _, c := range []struct {
		name          string
		commits       int  // empty commits between the first attempt and the retry
		wait          bool // wait past the 1 s policy
		wantDuplicate bool
	}{
		{"versions passed, age not", 6, false, true},
		{"age passed, versions not", 2, true, true},
		{"both passed", 6, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := startServer(t, func(cfg *config.Config) {
				cfg.Commit.RequestIDRetentionHours = 1
				cfg.Commit.RequestIDRetentionVersions = 5
			})
			cl := dialClient(t, "unix", ts.unixPath)
			if c.wait {
				cl.mustDo(t, "PUT", "/v1/retention/short", `{"versions": 5, "seconds": 1}`)
			}
			const id = "retry-after-6-commits-0001"
			body := `{"request_id":"` + id + `","operations":[{"type":"write","key":"Y291bnRlcg==","value":"MQ=="}]}`
			_, first := cl.mustDo(t, "POST", "/v1/commit", body)
			if first["status"] != "committed" || version(first) != 1 {
				t.Fatalf("first: %v", first)
			}
			for range c.commits {
				cl.mustDo(t, "POST", "/v1/commit", `{"operations":[]}`)
			}
			if c.wait {
				time.Sleep(1100 * time.Millisecond)
			}
			_, st := cl.mustDo(t, "GET", "/v1/status?request_id="+id, "")
			_, retry := cl.mustDo(t, "POST", "/v1/commit", body)
			_, v := cl.mustDo(t, "GET", "/v1/version", "")
			if c.wantDuplicate {
				if st["status"] != "committed" || retry["duplicate"] != true || version(retry) != 1 || version(v) != int64(1+c.commits) {
					t.Fatalf("status %v, retry %v, version %v: want the first outcome and no new version", st, retry, v)
				}
				return
			}
			if st["status"] != "log_truncated" || retry["duplicate"] == true || version(retry) != int64(2+c.commits) {
				t.Fatalf("status %v, retry %v: want log_truncated, then applied again", st, retry)
			}
		})
	}
}

// A status answer stays true: once /v1/status said not_found for an id, a
// commit with that id that arrives later (sent before the status request,
// delayed) is refused and applies nothing.
func TestNotFoundBansTheLateCommit(t *testing.T) {
	ts := startServer(t, nil)
	asker := dialClient(t, "tcp", ts.tcpAddr)
	late := dialClient(t, "unix", ts.unixPath)
	id := reqID("late-commit")
	_, st := asker.mustDo(t, "GET", "/v1/status?request_id="+id, "")
	if st["status"] != "not_found" {
		t.Fatalf("status: %v", st)
	}
	code, text, err := late.do("POST", "/v1/commit", commitBody(id, 0, nil, []string{writeOp("late", "1")}))
	want := `{"status":"not_committed","reason":"request_id_banned","request_id":"` + id + `"}`
	if err != nil || code != 409 || text != want {
		t.Fatalf("late commit: %d %s %v; want 409 %s", code, text, err, want)
	}
	if _, v := asker.mustDo(t, "GET", "/v1/version", ""); version(v) != 0 {
		t.Fatalf("the refused commit took a version: %v", v)
	}
	if _, st := asker.mustDo(t, "GET", "/v1/status?request_id="+id, ""); st["status"] != "not_found" {
		t.Fatalf("status after the refusal: %v", st)
	}
	// Another id is unaffected.
	if code, m := late.mustDo(t, "POST", "/v1/commit", commitBody(reqID("other"), 0, nil, nil)); code != 200 {
		t.Fatalf("other id: %d %v", code, m)
	}
}

// At commit.max_request_ids the oldest ids are dropped although within
// retention. That shows (status says why, the metrics count it), and a
// retry that the server can no longer recognise is refused, not applied.
func TestRequestIDCap(t *testing.T) {
	ts := startServer(t, func(c *config.Config) { c.Commit.MaxRequestIDs = config.MinMaxRequestIDs })
	cl := dialClient(t, "unix", ts.unixPath)
	first := commitBody(reqID("capped-0"), 0, nil, []string{writeOp("capped", "0")})
	cl.mustDo(t, "POST", "/v1/commit", first)
	for i := 1; i <= config.MinMaxRequestIDs; i++ {
		if code, m := cl.mustDo(t, "POST", "/v1/commit", commitBody(reqID(fmt.Sprint("capped-", i)), int64(i), nil, nil)); code != 200 {
			t.Fatalf("commit %d: %d %v", i, code, m)
		}
	}
	code, text, err := cl.do("POST", "/v1/commit", first)
	want := `{"status":"not_committed","reason":"request_id_unverifiable","min_read_version":1,"request_id":"` + reqID("capped-0") + `"}`
	if err != nil || code != 409 || text != want {
		t.Fatalf("retry of a dropped id: %d %s %v; want 409 %s", code, text, err, want)
	}
	if _, st := cl.mustDo(t, "GET", "/v1/status?request_id="+reqID("capped-0"), ""); st["status"] != "log_truncated" || st["reason"] != "max_request_ids" {
		t.Fatalf("status of a dropped id: %v", st)
	}
	// A new commit whose read_version proves it is new is accepted.
	if code, m := cl.mustDo(t, "POST", "/v1/commit", commitBody(reqID("fresh"), 1, nil, nil)); code != 200 {
		t.Fatalf("fresh commit reading version 1: %d %v", code, m)
	}
	_, metricsText, _ := cl.do("GET", "/metrics", "")
	for _, want := range []string{"weaseldb_request_ids_dropped_by_cap_total 2", "weaseldb_commits_refused_unverifiable_total 1",
		fmt.Sprintf("weaseldb_request_ids_max %d", config.MinMaxRequestIDs), fmt.Sprintf("weaseldb_request_ids_remembered %d", config.MinMaxRequestIDs)} {
		if !strings.Contains(metricsText, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
	// The ids' memory in bytes: at least a 32-byte record per id held.
	if m := regexp.MustCompile(`(?m)^weaseldb_request_ids_bytes (\d+)$`).FindStringSubmatch(metricsText); m == nil {
		t.Errorf("metrics lack weaseldb_request_ids_bytes")
	} else if b, _ := strconv.Atoi(m[1]); b < 32*config.MinMaxRequestIDs {
		t.Errorf("weaseldb_request_ids_bytes %d for %d ids", b, config.MinMaxRequestIDs)
	} else {
		t.Logf("weaseldb_request_ids_bytes %d", b)
	}
}

// A duplicate of a refused commit replays every field of its answer.
func TestDuplicateReplaysTheWholeConflict(t *testing.T) {
	ts := startServer(t, nil)
	cl := dialClient(t, "tcp", ts.tcpAddr)
	cl.mustDo(t, "POST", "/v1/commit", commitBody("", 0, nil, []string{writeOp("m", "1")}))
	body := commitBody(reqID("conflicted"), 0, []string{pointRead("zz"), rangeRead("a", "n")}, []string{writeOp("m", "2")})
	code, original, err := cl.do("POST", "/v1/commit", body)
	if err != nil || code != 409 || !strings.Contains(original, `"conflict":{"index":1,"type":"range_read","begin":"YQ==","end":"bg=="}`) {
		t.Fatalf("original: %d %s %v", code, original, err)
	}
	code, again, err := cl.do("POST", "/v1/commit", body)
	if err != nil || code != 409 || again != strings.TrimSuffix(original, "}")+`,"duplicate":true}` {
		t.Fatalf("duplicate: %d %s %v\noriginal:  %s", code, again, err, original)
	}
	_, st := cl.mustDo(t, "GET", "/v1/status?request_id="+reqID("conflicted"), "")
	if c, _ := st["conflict"].(map[string]any); st["status"] != "not_committed" || c["type"] != "range_read" || c["begin"] != "YQ==" {
		t.Fatalf("status: %v", st)
	}
}

// The smaller defects, one row each: what the server answers, and whether
// the connection stays open.
func TestRouteDefects(t *testing.T) {
	ts := startServer(t, nil)
	for _, tc := range []struct {
		name, method, target, body string
		code                       int
		want                       string // the exact body
		closes                     bool
	}{
		{"malformed escape in status", "GET", "/v1/status?request_id=%zz", "", 400,
			`{"error":"query: malformed percent-escape at offset 11: '%' must be followed by two hex digits"}`, true},
		{"malformed escape in subscribe", "GET", "/v1/subscribe?from_version=1%", "", 400,
			`{"error":"query: malformed percent-escape at offset 14: '%' must be followed by two hex digits"}`, true},
		{"short id in status", "GET", "/v1/status?request_id=short", "", 400,
			`{"error":"request_id: must be at least 20 characters, got 5"}`, false},
		{"short id in characters", "GET", "/v1/status?request_id=" + strings.Repeat("%C3%A9", 19), "", 400,
			`{"error":"request_id: must be at least 20 characters, got 19"}`, false},
		{"long enough in characters", "POST", "/v1/commit", `{"request_id":"` + strings.Repeat("é", 20) + `"}`, 200,
			`{"status":"committed","version":1,"request_id":"` + strings.Repeat("é", 20) + `"}`, false},
		{"unknown parameter", "GET", "/v1/status?request_id=" + reqID("x") + "&minversion=1", "", 400,
			`{"error":"minversion: unknown query parameter; allowed: request_id, min_version"}`, false},
		{"empty retention body", "PUT", "/v1/retention/p", "", 400,
			`{"error":"body: must be a JSON object like {\"versions\": 1000000, \"seconds\": 3600}, got an empty body"}`, false},
		{"bad base64", "POST", "/v1/commit", `{"operations":[{"type":"delete","key":"k1"}]}`, 400,
			`{"error":"operations[0].key: must be standard base64 (A-Z a-z 0-9 + /, '=' padded to a multiple of 4 characters); invalid at character 0"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := dialClient(t, "unix", ts.unixPath)
			// A second request pipelined behind: answered unless the
			// first closes the connection.
			req := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%sGET /ok HTTP/1.1\r\nHost: x\r\n\r\n",
				tc.method, tc.target, len(tc.body), tc.body)
			if _, err := io.WriteString(cl.c, req); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(cl.br, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.code || string(b) != tc.want {
				t.Fatalf("got %d %s\nwant %d %s", resp.StatusCode, b, tc.code, tc.want)
			}
			if resp.Close != tc.closes {
				t.Fatalf("Connection: close is %v, want %v", resp.Close, tc.closes)
			}
			next, err := http.ReadResponse(cl.br, nil)
			switch {
			case tc.closes && err == nil:
				t.Fatalf("the request after it was answered (%d): the connection should have closed", next.StatusCode)
			case !tc.closes && (err != nil || next.StatusCode != 200):
				t.Fatalf("the request after it: %v %v", next, err)
			}
		})
	}
}

func TestRetentionPolicies(t *testing.T) {
	ts := startServer(t, nil)
	cl := dialClient(t, "unix", ts.unixPath)
	for _, tc := range []struct {
		method, target, body string
		code                 int
		want                 string
	}{
		{"PUT", "/v1/retention/backup", `{"versions": 1000, "seconds": 3600}`, 201, `{"policy_id":"backup","versions":1000,"seconds":3600}`},
		{"PUT", "/v1/retention/backup", `{"seconds": 60}`, 200, `{"policy_id":"backup","seconds":60}`},
		{"PUT", "/v1/retention/a.b_c-1", `{"versions": 7}`, 201, `{"policy_id":"a.b_c-1","versions":7}`},
		{"GET", "/v1/retention/backup", "", 200, `{"policy_id":"backup","seconds":60}`},
		{"GET", "/v1/retention", "", 200, `{"policies":[{"policy_id":"a.b_c-1","versions":7},{"policy_id":"backup","seconds":60}]}`},
		{"DELETE", "/v1/retention/backup", "", 200, `{"policy_id":"backup","seconds":60}`},
		{"DELETE", "/v1/retention/backup", "", 404, `{"error":"retention policy backup not found"}`},
		{"GET", "/v1/retention/backup", "", 404, `{"error":"retention policy backup not found"}`},
		{"PUT", "/v1/retention/bad%20id", `{"versions": 1}`, 400, "policy_id"},
		{"PUT", "/v1/retention/x", `{"versions": 0}`, 400, "versions"},
		{"PUT", "/v1/retention/x", `{"version": 1}`, 400, "version: unknown field"},
		{"PUT", "/v1/retention/x", `{}`, 400, "body"},
		{"PUT", "/v1/retention/x", `[`, 400, "body"},
		{"GET", "/v1/retention/", "", 200, `{"policies":[{"policy_id":"a.b_c-1","versions":7}]}`},
	} {
		code, body, err := cl.do(tc.method, tc.target, tc.body)
		if err != nil || code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s %s %s: %d %s %v; want %d %s", tc.method, tc.target, tc.body, code, body, err, tc.code, tc.want)
		}
	}
}

// Every kind of malformed body is refused with 400 naming the field, and
// nothing is applied: the version does not move.
func TestMalformedCommitBodies(t *testing.T) {
	ts := startServer(t, func(c *config.Config) { c.Server.MaxRequestSizeBytes = 4096 })
	k := b64("k")
	for _, tc := range []struct{ name, body, field string }{
		{"empty", ``, "body"},
		{"not json", `{"operations": [}`, "operations"},
		{"not an object", `[1]`, "body"},
		{"trailing data", `{} {}`, "body"},
		{"unknown field", `{"operation": []}`, "operation: unknown field"},
		{"duplicate field", `{"read_version": 1, "read_version": 2}`, "read_version"},
		{"read_version type", `{"read_version": "1"}`, "read_version"},
		{"negative read_version", `{"read_version": -1}`, "read_version"},
		{"short request_id", `{"request_id": "short"}`, "request_id"},
		{"request_id type", `{"request_id": 12345678901234567890123}`, "request_id"},
		{"bad base64 key", `{"operations": [{"type": "write", "key": "!!", "value": "` + k + `"}]}`, "operations[0].key"},
		{"bad base64 value", `{"operations": [{"type": "write", "key": "` + k + `", "value": "a"}]}`, "operations[0].value"},
		{"unknown op type", `{"operations": [{"type": "upsert", "key": "` + k + `"}]}`, "operations[0].type"},
		{"missing key", `{"operations": [{"type": "delete"}]}`, "operations[0]"},
		{"unknown op field", `{"operations": [{"type": "delete", "key": "` + k + `", "x": 1}]}`, "operations[0].x"},
		{"range end before begin", `{"operations": [{"type": "range_delete", "begin": "` + b64("b") + `", "end": "` + b64("a") + `"}]}`, "operations[0]"},
		{"bad precondition", `{"preconditions": [{"type": "point_read", "key": 5}]}`, "preconditions[0].key"},
		{"precondition type", `{"preconditions": [{"type": "write", "key": "` + k + `"}]}`, "preconditions[0].type"},
		{"operations not a list", `{"operations": {}}`, "operations"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := dialClient(t, "tcp", ts.tcpAddr)
			code, text, err := cl.do("POST", "/v1/commit", tc.body)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]string
			if code != 400 || json.Unmarshal([]byte(text), &m) != nil || !strings.HasPrefix(m["error"], tc.field) {
				t.Fatalf("%s: %d %s; want 400 naming %q", tc.body, code, text, tc.field)
			}
			// The connection stays usable: the framing was fine.
			if code, _, err := cl.do("GET", "/ok", ""); err != nil || code != 200 {
				t.Fatalf("after the refusal: %d %v", code, err)
			}
		})
	}
	// Oversized: 413 from the HTTP layer, before the body is read.
	cl := dialClient(t, "unix", ts.unixPath)
	code, text, err := cl.do("POST", "/v1/commit", `{"operations":[`+strings.Repeat(writeOp("k", "v")+",", 200)+writeOp("k", "v")+`]}`)
	if err != nil || code != 413 {
		t.Fatalf("oversized: %d %s %v", code, text, err)
	}
	cl = dialClient(t, "unix", ts.unixPath)
	if _, m := cl.mustDo(t, "GET", "/v1/version", ""); version(m) != 0 {
		t.Fatalf("a refused body moved the version: %v", m)
	}
}

// Committers race on one counter key with read-modify-write commits: the
// committed ones must be serializable (no committed write to the key
// between a winner's read_version and its version), and every version is
// assigned once.
func TestConcurrentCommitters(t *testing.T) {
	ts := startServer(t, nil)
	const committers, each = 6, 40
	type result struct {
		read, version int64
		committed     bool
	}
	results := make(chan result, committers*each)
	errs := make(chan error, committers)
	var wg sync.WaitGroup
	for w := 0; w < committers; w++ {
		network, addr := "tcp", ts.tcpAddr
		if w%2 == 1 {
			network, addr = "unix", ts.unixPath
		}
		cl := dialClient(t, network, addr)
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				code, text, err := cl.do("GET", "/v1/version", "")
				var v struct{ Version int64 }
				if err == nil && (code != 200 || json.Unmarshal([]byte(text), &v) != nil) {
					err = fmt.Errorf("version: %d %s", code, text)
				}
				if err != nil {
					errs <- err
					return
				}
				body := commitBody(reqID(fmt.Sprintf("w%d-%d", w, i)), v.Version, []string{pointRead("counter")},
					[]string{writeOp("counter", fmt.Sprint(w, i)), writeOp(fmt.Sprintf("own/%d/%d", w, i), "x")})
				code, text, err = cl.do("POST", "/v1/commit", body)
				var r struct {
					Status  string
					Version int64
				}
				if err == nil && ((code != 200 && code != 409) || json.Unmarshal([]byte(text), &r) != nil) {
					err = fmt.Errorf("commit: %d %s", code, text)
				}
				if err != nil {
					errs <- err
					return
				}
				results <- result{v.Version, r.Version, r.Status == "committed"}
			}
		}(w)
	}
	wg.Wait()
	close(results)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	var wins []result
	for r := range results {
		if seen[r.version] {
			t.Fatalf("version %d assigned twice", r.version)
		}
		seen[r.version] = true
		if r.committed {
			wins = append(wins, r)
		}
	}
	if len(seen) != committers*each || len(wins) == 0 {
		t.Fatalf("%d versions, %d committed", len(seen), len(wins))
	}
	for _, a := range wins {
		for _, b := range wins {
			if b.version > a.read && b.version < a.version {
				t.Fatalf("commit at %d read at %d, but %d wrote the key in between", a.version, a.read, b.version)
			}
		}
	}
}

// Age retention: a policy of one second (and no versions) forgets request
// ids older than that.
func TestStatusAcrossAgeRetention(t *testing.T) {
	ts := startServer(t, nil)
	cl := dialClient(t, "unix", ts.unixPath)
	if code, p := cl.mustDo(t, "PUT", "/v1/retention/short", `{"seconds": 1}`); code != 201 {
		t.Fatalf("put policy: %d %v", code, p)
	}
	id := reqID("aged")
	cl.mustDo(t, "POST", "/v1/commit", commitBody(id, 0, nil, []string{writeOp("aged", "x")}))
	if _, st := cl.mustDo(t, "GET", "/v1/status?request_id="+id, ""); st["status"] != "committed" {
		t.Fatalf("fresh: %v", st)
	}
	time.Sleep(1100 * time.Millisecond)
	if _, st := cl.mustDo(t, "GET", "/v1/status?request_id="+id, ""); st["status"] != "log_truncated" {
		t.Fatalf("after a second: %v", st)
	}
	// Retrying the commit now applies it again: its id was forgotten, as
	// the policy asked.
	if _, m := cl.mustDo(t, "POST", "/v1/commit", commitBody(id, 0, nil, nil)); m["duplicate"] == true || m["status"] != "committed" {
		t.Fatalf("retry after retention: %v", m)
	}
}
