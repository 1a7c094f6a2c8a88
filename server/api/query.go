package api

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Content types of the data routes.
const (
	ContentTypeJSON   = "application/json"
	ContentTypeNDJSON = "application/x-ndjson" // GET /v1/subscribe lines
)

// HTTPStatus is the HTTP code of a commit answer: 200 when committed, 409
// Conflict when not (so tools that count 2xx count commits); a duplicate
// gets its original's code.
func (r CommitResult) HTTPStatus() int {
	if r.Committed {
		return 200
	}
	return 409
}

// StatusQuery is the query of GET /v1/status.
type StatusQuery struct {
	RequestID string
	// MinVersion: the client's lower bound on the commit's version (its
	// read_version); 0 when absent.
	MinVersion int64
}

// ErrMalformedEscape marks a query with a '%' not followed by two hex
// digits: the request is refused and, as in the seed, the connection
// closed (errors.Is on the *FieldError).
var ErrMalformedEscape = errors.New("malformed percent-escape")

// ParseStatusQuery parses "request_id=ID[&min_version=N]" (the query
// without '?'). minRequestIDLength is commit.min_request_id_length: an id
// shorter than that was never accepted by POST /v1/commit, so asking for
// it is an error, not a lookup. Errors are *FieldError naming the parameter.
func ParseStatusQuery(query []byte, minRequestIDLength int) (StatusQuery, error) {
	vals, err := parseQuery(query, "request_id", "min_version")
	if err != nil {
		return StatusQuery{}, err
	}
	q := StatusQuery{RequestID: vals[0]}
	switch {
	case q.RequestID == "":
		return StatusQuery{}, &FieldError{Field: "request_id", Msg: "required query parameter"}
	case !utf8.ValidString(q.RequestID):
		return StatusQuery{}, &FieldError{Field: "request_id", Msg: "must be valid UTF-8 once percent-decoded"}
	}
	if err := CheckRequestIDLength(q.RequestID, minRequestIDLength); err != nil {
		return StatusQuery{}, err
	}
	if q.MinVersion, err = versionParam("min_version", vals[1]); err != nil {
		return StatusQuery{}, err
	}
	return q, nil
}

// ParseSubscribeQuery parses "[from_version=N]" of GET /v1/subscribe; 0
// (or absent) means from the next commit on.
func ParseSubscribeQuery(query []byte) (fromVersion int64, err error) {
	vals, err := parseQuery(query, "from_version")
	if err != nil {
		return 0, err
	}
	return versionParam("from_version", vals[0])
}

// parseQuery decodes an application/x-www-form-urlencoded query ('&'
// separated name=value pairs, '+' for space, %XX escapes) and returns the
// value of each allowed name, in order ("" when absent). Unknown names,
// repeated names and malformed escapes are errors. Hand-written rather than
// net/url: its errors are worded for Go programmers ("invalid URL escape")
// and it cannot say which escape is malformed.
func parseQuery(query []byte, allowed ...string) ([]string, error) {
	vals := make([]string, len(allowed))
	seen := make([]bool, len(allowed))
	for off := 0; off <= len(query); {
		end := bytes.IndexByte(query[off:], '&')
		if end < 0 {
			end = len(query)
		} else {
			end += off
		}
		pair := query[off:end]
		pairOff := off
		off = end + 1
		if len(pair) == 0 {
			continue
		}
		rawName, rawValue, _ := bytes.Cut(pair, []byte("="))
		name, err := unescape(rawName, pairOff)
		if err != nil {
			return nil, err
		}
		value, err := unescape(rawValue, pairOff+len(rawName)+1)
		if err != nil {
			return nil, err
		}
		i := slices.Index(allowed, name)
		switch {
		case i < 0:
			return nil, &FieldError{Field: quoteName(name), Msg: "unknown query parameter; allowed: " + strings.Join(allowed, ", ")}
		case seen[i]:
			return nil, &FieldError{Field: name, Msg: "given more than once"}
		}
		seen[i], vals[i] = true, value
	}
	return vals, nil
}

// unescape decodes one name or value; at is its offset in the query, for
// the error.
func unescape(s []byte, at int) (string, error) {
	if bytes.IndexByte(s, '%') < 0 && bytes.IndexByte(s, '+') < 0 {
		return string(s), nil
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '+':
			out = append(out, ' ')
		case '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return "", &FieldError{Field: "query", Err: ErrMalformedEscape,
					Msg: fmt.Sprintf("malformed percent-escape at offset %d: '%%' must be followed by two hex digits", at+i)}
			}
			out = append(out, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		default:
			out = append(out, c)
		}
	}
	return string(out), nil
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// quoteName shows an unknown parameter name as given, quoted when it holds
// anything unusual, so the message stays one readable line.
func quoteName(name string) string {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x21 || c > 0x7e || c == '"' {
			return strconv.Quote(name)
		}
	}
	return name
}

func versionParam(name, s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, &FieldError{Field: name, Msg: fmt.Sprintf("must be a non-negative integer, got %q", s)}
	}
	return v, nil
}
