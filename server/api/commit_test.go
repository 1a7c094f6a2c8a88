package api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

const validID = "req-0123456789abcdefghij" // 24 characters

// min_request_id_length counts characters: 20 two-byte characters pass.
func TestRequestIDLengthInCharacters(t *testing.T) {
	id := strings.Repeat("é", 20)
	req, err := ParseCommit([]byte(`{"request_id":"`+id+`"}`), 20)
	if err != nil || req.RequestID != id {
		t.Fatalf("%+v %v", req, err)
	}
}

func TestParseCommitValid(t *testing.T) {
	body := `{
	  "request_id": "` + validID + `",
	  "leader_id": "leader-1",
	  "read_version": 42,
	  "preconditions": [
	    {"type": "point_read", "key": "` + b64("k1") + `"},
	    {"begin": "` + b64("a") + `", "end": "` + b64("b") + `", "type": "range_read"}
	  ],
	  "operations": [
	    {"type": "write", "key": "` + b64("k1") + `", "value": "` + b64("v1") + `"},
	    {"type": "delete", "key": "` + b64("k2") + `"},
	    {"type": "range_delete", "begin": "` + b64("x") + `", "end": "` + b64("y") + `"},
	    {"type": "write", "key": "", "value": ""}
	  ]
	}`
	req, err := ParseCommit([]byte(body), 20)
	if err != nil {
		t.Fatal(err)
	}
	want := &CommitRequest{
		RequestID: validID, LeaderID: "leader-1", ReadVersion: 42, HasReadVersion: true,
		Preconditions: []Precondition{
			{Type: PointRead, Key: []byte("k1")},
			{Type: RangeRead, Begin: []byte("a"), End: []byte("b")},
		},
		Operations: []Operation{
			{Type: Write, Key: []byte("k1"), Value: []byte("v1")},
			{Type: Delete, Key: []byte("k2")},
			{Type: RangeDelete, Begin: []byte("x"), End: []byte("y")},
			{Type: Write, Key: []byte{}, Value: []byte{}},
		},
	}
	if !reflect.DeepEqual(req, want) {
		t.Fatalf("got  %+v\nwant %+v", req, want)
	}
}

func TestParseCommitMinimalAndEscapes(t *testing.T) {
	cases := []struct {
		body string
		want CommitRequest
	}{
		{`{}`, CommitRequest{}},
		{` { "operations" : [ ] } `, CommitRequest{}},
		{`{"read_version":0}`, CommitRequest{HasReadVersion: true}},
		{`{"read_version":9223372036854775807}`, CommitRequest{ReadVersion: 1<<63 - 1, HasReadVersion: true}},
		{`{"leader_id":"a\"b\\c\/d\n\u00e9\ud83d\ude00\ud800"}`, CommitRequest{LeaderID: "a\"b\\c/d\né😀\ufffd"}},
		{`{"operations":[{"type":"delete","key":"\u0061w=="}]}`, CommitRequest{Operations: []Operation{{Type: Delete, Key: []byte("k")}}}},
	}
	for _, c := range cases {
		got, err := ParseCommit([]byte(c.body), 8)
		if err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		got.Preconditions, got.Operations = nilIfEmpty(got.Preconditions), nilIfEmptyOps(got.Operations)
		if !reflect.DeepEqual(*got, c.want) {
			t.Fatalf("%s: got %+v want %+v", c.body, *got, c.want)
		}
	}
}

func nilIfEmpty(p []Precondition) []Precondition {
	if len(p) == 0 {
		return nil
	}
	return p
}

func nilIfEmptyOps(o []Operation) []Operation {
	if len(o) == 0 {
		return nil
	}
	return o
}

