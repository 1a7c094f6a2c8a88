package api

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseStatusQuery(t *testing.T) {
	const minLen = 3
	good := []struct {
		q    string
		want StatusQuery
	}{
		{"request_id=abc", StatusQuery{RequestID: "abc"}},
		{"request_id=a%20b&min_version=12", StatusQuery{RequestID: "a b", MinVersion: 12}},
		{"request_id=a+b", StatusQuery{RequestID: "a b"}},
		{"min_version=0&request_id=xyz", StatusQuery{RequestID: "xyz"}},
		{"request_id=%C3%A9t%C3%A9", StatusQuery{RequestID: "été"}}, // 3 characters, 5 bytes
		{"&request_id=abc&", StatusQuery{RequestID: "abc"}},
		{"request_id=a%2Fb%3d", StatusQuery{RequestID: "a/b="}},
	}
	for _, c := range good {
		got, err := ParseStatusQuery([]byte(c.q), minLen)
		if err != nil || got != c.want {
			t.Errorf("%q: %+v %v", c.q, got, err)
		}
	}
	bad := []struct {
		q, field, msg string
		escape        bool // a malformed escape: the connection is closed
	}{
		{"", "request_id", "required query parameter", false},
		{"request_id=", "request_id", "required query parameter", false},
		{"request_id=abc&min_version=-1", "min_version", `must be a non-negative integer, got "-1"`, false},
		{"request_id=abc&min_version=x", "min_version", `must be a non-negative integer, got "x"`, false},
		{"request_id=abc&request_id=bcd", "request_id", "given more than once", false},
		{"request_id=abc&foo=1", "foo", "unknown query parameter; allowed: request_id, min_version", false},
		{"request_id=abc&f%20o=1", `"f o"`, "unknown query parameter; allowed: request_id, min_version", false},
		{"request_id=ab", "request_id", "must be at least 3 characters, got 2", false},
		{"request_id=%C3%A9t", "request_id", "must be at least 3 characters, got 2", false}, // 3 bytes, 2 characters
		{"request_id=%ff%fe%fd", "request_id", "must be valid UTF-8 once percent-decoded", false},
		{"request_id=%zz", "query", "malformed percent-escape at offset 11: '%' must be followed by two hex digits", true},
		{"request_id=abc%", "query", "malformed percent-escape at offset 14", true},
		{"request_id=abc%4", "query", "malformed percent-escape at offset 14", true},
		{"min_version=1&request_id=abc%g0", "query", "malformed percent-escape at offset 28", true},
		{"re%quest_id=abc", "query", "malformed percent-escape at offset 2", true},
	}
	for _, c := range bad {
		_, err := ParseStatusQuery([]byte(c.q), minLen)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Msg, c.msg) {
			t.Errorf("%q: %v, want %s: %s", c.q, err, c.field, c.msg)
		}
		if errors.Is(err, ErrMalformedEscape) != c.escape {
			t.Errorf("%q: errors.Is(ErrMalformedEscape) = %v", c.q, !c.escape)
		}
		if err != nil && strings.ContainsAny(fe.Msg, "[]") {
			t.Errorf("%q: message shows a Go value: %s", c.q, fe.Msg)
		}
	}
}

func TestParseSubscribeQuery(t *testing.T) {
	for q, want := range map[string]int64{"": 0, "from_version=7": 7, "from_version=": 0} {
		if got, err := ParseSubscribeQuery([]byte(q)); err != nil || got != want {
			t.Errorf("%q: %d %v", q, got, err)
		}
	}
	for _, q := range []string{"from_version=-2", "from=1", "from_version=1.5", "from_version=%"} {
		if _, err := ParseSubscribeQuery([]byte(q)); err == nil {
			t.Errorf("%q accepted", q)
		}
	}
	if _, err := ParseSubscribeQuery([]byte("from_version=1%x")); !errors.Is(err, ErrMalformedEscape) {
		t.Errorf("malformed escape: %v", err)
	}
}

func TestHTTPStatus(t *testing.T) {
	if (CommitResult{Committed: true}).HTTPStatus() != 200 || (CommitResult{}).HTTPStatus() != 409 {
		t.Fatal("codes")
	}
}

// FuzzParseQueries: any query is answered (a value or a *FieldError),
// never a panic, and an accepted one holds only what was asked for.
func FuzzParseQueries(f *testing.F) {
	for _, s := range []string{"request_id=abc", "request_id=a%20b&min_version=12", "from_version=3", "from_version=-1", "x=1", "%zz", "request_id=a&request_id=b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		if sq, err := ParseStatusQuery([]byte(q), 1); err == nil {
			if sq.RequestID == "" || sq.MinVersion < 0 || !utf8.ValidString(sq.RequestID) {
				t.Fatalf("%q: accepted %+v", q, sq)
			}
		} else if _, ok := err.(*FieldError); !ok {
			t.Fatalf("%q: %T %v", q, err, err)
		}
		if v, err := ParseSubscribeQuery([]byte(q)); err == nil {
			if v < 0 {
				t.Fatalf("%q: from_version %d", q, v)
			}
		} else if _, ok := err.(*FieldError); !ok {
			t.Fatalf("%q: %T %v", q, err, err)
		}
	})
}

// FuzzQueryMatchesNetURL: where net/url decodes a query without error, the
// hand-written parser decodes the same values (it only words its errors
// differently).
func FuzzQueryMatchesNetURL(f *testing.F) {
	for _, s := range []string{"request_id=abc", "request_id=a%20b+c&min_version=12", "request_id=%C3%A9", "request_id=a&&min_version=1", "request_id=a=b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		want, err := url.ParseQuery(q)
		if err != nil || len(want["request_id"]) != 1 || len(want["min_version"]) > 1 || len(want) > len(want["min_version"])+1 {
			return
		}
		got, err := parseQuery([]byte(q), "request_id", "min_version")
		if err != nil {
			t.Fatalf("%q: net/url accepts, parseQuery: %v", q, err)
		}
		if got[0] != want.Get("request_id") || got[1] != want.Get("min_version") {
			t.Fatalf("%q: got %q, net/url %v", q, got, want)
		}
	})
}
