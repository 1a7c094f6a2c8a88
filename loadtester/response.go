package loadtester

import (
	"bytes"
	"errors"
)

// Hand-written: this parser runs once per response on the network threads'
// hot path. It allocates nothing, never copies a body, and keeps its state
// between reads so a response may arrive in any number of pieces.

// maxHeaderBytes bounds a response's header block (and a chunk-size line);
// the connection buffer that holds a partial header is never larger.
const maxHeaderBytes = 64 << 10

// errMalformed is the error kind of every malformed response.
var errMalformed = errors.New("malformed HTTP response")

type parseState uint8

const (
	stHeader     parseState = iota // waiting for a complete status line + headers
	stBody                         // Content-Length body: remaining bytes to skip
	stChunkSize                    // waiting for a chunk-size line
	stChunkData                    // remaining bytes of a chunk's data
	stChunkCRLF                    // the CRLF after a chunk's data
	stTrailer                      // trailer lines after the last chunk
	stUntilClose                   // no length: the body ends when the server closes
)

// respParser reads responses one after another from a connection's byte
// stream. feed reports how much of data it used and whether a response ended.
type respParser struct {
	state     parseState
	remaining int64 // bytes left in a body or chunk
	status    int   // status code of the response being read
	close     bool  // the server will close after this response
	headOnly  bool  // requests are HEAD: responses carry no body
	// What --check reads, kept only when a check needs it (a run without
	// body checks copies no body): the header lines and up to
	// maxCheckedBody bytes of the body of the response being read.
	keepHead, keepBody bool
	head, body         []byte
	memo               headerMemo // the last header block parsed and what it said
}

// headerMemo is the last header block parseHeader read whole (its status
// line through the empty line) and what it made of it. A server answers a
// run's requests with the same header block, byte for byte, or nearly so
// (a Date line changes once a second): a block that repeats the last one
// is recognised by one comparison and its outcome reused, where parsing
// it again costs about 300 instructions a response, 40% of the client's
// own work 16 deep. The parse is a function of the block's bytes alone
// (headOnly is fixed for the parser's life), so the reuse is exact.
type headerMemo struct {
	block     []byte // at most maxMemoBlock bytes; empty: none yet
	headStart int    // where the header lines begin (after the status line)
	status    int
	close     bool
	state     parseState
	remaining int64
	// misses counts the blocks in a row that differed from the one before;
	// at memoMisses the memo rests for memoSkip responses (a server whose
	// every block differs, a request id in it, would otherwise pay the
	// comparison and the copy, about 200 instructions, for nothing).
	misses uint8
	skip   uint16
}

const (
	memoMisses = 4
	memoSkip   = 256
)

// maxMemoBlock bounds the header block a memo keeps, HTTP/1.1's here and
// HPACK's (h2blockmemo.go, where a response's block is tens of bytes once
// its fields are indexed): a longer one is parsed each time (its copy and
// comparison would cost more than they save).
const maxMemoBlock = 512

// maxCheckedBody bounds the body a check reads (the rest is not kept).
const maxCheckedBody = 1 << 20

// keep copies body bytes for the checks, up to maxCheckedBody.
func (p *respParser) keep(b []byte) {
	if p.keepBody && len(p.body) < maxCheckedBody {
		p.body = append(p.body, b[:min(len(b), maxCheckedBody-len(p.body))]...)
	}
}

