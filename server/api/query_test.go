package api

import (
	"errors"
	"strings"
	"testing"
)

func TestParseStatusQuery(t *testing.T) {
	good := []struct {
		q    string
		want StatusQuery
	}{
		{"request_id=abc", StatusQuery{RequestID: "abc"}},
		{"request_id=a%20b&min_version=12", StatusQuery{RequestID: "a b", MinVersion: 12}},
		{"min_version=0&request_id=x", StatusQuery{RequestID: "x"}},
	}
	for _, c := range good {
		got, err := ParseStatusQuery([]byte(c.q))
		if err != nil || got != c.want {
			t.Errorf("%q: %+v %v", c.q, got, err)
		}
	}
	bad := []struct{ q, field, msg string }{
		{"", "request_id", "required"},
		{"request_id=", "request_id", "required"},
		{"request_id=a&min_version=-1", "min_version", "non-negative integer"},
		{"request_id=a&min_version=x", "min_version", "non-negative integer"},
		{"request_id=a&request_id=b", "request_id", "more than once"},
		{"request_id=a&foo=1", "foo", "unknown query parameter"},
		{"request_id=%zz", "query", "invalid URL escape"},
	}
	for _, c := range bad {
		_, err := ParseStatusQuery([]byte(c.q))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Msg, c.msg) {
			t.Errorf("%q: %v, want %s: %s", c.q, err, c.field, c.msg)
		}
	}
}

func TestParseSubscribeQuery(t *testing.T) {
	for q, want := range map[string]int64{"": 0, "from_version=7": 7, "from_version=": 0} {
		if got, err := ParseSubscribeQuery([]byte(q)); err != nil || got != want {
			t.Errorf("%q: %d %v", q, got, err)
		}
	}
	for _, q := range []string{"from_version=-2", "from=1", "from_version=1.5"} {
		if _, err := ParseSubscribeQuery([]byte(q)); err == nil {
			t.Errorf("%q accepted", q)
		}
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
		if sq, err := ParseStatusQuery([]byte(q)); err == nil {
			if sq.RequestID == "" || sq.MinVersion < 0 {
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