func TestParseCommitErrors(t *testing.T) {
	w := func(k, v string) string { return `{"type":"write","key":"` + k + `","value":"` + v + `"}` }
	ok := w(b64("k"), b64("v"))
	cases := []struct {
		name, body, field, msg string
	}{
		{"empty", ``, "body", "must be a JSON object, got end of body"},
		{"array", `[]`, "body", "must be a JSON object, got array"},
		{"trailing", `{} x`, "body", "unexpected data after the JSON object"},
		{"two objects", `{}{}`, "body", "unexpected data"},
		{"unterminated", `{"operations":[`, "operations[0]", "must be an object, got end of body"},
		{"unterminated object", `{"read_version":1`, "body", "unterminated object"},
		{"unterminated string", `{"leader_id":"abc`, "leader_id", "unterminated string"},
		{"missing colon", `{"read_version" 1}`, "body", "expected ':'"},
		{"missing comma", `{"read_version":1 "leader_id":"x"}`, "body", "expected ',' or '}'"},
		{"trailing comma", `{"read_version":1,}`, "body", "expected a member name"},
		{"unknown field", `{"foo":1}`, "foo", "unknown field; allowed: request_id"},
		{"case matters", `{"Request_ID":"` + validID + `"}`, "Request_ID", "unknown field"},
		{"duplicate", `{"read_version":1,"read_version":2}`, "read_version", "duplicate field"},
		{"short request_id", `{"request_id":"abc"}`, "request_id", "must be at least 20 characters, got 3"},
		// min_request_id_length counts characters: 19 two-byte characters
		// (38 bytes) are too short, whatever their bytes.
		{"short request_id in characters", `{"request_id":"` + strings.Repeat("é", 19) + `"}`, "request_id", "must be at least 20 characters, got 19"},
		{"request_id number", `{"request_id":12345678901234567890123}`, "request_id", "must be a string, got number"},
		{"request_id null", `{"request_id":null}`, "request_id", "must be a string, got null"},
		{"request_id bad utf8", "{\"request_id\":\"" + strings.Repeat("\xff", 25) + "\"}", "request_id", "valid UTF-8"},
		{"request_id control", "{\"request_id\":\"a\x01\"}", "request_id", "control character"},
		{"bad escape", `{"leader_id":"\x"}`, "leader_id", "bad escape"},
		{"bad unicode escape", `{"leader_id":"\u12g4"}`, "leader_id", `bad \u escape`},
		{"read_version string", `{"read_version":"1"}`, "read_version", "must be a non-negative integer, got string"},
		{"read_version negative", `{"read_version":-1}`, "read_version", "got a negative number"},
		{"read_version fraction", `{"read_version":1.5}`, "read_version", "fraction or exponent"},
		{"read_version exponent", `{"read_version":1e3}`, "read_version", "fraction or exponent"},
		{"read_version leading zero", `{"read_version":01}`, "read_version", "leading zero"},
		{"read_version overflow", `{"read_version":9223372036854775808}`, "read_version", "out of range"},
		{"read_version required", `{"preconditions":[{"type":"point_read","key":""}]}`, "read_version", "required when preconditions"},
		{"preconditions object", `{"preconditions":{}}`, "preconditions", "must be an array, got object"},
		{"precondition not object", `{"preconditions":[1]}`, "preconditions[0]", "must be an object, got number"},
		{"precondition no type", `{"read_version":1,"preconditions":[{"key":""}]}`, "preconditions[0].type", "required"},
		{"precondition bad type", `{"read_version":1,"preconditions":[{"type":"write","key":""}]}`, "preconditions[0].type", `must be "point_read" or "range_read", got "write"`},
		{"point_read no key", `{"read_version":1,"preconditions":[{"type":"point_read"}]}`, "preconditions[0].key", "required for type point_read"},
		{"point_read with end", `{"read_version":1,"preconditions":[{"type":"point_read","key":"","end":""}]}`, "preconditions[0].end", "not allowed for type point_read"},
		{"point_read value", `{"read_version":1,"preconditions":[{"type":"point_read","key":"","value":""}]}`, "preconditions[0].value", "not allowed"},
		{"range_read reversed", `{"read_version":1,"preconditions":[{"type":"range_read","begin":"` + b64("b") + `","end":"` + b64("a") + `"}]}`, "preconditions[0].end", "must not sort before begin"},
		{"range_read no end", `{"read_version":1,"preconditions":[{"type":"range_read","begin":""}]}`, "preconditions[0].end", "required for type range_read"},
		{"precondition unknown", `{"read_version":1,"preconditions":[{"type":"point_read","key":"","x":1}]}`, "preconditions[0].x", "unknown field; allowed: type, key, begin, end"},
		{"bad base64", `{"operations":[` + ok + `,` + ok + `,` + w("a!==", b64("v")) + `]}`, "operations[2].key", "must be standard base64 (A-Z a-z 0-9 + /, '=' padded to a multiple of 4 characters); invalid at character 1"},
		{"unpadded base64", `{"operations":[` + w("YQ", "") + `]}`, "operations[0].key", "must be standard base64"},
		{"value number", `{"operations":[{"type":"write","key":"","value":3}]}`, "operations[0].value", "must be a base64 string, got number"},
		{"write no value", `{"operations":[{"type":"write","key":""}]}`, "operations[0].value", "required for type write"},
		{"delete with value", `{"operations":[{"type":"delete","key":"","value":""}]}`, "operations[0].value", "not allowed for type delete"},
		{"range_delete key", `{"operations":[{"type":"range_delete","begin":"","end":"","key":""}]}`, "operations[0].key", "not allowed for type range_delete"},
		{"op bad type", `{"operations":[{"type":"put","key":""}]}`, "operations[0].type", `must be "write", "delete" or "range_delete", got "put"`},
		{"op type number", `{"operations":[{"type":1}]}`, "operations[0].type", "must be a string, got number"},
		{"op duplicate key", `{"operations":[{"type":"delete","key":"","key":""}]}`, "operations[0].key", "duplicate field"},
		{"op unknown", `{"operations":[{"type":"delete","key":"","ttl":1}]}`, "operations[0].ttl", "unknown field"},
		{"ops missing comma", `{"operations":[` + ok + ok + `]}`, "operations", "expected ',' or ']'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseCommit([]byte(c.body), 20)
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FieldError", err)
			}
			if fe.Field != c.field || !strings.Contains(fe.Msg, c.msg) {
				t.Fatalf("got %q, want field %q with %q", err, c.field, c.msg)
			}
		})
	}
}