// feed consumes bytes of the current response from data. done reports that a
// response ended (p.status and p.close describe it until the next feed).
// n == 0 && !done means more bytes are needed starting at data[0]: the caller
// keeps data and calls again with it extended.
func (p *respParser) feed(data []byte) (n int, done bool, err error) {
	for n < len(data) {
		switch p.state {
		case stHeader:
			used, err := p.parseHeader(data[n:])
			if err != nil || used == 0 {
				return n, false, err
			}
			n += used
			if p.state == stHeader { // an interim 1xx response: read the real one
				continue
			}
			if p.state == stBody && p.remaining == 0 {
				p.state = stHeader
				return n, true, nil
			}
		case stBody:
			take := min(int64(len(data)-n), p.remaining)
			p.keep(data[n : n+int(take)])
			n += int(take)
			p.remaining -= take
			if p.remaining == 0 {
				p.state = stHeader
				return n, true, nil
			}
		case stChunkSize:
			used, size, err := parseChunkSize(data[n:])
			if err != nil || used == 0 {
				return n, false, err
			}
			n += used
			if size == 0 {
				p.state = stTrailer
			} else {
				p.state, p.remaining = stChunkData, size
			}
		case stChunkData:
			take := min(int64(len(data)-n), p.remaining)
			p.keep(data[n : n+int(take)])
			n += int(take)
			p.remaining -= take
			if p.remaining == 0 {
				p.state = stChunkCRLF
			}
		case stChunkCRLF:
			if len(data)-n < 2 {
				return n, false, nil
			}
			if data[n] != '\r' || data[n+1] != '\n' {
				return n, false, errMalformed
			}
			n += 2
			p.state = stChunkSize
		case stTrailer:
			eol := bytes.IndexByte(data[n:], '\n')
			if eol < 0 {
				if len(data)-n > maxHeaderBytes {
					return n, false, errMalformed
				}
				return n, false, nil
			}
			line := data[n : n+eol]
			n += eol + 1
			if len(line) == 0 || len(line) == 1 && line[0] == '\r' {
				p.state = stHeader
				return n, true, nil
			}
		case stUntilClose:
			p.keep(data[n:])
			return len(data), false, nil
		}
	}
	return n, false, nil
}

// finishAtEOF reports whether the connection's end completes the response
// being read (a body delimited by the close), and clears that state.
func (p *respParser) finishAtEOF() bool {
	if p.state == stUntilClose {
		p.state = stHeader
		return true
	}
	return false
}

// parseHeader parses a complete status line and header block at the start of
// data, returning the bytes used (0: incomplete) and setting the body state.
func (p *respParser) parseHeader(data []byte) (int, error) {
	m := &p.memo
	if m.skip > 0 { // the blocks kept changing: parse without the memo for a while
		m.skip--
		return p.parseHeaderLines(data)
	}
	if len(m.block) > 0 && len(data) >= len(m.block) && bytes.Equal(data[:len(m.block)], m.block) {
		p.status, p.close, p.state, p.remaining = m.status, m.close, m.state, m.remaining
		p.body = p.body[:0]
		if p.keepHead {
			p.head = append(p.head[:0], data[m.headStart:len(m.block)]...)
		}
		m.misses = 0
		return len(m.block), nil
	}
	n, err := p.parseHeaderLines(data)
	if n > 0 && n <= maxMemoBlock {
		p.remember(data[:n])
	}
	return n, err
}

// remember keeps block, just parsed whole, and what the parser made of it.
func (p *respParser) remember(block []byte) {
	m := &p.memo
	if m.misses++; m.misses >= memoMisses {
		m.misses, m.skip = 0, memoSkip
	}
	m.block = append(m.block[:0], block...)
	m.headStart = bytes.IndexByte(block, '\n') + 1
	m.status, m.close, m.state, m.remaining = p.status, p.close, p.state, p.remaining
}

// parseHeaderLines is parseHeader without the memo: it reads the status
// line and every header line.
func (p *respParser) parseHeaderLines(data []byte) (int, error) {
	eol := bytes.IndexByte(data, '\n')
	if eol < 0 {
		return 0, tooLongIfFull(data)
	}
	status, http10, ok := parseStatusLine(trimCR(data[:eol]))
	if !ok {
		return 0, errMalformed
	}
	p.status, p.close = status, http10
	p.body = p.body[:0]
	// te: Transfer-Encoding seen (with a coding); chunked: its final coding,
	// over every line, is exactly "chunked" (RFC 9112 §6.3 rule 3).
	contentLength, te, chunked, keepAlive := int64(-1), false, false, false
	pos := eol + 1
	headStart := pos
	for {
		eol = bytes.IndexByte(data[pos:], '\n')
		if eol < 0 {
			return 0, tooLongIfFull(data)
		}
		line := trimCR(data[pos : pos+eol])
		pos += eol + 1
		if len(line) == 0 {
			break
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return 0, errMalformed
		}
		name, value := line[:colon], trimSpace(line[colon+1:])
		switch len(name) {
		case len("content-length"):
			if equalFoldASCII(name, "content-length") {
				n, ok := parseContentLength(value)
				if !ok || contentLength >= 0 && n != contentLength {
					contentLength = -2 // invalid: an error unless Transfer-Encoding frames the body
				} else if contentLength != -2 {
					contentLength = n
				}
			}
		case len("transfer-encoding"):
			if equalFoldASCII(name, "transfer-encoding") {
				if final, ok := finalCoding(value); ok {
					te, chunked = true, equalFoldASCII(final, "chunked")
				}
			}
		case len("connection"):
			if equalFoldASCII(name, "connection") {
				if containsFold(value, "close") {
					p.close = true
				} else if containsFold(value, "keep-alive") {
					keepAlive = true
				}
			}
		}
	}
	if p.keepHead {
		p.head = append(p.head[:0], data[headStart:pos]...) // the header lines, as received
	}
	if keepAlive && http10 && !te { // §6.1: HTTP/1.0 with Transfer-Encoding is never reused
		p.close = false
	}
	// RFC 9112 §6.3, as it applies to a client, in its order.
	switch {
	case status >= 100 && status < 200 && status != 101:
		p.state = stHeader // interim response: the final one follows
	case p.headOnly || status == 204 || status == 304 || status == 101:
		p.state, p.remaining = stBody, 0 // rule 1: no body, whatever the headers say
	case te && chunked:
		p.state = stChunkSize // rule 3: chunked is the final coding (it overrides Content-Length)
	case te:
		p.state, p.close = stUntilClose, true // rule 3: any other final coding: until the close
	case contentLength == -2:
		return 0, errMalformed // rule 4: an invalid or conflicting Content-Length
	case contentLength >= 0:
		p.state, p.remaining = stBody, contentLength // rule 5
	default:
		p.state, p.close = stUntilClose, true // rule 7: until the close
	}
	return pos, nil
}

