package api

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// decode parses out with encoding/json, failing on invalid JSON.
func decode(t *testing.T, out []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("invalid JSON %q: %v", out, err)
	}
	return m
}

func TestAppendCommitResponse(t *testing.T) {
	req := &CommitRequest{
		RequestID: validID,
		Preconditions: []Precondition{
			{Type: PointRead, Key: []byte("k")},
			{Type: RangeRead, Begin: []byte("a"), End: []byte("b")},
		},
	}
	cases := []struct {
		name string
		req  *CommitRequest
		res  CommitResult
		want string
	}{
		{"committed", req, CommitResult{Committed: true, Version: 7},
			`{"status":"committed","version":7,"request_id":"` + validID + `"}`},
		{"committed no id", &CommitRequest{}, CommitResult{Committed: true, Version: 1}, `{"status":"committed","version":1}`},
		{"duplicate", req, CommitResult{Committed: true, Version: 7, Duplicate: true},
			`{"status":"committed","version":7,"request_id":"` + validID + `","duplicate":true}`},
		{"conflict point", req, CommitResult{Version: 9, Reason: ReasonConflict, ConflictIndex: 0, Conflict: &req.Preconditions[0]},
			`{"status":"not_committed","version":9,"reason":"conflict","conflict":{"index":0,"type":"point_read","key":"aw=="},"request_id":"` + validID + `"}`},
		{"conflict range", &CommitRequest{Preconditions: req.Preconditions}, CommitResult{Version: 9, Reason: ReasonConflict, ConflictIndex: 1, Conflict: &req.Preconditions[1]},
			`{"status":"not_committed","version":9,"reason":"conflict","conflict":{"index":1,"type":"range_read","begin":"YQ==","end":"Yg=="}}`},
		// A duplicate replays every field of the original (the store keeps
		// a copy of the conflicting precondition), whatever its own body.
		{"conflict duplicate", &CommitRequest{RequestID: validID}, CommitResult{Version: 9, Reason: ReasonConflict, ConflictIndex: 1,
			Conflict: &Precondition{Type: RangeRead, Begin: []byte("a"), End: []byte("b")}, Duplicate: true},
			`{"status":"not_committed","version":9,"reason":"conflict","conflict":{"index":1,"type":"range_read","begin":"YQ==","end":"Yg=="},"request_id":"` + validID + `","duplicate":true}`},
		{"too old", &CommitRequest{}, CommitResult{Version: 9, Reason: ReasonReadVersionTooOld},
			`{"status":"not_committed","version":9,"reason":"read_version_too_old"}`},
		{"future", &CommitRequest{}, CommitResult{Version: 9, Reason: ReasonReadVersionInFuture},
			`{"status":"not_committed","version":9,"reason":"read_version_in_future"}`},
		{"banned", &CommitRequest{RequestID: validID}, CommitResult{Reason: ReasonRequestIDBanned},
			`{"status":"not_committed","reason":"request_id_banned","request_id":"` + validID + `"}`},
		{"unverifiable", &CommitRequest{RequestID: validID}, CommitResult{Reason: ReasonRequestIDUnverifiable, MinReadVersion: 1234},
			`{"status":"not_committed","reason":"request_id_unverifiable","min_read_version":1234,"request_id":"` + validID + `"}`},
	}
	for _, c := range cases {
		got := string(AppendCommitResponse(nil, c.req, c.res))
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
		decode(t, []byte(got))
	}
}

func TestAppendStatusResponse(t *testing.T) {
	cases := []struct {
		s    StatusResult
		want string
	}{
		{StatusResult{Kind: StatusCommitted, RequestID: "id", Version: 3}, `{"status":"committed","request_id":"id","version":3}`},
		{StatusResult{Kind: StatusNotCommitted, RequestID: "id", Version: 3, Reason: ReasonConflict, ConflictIndex: 2,
			Conflict: &Precondition{Type: PointRead, Key: []byte("k")}},
			`{"status":"not_committed","request_id":"id","version":3,"reason":"conflict","conflict":{"index":2,"type":"point_read","key":"aw=="}}`},
		{StatusResult{Kind: StatusNotCommitted, RequestID: "id", Version: 3, Reason: ReasonReadVersionTooOld},
			`{"status":"not_committed","request_id":"id","version":3,"reason":"read_version_too_old"}`},
		{StatusResult{Kind: StatusNotFound, RequestID: "id"}, `{"status":"not_found","request_id":"id"}`},
		{StatusResult{Kind: StatusLogTruncated, RequestID: "id", OldestVersion: 100}, `{"status":"log_truncated","request_id":"id","oldest_version":100,"reason":"retention"}`},
		{StatusResult{Kind: StatusLogTruncated, RequestID: "id", OldestVersion: 100, TruncatedByCap: true},
			`{"status":"log_truncated","request_id":"id","oldest_version":100,"reason":"max_request_ids"}`},
	}
	for _, c := range cases {
		if got := string(AppendStatusResponse(nil, c.s)); got != c.want {
			t.Errorf("got %s want %s", got, c.want)
		}
	}
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "quote\" back\\ nl\n cr\r tab\t", "\x00\x01\x1f\x7f", "é😀", "bad\xffutf8\xc3", "<>&\u2028"} {
		out := appendString(nil, s)
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("%q -> %s: %v", s, out, err)
		}
		want := strings.ToValidUTF8(s, "\ufffd")
		if back != want {
			t.Fatalf("%q -> %s -> %q, want %q", s, out, back, want)
		}
	}
}

func TestAppendLines(t *testing.T) {
	ops := []Operation{
		{Type: Write, Key: []byte("k1"), Value: []byte("v1")},
		{Type: Delete, Key: []byte("k2")},
		{Type: RangeDelete, Begin: []byte("a"), End: []byte("b")},
	}
	line := AppendTransactionLine(nil, 7, ops)
	want := `{"version":7,"operations":[{"type":"write","key":"azE=","value":"djE="},{"type":"delete","key":"azI="},{"type":"range_delete","begin":"YQ==","end":"Yg=="}]}` + "\n"
	if string(line) != want {
		t.Fatalf("got %s want %s", line, want)
	}
	if got := string(AppendKeepaliveLine(nil, 9)); got != `{"keepalive":true,"version":9}`+"\n" {
		t.Fatal(got)
	}
	m := decode(t, AppendSubscribeErrorLine(nil, SubscribeErrSlowConsumer, `more than 10 bytes "behind"`))
	if !reflect.DeepEqual(m, map[string]any{"error": "slow_consumer", "message": `more than 10 bytes "behind"`}) {
		t.Fatal(m)
	}
	if got := string(AppendError(nil, "operations[2].key: bad")); got != `{"error":"operations[2].key: bad"}` {
		t.Fatal(got)
	}
	if got := string(AppendVersionResponse(nil, 12)); got != `{"version":12}` {
		t.Fatal(got)
	}
}

func BenchmarkAppendCommitResponse(b *testing.B) {
	req := &CommitRequest{RequestID: validID}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendCommitResponse(buf[:0], req, CommitResult{Committed: true, Version: 123456})
	}
}