func TestParseCommitReuseAndAliasing(t *testing.T) {
	body := []byte(`{"operations":[{"type":"write","key":"` + b64("key") + `","value":"` + b64("value") + `"}]}`)
	var req CommitRequest
	if err := ParseCommitInto(body, 20, &req); err != nil {
		t.Fatal(err)
	}
	for i := range body {
		body[i] = 0 // the request must not alias the body
	}
	if string(req.Operations[0].Key) != "key" || string(req.Operations[0].Value) != "value" {
		t.Fatalf("request aliases body: %+v", req.Operations[0])
	}
	if err := ParseCommitInto([]byte(`{}`), 20, &req); err != nil || len(req.Operations) != 0 || req.HasReadVersion {
		t.Fatalf("reuse: %+v %v", req, err)
	}
}

func TestReadCommit(t *testing.T) {
	body := `{"read_version":3}`
	req, err := ReadCommit(strings.NewReader(body), int64(len(body)), 20)
	if err != nil || req.ReadVersion != 3 {
		t.Fatalf("%+v %v", req, err)
	}
	_, err = ReadCommit(strings.NewReader(body), int64(len(body))-1, 20)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "body" {
		t.Fatalf("oversized: %v", err)
	}
}

// refCheck compares an accepted body with what encoding/json makes of it.
func refCheck(t *testing.T, body []byte, req *CommitRequest) {
	t.Helper()
	if !json.Valid(body) {
		t.Fatalf("accepted invalid JSON %q", body)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("encoding/json rejects accepted body %q: %v", body, err)
	}
	if s, _ := doc["request_id"].(string); s != req.RequestID {
		t.Fatalf("request_id %q vs encoding/json %q", req.RequestID, s)
	}
	if s, _ := doc["leader_id"].(string); s != req.LeaderID {
		t.Fatalf("leader_id %q vs encoding/json %q", req.LeaderID, s)
	}
	if n, ok := doc["read_version"].(json.Number); ok != req.HasReadVersion || (ok && n.String() != itoa(req.ReadVersion)) {
		t.Fatalf("read_version %d vs encoding/json %v", req.ReadVersion, doc["read_version"])
	}
	ops, _ := doc["operations"].([]any)
	if len(ops) != len(req.Operations) {
		t.Fatalf("%d operations vs encoding/json %d", len(req.Operations), len(ops))
	}
	for i, o := range ops {
		m := o.(map[string]any)
		for field, got := range map[string][]byte{"key": req.Operations[i].Key, "value": req.Operations[i].Value, "begin": req.Operations[i].Begin, "end": req.Operations[i].End} {
			if s, ok := m[field].(string); ok {
				want, err := base64.StdEncoding.DecodeString(s)
				if err != nil || !bytes.Equal(want, got) {
					t.Fatalf("operations[%d].%s = %q, encoding/json+base64 gives %q (%v)", i, field, got, want, err)
				}
			}
		}
	}
	pcs, _ := doc["preconditions"].([]any)
	if len(pcs) != len(req.Preconditions) {
		t.Fatalf("%d preconditions vs encoding/json %d", len(req.Preconditions), len(pcs))
	}
}

func itoa(v int64) string { b, _ := json.Marshal(v); return string(b) }

func FuzzParseCommit(f *testing.F) {
	f.Add([]byte(`{"request_id":"` + validID + `","read_version":1,"preconditions":[{"type":"point_read","key":"azE="},{"type":"range_read","begin":"YQ==","end":"Yg=="}],"operations":[{"type":"write","key":"azE=","value":"djE="},{"type":"delete","key":"azI="},{"type":"range_delete","begin":"YQ==","end":"Yg=="}]}`))
	f.Add([]byte(`{"leader_id":"\u00e9\ud83d\ude00\ud800\n","operations":[{"type":"delete","key":"\u0061w=="}]}`))
	f.Add([]byte(`{"read_version":01}`))
	f.Add([]byte(` {"operations" : [ {"value":"","type":"write","key":""} ] } `))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := ParseCommit(body, 8)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FieldError", err)
			}
			return
		}
		refCheck(t, body, req)
		// What the encoders make of an accepted request is valid JSON.
		out := AppendTransactionLine(nil, 1, req.Operations)
		if !json.Valid(out) {
			t.Fatalf("AppendTransactionLine invalid: %q", out)
		}
		res := CommitResult{Reason: ReasonConflict}
		if out := AppendCommitResponse(nil, req, res); !json.Valid(out) {
			t.Fatalf("AppendCommitResponse invalid: %q", out)
		}
	})
}

func BenchmarkParseCommitSmallWrite(b *testing.B) {
	body := []byte(`{"request_id":"` + validID + `","read_version":12345,"operations":[{"type":"write","key":"` + b64("user:000001") + `","value":"` + b64(strings.Repeat("v", 64)) + `"}]}`)
	var req CommitRequest
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if err := ParseCommitInto(body, 20, &req); err != nil {
			b.Fatal(err)
		}
	}
}