// finalCoding is the last coding of a Transfer-Encoding line's list, OWS
// trimmed, empty elements skipped (RFC 9110 §5.6.1); ok is false for a line
// with none.
func finalCoding(value []byte) (final []byte, ok bool) {
	for len(value) > 0 {
		comma := bytes.LastIndexByte(value, ',')
		elem := trimSpace(value[comma+1:])
		if len(elem) > 0 {
			return elem, true
		}
		if comma < 0 {
			break
		}
		value = value[:comma]
	}
	return nil, false
}

// parseContentLength reads a Content-Length value: a decimal, or a list of
// the same decimal repeated (RFC 9112 §6.3 rule 4 lets a recipient take it
// as that one value).
func parseContentLength(value []byte) (int64, bool) {
	if bytes.IndexByte(value, ',') < 0 {
		return parseDecimal(value)
	}
	n := int64(-1)
	for elem := range bytes.SplitSeq(value, []byte(",")) {
		v, ok := parseDecimal(trimSpace(elem))
		if !ok || n >= 0 && v != n {
			return 0, false
		}
		n = v
	}
	return n, true
}

func tooLongIfFull(data []byte) error {
	if len(data) >= maxHeaderBytes {
		return errMalformed
	}
	return nil
}

// parseStatusLine accepts "HTTP/1.x SSS[ reason]".
func parseStatusLine(line []byte) (status int, http10, ok bool) {
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[8] != ' ' {
		return 0, false, false
	}
	if line[7] != '0' && line[7] != '1' {
		return 0, false, false
	}
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return 0, false, false
		}
		status = status*10 + int(c-'0')
	}
	if len(line) > 12 && line[12] != ' ' {
		return 0, false, false
	}
	return status, line[7] == '0', true
}

// parseChunkSize parses "hex[;ext]\r\n"; used == 0 means incomplete.
func parseChunkSize(data []byte) (used int, size int64, err error) {
	eol := bytes.IndexByte(data, '\n')
	if eol < 0 {
		if len(data) > maxHeaderBytes {
			return 0, 0, errMalformed
		}
		return 0, 0, nil
	}
	line := trimCR(data[:eol])
	if semi := bytes.IndexByte(line, ';'); semi >= 0 {
		line = line[:semi]
	}
	line = trimSpace(line)
	if len(line) == 0 || len(line) > 15 {
		return 0, 0, errMalformed
	}
	for _, c := range line {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, 0, errMalformed
		}
		size = size<<4 | int64(d)
	}
	return eol + 1, size, nil
}

func parseDecimal(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func trimCR(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\r' {
		return b[:len(b)-1]
	}
	return b
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// equalFoldASCII compares b with a lower-case ASCII string, ignoring case.
func equalFoldASCII(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range b {
		if lowerASCII(b[i]) != lower[i] {
			return false
		}
	}
	return true
}

func containsFold(b []byte, lower string) bool {
	for i := 0; i+len(lower) <= len(b); i++ {
		if equalFoldASCII(b[i:i+len(lower)], lower) {
			return true
		}
	}
	return false
}
