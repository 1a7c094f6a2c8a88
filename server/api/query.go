package api

import (
	"fmt"
	"net/url"
	"strconv"
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

// ParseStatusQuery parses "request_id=ID[&min_version=N]" (the query
// without '?'). Errors are *FieldError naming the parameter.
func ParseStatusQuery(query []byte) (StatusQuery, error) {
	vals, err := parseQuery(query, "request_id", "min_version")
	if err != nil {
		return StatusQuery{}, err
	}
	q := StatusQuery{RequestID: vals.Get("request_id")}
	if q.RequestID == "" {
		return StatusQuery{}, &FieldError{Field: "request_id", Msg: "required query parameter"}
	}
	if q.MinVersion, err = versionParam(vals, "min_version"); err != nil {
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
	return versionParam(vals, "from_version")
}

func parseQuery(query []byte, allowed ...string) (url.Values, error) {
	vals, err := url.ParseQuery(string(query))
	if err != nil {
		return nil, &FieldError{Field: "query", Msg: err.Error()}
	}
	for name, v := range vals {
		known := false
		for _, a := range allowed {
			known = known || name == a
		}
		if !known {
			return nil, &FieldError{Field: name, Msg: fmt.Sprintf("unknown query parameter; allowed: %v", allowed)}
		}
		if len(v) > 1 {
			return nil, &FieldError{Field: name, Msg: "given more than once"}
		}
	}
	return vals, nil
}

func versionParam(vals url.Values, name string) (int64, error) {
	s := vals.Get(name)
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, &FieldError{Field: name, Msg: fmt.Sprintf("must be a non-negative integer, got %q", s)}
	}
	return v, nil
}
