package http1

import "bytes"

// headerLine validates `name ":" OWS value OWS` and records the headers that
// matter for framing and routing.
func (p *Parser) headerLine(buf []byte, start, end int) *Error {
	colon, vs, ve, err := fieldLine(buf[start:end], errHeaderLine, errHeaderValue)
	if err != nil {
		return err
	}
	return p.st.knownHeader(buf[start:start+colon], span{start + vs, start + ve}, buf[start+vs:start+ve], p.maxRequestSize)
}

// fieldLine checks the syntax of one field line (a header or a trailer):
// no obsolete folding, a token name followed directly by ':', a value of
// visible characters, spaces and tabs. It returns the colon's index and the
// value's bounds without its surrounding whitespace. badLine and badValue are
// the refusals to use for a malformed line and a malformed value.
func fieldLine(line []byte, badLine, badValue *Error) (colon, vs, ve int, err *Error) {
	if line[0] == ' ' || line[0] == '\t' {
		return 0, 0, 0, errObsFold
	}
	for colon < len(line) && isTokenChar[line[colon]] {
		colon++
	}
	if colon == 0 || colon == len(line) || line[colon] != ':' {
		return 0, 0, 0, badLine // also refuses whitespace before the colon
	}
	vs, ve = colon+1, len(line)
	for vs < ve && (line[vs] == ' ' || line[vs] == '\t') {
		vs++
	}
	for ve > vs && (line[ve-1] == ' ' || line[ve-1] == '\t') {
		ve--
	}
	for _, c := range line[vs:ve] {
		if !isValueChar[c] {
			return 0, 0, 0, badValue
		}
	}
	return colon, vs, ve, nil
}

// headerID names the headers the parser acts on.
type headerID uint8

const (
	headerOther headerID = iota
	headerHost
	headerConnection
	headerExpect
	headerRequestID
	headerContentType
	headerContentLength
	headerTransferEncoding
)

// headerIDOf names a header from its name, a validated token. The switch on
// the name's length leaves at most two names to compare, a word at a time.
func headerIDOf(name []byte) headerID {
	switch len(name) {
	case 4:
		if foldEquals(name, "host") {
			return headerHost
		}
	case 6:
		if foldEquals(name, "expect") {
			return headerExpect
		}
	case 10:
		if foldEquals(name, "connection") {
			return headerConnection
		}
	case 12:
		if foldEquals(name, "x-request-id") {
			return headerRequestID
		}
		if foldEquals(name, "content-type") {
			return headerContentType
		}
	case 14:
		if foldEquals(name, "content-length") {
			return headerContentLength
		}
	case 17:
		if foldEquals(name, "transfer-encoding") {
			return headerTransferEncoding
		}
	}
	return headerOther
}

// knownHeader records the headers the parser acts on; others are only
// validated (and reachable through Request.RawHeaders).
func (f *headerFacts) knownHeader(name []byte, valSpan span, val []byte, maxRequestSize int) *Error {
	return f.record(headerIDOf(name), valSpan, val, maxRequestSize)
}

// record acts on one header: val is its validated value, valSpan where it
// lies in the buffer.
func (f *headerFacts) record(id headerID, valSpan span, val []byte, maxRequestSize int) *Error {
	switch id {
	case headerHost:
		f.hosts++
		if f.hosts > 1 {
			return errHostTwo // RFC 9112 §3.2: more than one Host
		}
	case headerConnection:
		f.connectionTokens(val)
	case headerExpect:
		if foldEquals(val, "100-continue") {
			f.expectContinue = true
		}
	case headerRequestID:
		if f.requestID.start < 0 {
			f.requestID = valSpan
		}
	case headerContentType:
		if f.contentType.start < 0 {
			f.contentType = valSpan
		}
	case headerContentLength:
		return f.setContentLength(val, maxRequestSize)
	case headerTransferEncoding:
		return f.transferEncoding(val)
	}
	return nil
}

func (f *headerFacts) setContentLength(val []byte, maxRequestSize int) *Error {
	if f.chunked {
		return errContentLengthTE
	}
	if len(val) == 0 || len(val) > 18 { // 18 digits cannot overflow int64
		return errContentLength
	}
	var n int64
	for _, c := range val {
		if !isDigit(c) {
			return errContentLength
		}
		n = n*10 + int64(c-'0')
	}
	if f.contentLength >= 0 && f.contentLength != n {
		return errContentLengthTwo
	}
	if n > int64(maxRequestSize) {
		return errBodyTooLarge // known at once: do not wait for the body
	}
	f.contentLength = n
	return nil
}

// transferEncoding accepts exactly one coding, chunked. Other codings are
// understood to exist but not implemented (501); a second Transfer-Encoding
// header would apply chunked twice (400).
func (f *headerFacts) transferEncoding(val []byte) *Error {
	switch {
	case f.version == HTTP10:
		return errTEHTTP10 // RFC 9112 §6.1: faulty framing
	case f.contentLength >= 0:
		return errContentLengthTE
	case f.chunked:
		return errTransferEncoding
	case len(val) == 0:
		return errTransferEncoding
	case !foldEquals(val, "chunked"):
		return errTEUnsupported
	}
	f.chunked = true
	return nil
}

// connectionTokens reads a Connection token list: close wins over keep-alive;
// other tokens (upgrade, header names) are ignored.
func (f *headerFacts) connectionTokens(val []byte) {
	for len(val) > 0 {
		tok := val
		if comma := bytes.IndexByte(val, ','); comma >= 0 {
			tok, val = val[:comma], val[comma+1:]
		} else {
			val = nil
		}
		tok = trimOWS(tok)
		switch {
		case foldEquals(tok, "close"):
			f.connClose = true
		case foldEquals(tok, "keep-alive"):
			f.connKeepAlive = true
		}
	}
}
