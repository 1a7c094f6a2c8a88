package api

import (
	"errors"
	"strings"
	"testing"
)

func TestParseRetentionPolicy(t *testing.T) {
	good := []struct {
		body string
		want RetentionPolicy
	}{
		{`{"versions":1000}`, RetentionPolicy{Versions: 1000}},
		{`{"seconds":3600}`, RetentionPolicy{Seconds: 3600}},
		{` {"versions":5, "seconds":1} `, RetentionPolicy{Versions: 5, Seconds: 1}},
	}
	for _, c := range good {
		got, err := ParseRetentionPolicy([]byte(c.body))
		if err != nil || got != c.want {
			t.Fatalf("%s: %+v %v", c.body, got, err)
		}
	}
	bad := []struct{ body, field, msg string }{
		{`{}`, "body", `must set "versions", "seconds" or both`},
		{``, "body", `must be a JSON object like {"versions": 1000000, "seconds": 3600}, got an empty body`},
		{"  \n", "body", "got an empty body"},
		{`{"versions":`, "body", "invalid JSON: unterminated object"},
		{`{"versions" 1}`, "body", "invalid JSON at offset 12"},
		{`{"versions":1} {}`, "body", "unexpected data"},
		{`{"versions":1,"extra":2}`, "extra", `unknown field; allowed: versions, seconds`},
		{`null`, "body", "must be a JSON object like {\"versions\": 1000000, \"seconds\": 3600}, got null"},
		{`{"versions":0}`, "versions", "between 1 and"},
		{`{"versions":-3}`, "versions", "got -3"},
		{`{"versions":1.5}`, "versions", "got 1.5"},
		{`{"versions":"7"}`, "versions", `got "7"`},
		{`{"versions":null}`, "versions", "got null"},
		{`{"seconds":31536001}`, "seconds", "between 1 and 31536000"},
		{`[1]`, "body", "must be a JSON object like {\"versions\": 1000000, \"seconds\": 3600}, got an array"},
		{`"x"`, "body", "got a string"},
	}
	for _, c := range bad {
		_, err := ParseRetentionPolicy([]byte(c.body))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Msg, c.msg) {
			t.Errorf("%s: got %v, want %s: ...%s", c.body, err, c.field, c.msg)
		}
		// No Go internals in what a client reads.
		for _, internal := range []string{"EOF", "Go value", "json:", "map["} {
			if err != nil && strings.Contains(err.Error(), internal) {
				t.Errorf("%s: message shows Go internals (%q): %v", c.body, internal, err)
			}
		}
	}
}

func TestValidatePolicyID(t *testing.T) {
	for _, id := range []string{"a", "backup-1", "A.b_C-9", strings.Repeat("x", 128)} {
		if err := ValidatePolicyID(id); err != nil {
			t.Errorf("%q: %v", id, err)
		}
	}
	for _, c := range []struct{ id, msg string }{
		{"", "must be 1 to 128 characters, got 0"},
		{strings.Repeat("x", 129), "must be 1 to 128 characters, got 129"},
		{"a/b", `got '/' at byte 1`},
		{"a b", `got ' ' at byte 1`},
		{"xé", `got 'é' at byte 1`}, // the character, not one of its bytes
		{"a%2F", `got '%' at byte 1`},
	} {
		if err := ValidatePolicyID(c.id); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: %v, want ...%s", c.id, err, c.msg)
		}
	}
}

func TestAppendRetentionPolicies(t *testing.T) {
	got := string(AppendRetentionPolicies(nil, []NamedPolicy{
		{ID: "a", Policy: RetentionPolicy{Versions: 5}},
		{ID: "b", Policy: RetentionPolicy{Versions: 1, Seconds: 2}},
	}))
	want := `{"policies":[{"policy_id":"a","versions":5},{"policy_id":"b","versions":1,"seconds":2}]}`
	if got != want {
		t.Fatalf("got %s want %s", got, want)
	}
	if got := string(AppendRetentionPolicies(nil, nil)); got != `{"policies":[]}` {
		t.Fatal(got)
	}
}

func FuzzParseRetentionPolicy(f *testing.F) {
	f.Add([]byte(`{"versions":5,"seconds":1}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := ParseRetentionPolicy(body)
		if err != nil {
			return
		}
		if p.Versions < 0 || p.Seconds < 0 || (p.Versions == 0 && p.Seconds == 0) {
			t.Fatalf("accepted invalid policy %+v from %q", p, body)
		}
	})
}
