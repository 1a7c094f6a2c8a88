// Package api holds the wire formats of weaseldb's data routes: the streaming
// parser of the POST /v1/commit body, the JSON encoders of every answer
// (commit, status, subscription lines, retention policies, errors), and the
// validation of retention policies. It knows nothing of the network or of the
// store, so every stage of the commit pipeline can call it.
package api

import (
	"encoding/base64"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// PreconditionType says what a precondition read.
type PreconditionType uint8

// Precondition types.
const (
	PointRead PreconditionType = iota + 1
	RangeRead
)

func (t PreconditionType) String() string {
	switch t {
	case PointRead:
		return "point_read"
	case RangeRead:
		return "range_read"
	}
	return fmt.Sprintf("PreconditionType(%d)", uint8(t))
}

// Precondition is one read the transaction depends on: it conflicts when the
// key (PointRead) or the range [Begin, End) (RangeRead) was written after the
// request's read_version.
type Precondition struct {
	Type       PreconditionType
	Key        []byte // PointRead
	Begin, End []byte // RangeRead, half-open
}

// OperationType says what an operation does.
type OperationType uint8

// Operation types.
const (
	Write OperationType = iota + 1
	Delete
	RangeDelete
)

func (t OperationType) String() string {
	switch t {
	case Write:
		return "write"
	case Delete:
		return "delete"
	case RangeDelete:
		return "range_delete"
	}
	return fmt.Sprintf("OperationType(%d)", uint8(t))
}

// Operation is one mutation applied when the transaction commits.
type Operation struct {
	Type       OperationType
	Key        []byte // Write, Delete
	Value      []byte // Write
	Begin, End []byte // RangeDelete, half-open
}

// CommitRequest is a parsed POST /v1/commit body. Keys and values are base64
// decoded; they share one backing array per request (see ParseCommit).
type CommitRequest struct {
	RequestID      string // "" when absent
	LeaderID       string // "" when absent
	ReadVersion    int64
	HasReadVersion bool
	Preconditions  []Precondition
	Operations     []Operation
}

// Reset empties r and keeps its slices' capacity for reuse.
func (r *CommitRequest) Reset() {
	clear(r.Preconditions)
	clear(r.Operations)
	*r = CommitRequest{Preconditions: r.Preconditions[:0], Operations: r.Operations[:0]}
}

// FieldError is a bad commit body: Field is the JSON path of the problem
// ("operations[2].key"), or "body" for the document as a whole.
type FieldError struct {
	Field string
	Msg   string
	// Err is a sentinel the caller may act on (errors.Is), such as
	// ErrMalformedEscape; nil for most errors.
	Err error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Unwrap returns Err.
func (e *FieldError) Unwrap() error { return e.Err }

// ParseCommit parses a commit body. minRequestIDLength is the configured
// commit.min_request_id_length. Every error is a *FieldError.
func ParseCommit(body []byte, minRequestIDLength int) (*CommitRequest, error) {
	req := &CommitRequest{}
	if err := ParseCommitInto(body, minRequestIDLength, req); err != nil {
		return nil, err
	}
	return req, nil
}

// ReadCommit reads at most limit bytes from r and parses them. A longer body
// is a *FieldError on "body" (the HTTP layer answers 413 before this).
func ReadCommit(r io.Reader, limit int64, minRequestIDLength int) (*CommitRequest, error) {
	body, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading commit body: %w", err)
	}
	if int64(len(body)) > limit {
		return nil, &FieldError{Field: "body", Msg: fmt.Sprintf("larger than %d bytes", limit)}
	}
	return ParseCommit(body, minRequestIDLength)
}

// ParseCommitInto parses body into req (which it resets first), so a caller
// can reuse a request's slices. On error req holds a partial result.
//
// Hand-written scanner: this runs for every commit (on the event loop, before
// the pipeline), and encoding/json's token API allocates per token. It
// reads the body once, front to back; keys and values are decoded straight
// into one backing array sized from the body (base64 shrinks by 3/4), so the
// request costs at most 1.75 times the body and a handful of allocations.
// The slices in req alias that array, never body, so body may be reused.
func ParseCommitInto(body []byte, minRequestIDLength int, req *CommitRequest) error {
	req.Reset()
	s := scanner{buf: body, arena: make([]byte, 0, base64.StdEncoding.DecodedLen(len(body)))}
	p := commitParser{s: &s, req: req, minIDLen: minRequestIDLength}
	return p.parse()
}

type commitParser struct {
	s        *scanner
	req      *CommitRequest
	minIDLen int
}

func (p *commitParser) parse() error {
	s := p.s
	if err := s.begin("body", '{', "a JSON object"); err != nil {
		return err
	}
	var seen [5]bool
	err := s.object("body", func(name []byte) error {
		idx, field := topField(name)
		if idx < 0 {
			return &FieldError{Field: string(name), Msg: "unknown field; allowed: request_id, leader_id, read_version, preconditions, operations"}
		}
		if seen[idx] {
			return &FieldError{Field: field, Msg: "duplicate field"}
		}
		seen[idx] = true
		return p.topValue(idx, field)
	})
	if err != nil {
		return err
	}
	s.skipWS()
	if s.pos != len(s.buf) {
		return s.syntax("body", "unexpected data after the JSON object")
	}
	if len(p.req.Preconditions) > 0 && !p.req.HasReadVersion {
		return &FieldError{Field: "read_version", Msg: "required when preconditions are given"}
	}
	return nil
}

var topFields = [...]string{"request_id", "leader_id", "read_version", "preconditions", "operations"}

func topField(name []byte) (int, string) {
	for i, f := range topFields {
		if string(name) == f {
			return i, f
		}
	}
	return -1, ""
}

func (p *commitParser) topValue(idx int, field string) error {
	switch idx {
	case 0:
		id, err := p.s.text(field)
		if err != nil {
			return err
		}
		if err := CheckRequestIDLength(id, p.minIDLen); err != nil {
			return err
		}
		p.req.RequestID = id
	case 1:
		id, err := p.s.text(field)
		if err != nil {
			return err
		}
		p.req.LeaderID = id
	case 2:
		v, err := p.s.nonNegativeInt(field)
		if err != nil {
			return err
		}
		p.req.ReadVersion, p.req.HasReadVersion = v, true
	case 3:
		return p.s.array(field, p.precondition)
	case 4:
		return p.s.array(field, p.operation)
	}
	return nil
}

// CheckRequestIDLength refuses a request_id shorter than min characters
// (commit.min_request_id_length counts characters, as its message says, not
// bytes: "é" is one). id must be valid UTF-8.
func CheckRequestIDLength(id string, min int) error {
	if len(id) >= min*utf8.UTFMax {
		return nil // enough bytes for min characters of any width: skip the count
	}
	if n := utf8.RuneCountInString(id); n < min {
		return &FieldError{Field: "request_id", Msg: fmt.Sprintf("must be at least %d characters, got %d", min, n)}
	}
	return nil
}

// element collects the fields an entry of preconditions or operations may
// carry; which are required depends on "type", which may come last.
type element struct {
	typ                    string
	key, value, begin, end []byte
	has                    [5]bool // type, key, value, begin, end
}

var elementFields = [...]string{"type", "key", "value", "begin", "end"}

// elemPath names entry i of list; built only for error messages, since
// formatting it for every entry would cost more than parsing the entry.
func elemPath(list string, i int) string {
	return list + "[" + strconv.Itoa(i) + "]"
}

func (p *commitParser) element(list string, i int, allowed string) (element, error) {
	var e element
	s := p.s
	if err := s.begin("", '{', "an object"); err != nil {
		return e, withField(err, elemPath(list, i))
	}
	err := s.object(list, func(name []byte) error {
		idx := -1
		for i, f := range elementFields {
			if string(name) == f {
				idx = i
			}
		}
		if idx < 0 {
			return &FieldError{Field: elemPath(list, i) + "." + string(name), Msg: "unknown field; allowed: " + allowed}
		}
		if e.has[idx] {
			return &FieldError{Field: elemPath(list, i) + "." + elementFields[idx], Msg: "duplicate field"}
		}
		e.has[idx] = true
		if idx == 0 {
			t, err := s.text("")
			if err != nil {
				return withField(err, elemPath(list, i)+".type")
			}
			e.typ = t
			return nil
		}
		b, err := s.base64("")
		if err != nil {
			return withField(err, elemPath(list, i)+"."+elementFields[idx])
		}
		switch idx {
		case 1:
			e.key = b
		case 2:
			e.value = b
		case 3:
			e.begin = b
		case 4:
			e.end = b
		}
		return nil
	})
	if err == nil && !e.has[0] {
		err = &FieldError{Field: elemPath(list, i) + ".type", Msg: "required"}
	}
	return e, err
}

// withField sets the field of a *FieldError made without one (the scanner
// is called with "" on the hot path so no path string is built).
func withField(err error, field string) error {
	if fe, ok := err.(*FieldError); ok && fe.Field == "" {
		fe.Field = field
	}
	return err
}

// shape checks that exactly the fields in want (besides type) are present.
func (e *element) shape(list string, i int, want ...int) error {
	path := func() string { return elemPath(list, i) }
	var needed [5]bool
	for _, f := range want {
		needed[f] = true
		if !e.has[f] {
			return &FieldError{Field: path() + "." + elementFields[f], Msg: "required for type " + e.typ}
		}
	}
	for f := 1; f < len(e.has); f++ {
		if e.has[f] && !needed[f] {
			return &FieldError{Field: path() + "." + elementFields[f], Msg: "not allowed for type " + e.typ}
		}
	}
	if needed[3] && string(e.end) < string(e.begin) {
		return &FieldError{Field: path() + ".end", Msg: "must not sort before begin"}
	}
	return nil
}

const (
	fKey, fValue, fBegin, fEnd = 1, 2, 3, 4
)

func (p *commitParser) precondition(i int) error {
	const list = "preconditions"
	e, err := p.element(list, i, "type, key, begin, end")
	if err != nil {
		return err
	}
	var pc Precondition
	switch e.typ {
	case "point_read":
		err = e.shape(list, i, fKey)
		pc = Precondition{Type: PointRead, Key: e.key}
	case "range_read":
		err = e.shape(list, i, fBegin, fEnd)
		pc = Precondition{Type: RangeRead, Begin: e.begin, End: e.end}
	default:
		err = &FieldError{Field: elemPath(list, i) + ".type", Msg: fmt.Sprintf(`must be "point_read" or "range_read", got %q`, e.typ)}
	}
	if err != nil {
		return err
	}
	p.req.Preconditions = append(p.req.Preconditions, pc)
	return nil
}

func (p *commitParser) operation(i int) error {
	const list = "operations"
	e, err := p.element(list, i, "type, key, value, begin, end")
	if err != nil {
		return err
	}
	var op Operation
	switch e.typ {
	case "write":
		err = e.shape(list, i, fKey, fValue)
		op = Operation{Type: Write, Key: e.key, Value: e.value}
	case "delete":
		err = e.shape(list, i, fKey)
		op = Operation{Type: Delete, Key: e.key}
	case "range_delete":
		err = e.shape(list, i, fBegin, fEnd)
		op = Operation{Type: RangeDelete, Begin: e.begin, End: e.end}
	default:
		err = &FieldError{Field: elemPath(list, i) + ".type", Msg: fmt.Sprintf(`must be "write", "delete" or "range_delete", got %q`, e.typ)}
	}
	if err != nil {
		return err
	}
	p.req.Operations = append(p.req.Operations, op)
	return nil
}
