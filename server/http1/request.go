// Package http1 is WeaselDB's HTTP/1.1 request parser and response writer.
//
// It is hand-written because it sits on the server's hot path: a typical
// `GET /ok` is parsed with zero allocations, request fields alias the caller's
// read buffer, and the parser is incremental (it keeps its scan position
// between calls, so a request that trickles in one byte at a time costs O(n),
// not O(n²)). See docs/http1.md for the exact acceptance rules.
package http1

import (
	"bytes"
	"strconv"
)

// Version is the HTTP version of a request.
type Version uint8

// The versions Parse accepts. Any other well-formed HTTP-version is refused
// with 505.
const (
	HTTP10 Version = 10
	HTTP11 Version = 11
)

// String returns "HTTP/1.0" or "HTTP/1.1" ("HTTP/?" for the zero value).
func (v Version) String() string {
	switch v {
	case HTTP10:
		return "HTTP/1.0"
	case HTTP11:
		return "HTTP/1.1"
	}
	return "HTTP/?"
}

// Request is one parsed request. Every slice except Body aliases the buffer
// given to Parse: copy what must outlive that buffer. Body aliases the buffer
// too for a Content-Length body; a chunked body is de-chunked into scratch
// owned by the Parser and is valid only until the next call to Parse on that
// Parser. Slices are capacity-limited, so appending to one never overwrites
// the buffer.
type Request struct {
	Method    []byte
	Target    []byte // the raw request-target
	Path      []byte // Target before '?'; for an absolute-form target (http://host/p), the path after the authority ("/" if none)
	Query     []byte // Target after '?', without it; nil when there is no '?'
	Version   Version
	KeepAlive bool // version default (1.1: yes, 1.0: no), then Connection: close / keep-alive

	RequestID   []byte // X-Request-Id value (OWS trimmed), nil if absent
	ContentType []byte // Content-Type value, nil if absent

	// ContentLength is the Content-Length header value, -1 when absent.
	ContentLength int64
	// Chunked is true when the body came with Transfer-Encoding: chunked.
	Chunked bool
	// ExpectContinue is true for `Expect: 100-continue`. Parse still waits for
	// the whole body; a server that wants to honour it sends
	// "HTTP/1.1 100 Continue\r\n\r\n" when Parser.WantsContinue reports true.
	ExpectContinue bool

	// Body is the decoded body; nil when there is none (or it is empty).
	Body []byte

	// RawHeaders is the header section: every header line with its CRLF,
	// without the request line and without the final empty line. Use Header
	// or VisitHeaders to read it.
	RawHeaders []byte
}

// Header returns the value (OWS trimmed) of the first header whose name
// equals name, ignoring ASCII case; nil if there is none.
func (r *Request) Header(name string) []byte {
	var found []byte
	r.VisitHeaders(func(n, v []byte) bool {
		if equalFoldAny(n, name) {
			found = v
			return false
		}
		return true
	})
	return found
}

// VisitHeaders calls fn with each header's name and value (OWS trimmed), in
// order, until fn returns false. The slices alias the request buffer.
func (r *Request) VisitHeaders(fn func(name, value []byte) bool) {
	raw := r.RawHeaders
	for len(raw) > 0 {
		lf := bytes.IndexByte(raw, '\n')
		if lf < 0 {
			return // not produced by Parse; nothing sensible to report
		}
		line := raw[:lf]
		raw = raw[lf+1:]
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			continue
		}
		if !fn(line[:colon:colon], trimOWS(line[colon+1:])) {
			return
		}
	}
}

// Error is the refusal of a request: the status the server should answer
// with (400, 413, 414, 431, 501 or 505) and a short reason. After an Error the
// connection's framing is lost, so the server answers and closes.
// The values are shared: do not modify them.
type Error struct {
	Status int
	Reason string
}

func (e *Error) Error() string {
	return "http1: " + strconv.Itoa(e.Status) + " " + StatusText(e.Status) + ": " + e.Reason
}

// Refusals. Preallocated so that refusing a request does not allocate.
var (
	errBareLF           = &Error{400, "line not terminated by CRLF"}
	errRequestLine      = &Error{400, "malformed request line"}
	errMethod           = &Error{400, "malformed method"}
	errTarget           = &Error{400, "malformed request target"}
	errVersion          = &Error{400, "malformed HTTP version"}
	errVersionUnsupp    = &Error{505, "unsupported HTTP version"}
	errHeaderLine       = &Error{400, "malformed header line"}
	errHeaderValue      = &Error{400, "control character in header value"}
	errObsFold          = &Error{400, "obsolete line folding"}
	errContentLength    = &Error{400, "malformed Content-Length"}
	errContentLengthTwo = &Error{400, "conflicting Content-Length values"}
	errContentLengthTE  = &Error{400, "both Content-Length and Transfer-Encoding"}
	errTransferEncoding = &Error{400, "malformed Transfer-Encoding"}
	errTEUnsupported    = &Error{501, "unsupported Transfer-Encoding"}
	errTEHTTP10         = &Error{400, "Transfer-Encoding in an HTTP/1.0 request"}
	errChunkSize        = &Error{400, "malformed chunk size"}
	errChunkLineTooLong = &Error{400, "chunk size line too long"}
	errChunkDataEnd     = &Error{400, "chunk data not followed by CRLF"}
	errTrailer          = &Error{400, "malformed trailer line"}
	errHostMissing      = &Error{400, "missing Host header"}
	errHostTwo          = &Error{400, "more than one Host header"}
	errHeadersTooLarge  = &Error{431, "header section too large"} // RFC 6585 §5; 413 is for the content
	errRequestLineLong  = &Error{414, "request line too long"}    // RFC 9112 §3: the target is what grows
	errRequestTooLarge  = &Error{413, "request too large"}
	errBodyTooLarge     = &Error{413, "body too large"}
)
