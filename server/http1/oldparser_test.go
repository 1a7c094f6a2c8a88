// The parser as it was before its rewrite for speed (issue 54), kept
// verbatim but for renamed identifiers as the reference that
// FuzzParserMatchesReference holds the rewrite to: the same bytes must give
// the same results, refusals and framing, however they are split.

package http1

import "bytes"

// refPhase is where the scan of the current request stands.
type refPhase uint8

const (
	refPhaseRequestLine refPhase = iota
	refPhaseHeaders
	refPhaseBody         // Content-Length body
	refPhaseChunkSize    // expecting a chunk-size line
	refPhaseChunkData    // inside chunk data
	refPhaseChunkDataEnd // expecting the CRLF after chunk data
	refPhaseTrailers     // after the last chunk, until the empty line
)

type refSpan struct{ start, end int }

func (s refSpan) slice(buf []byte) []byte {
	if s.start < 0 {
		return nil
	}
	return buf[s.start:s.end:s.end]
}

var refNoSpan = refSpan{-1, -1}

// refScanState is everything learned about the request being parsed, as offsets
// from the start of the buffer, so it survives the caller growing or moving
// its buffer between calls.
type refScanState struct {
	refPhase refPhase
	pos      int // start of the next unparsed line (or chunk data)
	searched int // how far the search for the next '\n' got (>= pos)

	reqStart    int // after any empty lines preceding the request line
	method      refSpan
	target      refSpan
	query       refSpan
	version     Version
	headerStart int
	headerEnd   int // start of the final empty line
	bodyStart   int

	path           refSpan // the request-target's path (absolute-form: after the authority)
	hosts          int     // Host header lines seen
	requestID      refSpan
	contentType    refSpan
	contentLength  int64
	chunked        bool
	connClose      bool
	connKeepAlive  bool
	expectContinue bool

	chunkLeft int // bytes of the current chunk still to copy
}

func refFreshState() refScanState {
	return refScanState{
		method: refNoSpan, target: refNoSpan, query: refNoSpan, path: refNoSpan,
		requestID: refNoSpan, contentType: refNoSpan, contentLength: -1,
	}
}

// refParser parses the requests of one connection. It is reusable and keeps its
// scan state between calls; it is not safe for concurrent use.
type refParser struct {
	maxRequestSize int
	maxHeaderBytes int
	hostOptional   bool // tests of framing only: do not insist on Host
	refusedHead    bool // the request the last Parse refused was a HEAD
	st             refScanState
	scratch        []byte // de-chunked body of the current request
}

// refNewParser returns a parser that refuses requests (headers and body) larger
// than maxRequestSize bytes: 431 when the header section alone is over its
// limit (min(DefaultMaxHeaderBytes, maxRequestSize)), 414 when the request
// line alone is, 413 otherwise; <= 0 means DefaultMaxRequestSize.
func refNewParser(maxRequestSize int) *refParser {
	if maxRequestSize <= 0 {
		maxRequestSize = DefaultMaxRequestSize
	}
	return &refParser{
		maxRequestSize: maxRequestSize,
		maxHeaderBytes: min(DefaultMaxHeaderBytes, maxRequestSize),
		st:             refFreshState(),
	}
}

// SetMaxHeaderBytes changes the header section limit (capped at the request
// size limit; <= 0 restores the default). Call it between requests.
func (p *refParser) SetMaxHeaderBytes(n int) {
	if n <= 0 {
		n = DefaultMaxHeaderBytes
	}
	p.maxHeaderBytes = min(n, p.maxRequestSize)
}

// MaxRequestSize returns the request size limit.
func (p *refParser) MaxRequestSize() int { return p.maxRequestSize }

// Reset forgets a partially scanned request. Call it when the next Parse will
// not start at the same request (for example after the caller dropped bytes).
func (p *refParser) Reset() { p.st = refFreshState() }

// WantsContinue reports whether the request being parsed (Parse returned
// n == 0) has complete headers, a body still to come and
// `Expect: 100-continue`: the moment to send "HTTP/1.1 100 Continue".
func (p *refParser) WantsContinue() bool {
	return p.st.refPhase >= refPhaseBody && p.st.expectContinue
}

// RefusedHead reports whether the request that the last Parse refused (err
// != nil) was a HEAD request, as far as its first bytes tell: the answer to
// it must then carry no content (RFC 9110 §9.3.2), like any answer to HEAD.
func (p *refParser) RefusedHead() bool { return p.refusedHead }

// isHead tells whether the request at the start of buf (after the empty
// lines a request may follow) names the method HEAD, whether or not its
// request line was complete.
func (p *refParser) isHead(buf []byte) bool {
	if p.st.method.start >= 0 {
		return string(p.st.method.slice(buf)) == "HEAD"
	}
	return bytes.HasPrefix(bytes.TrimLeft(buf, "\r\n"), []byte("HEAD "))
}

// HeadDone reports whether the request being parsed (Parse returned
// n == 0) has its head complete and its body still to come.
func (p *refParser) HeadDone() bool { return p.st.refPhase >= refPhaseBody }

// Parse looks for one complete request at the start of buf.
//
// n > 0: req holds the request, which took the first n bytes of buf (the next
// request, if pipelined, starts at buf[n]). n == 0 and err == nil: the request
// is incomplete; call again when more bytes arrived, with buf starting at the
// same request (the scan resumes where it stopped). err != nil: the request is
// refused with an *Error; answer err.Status and close the connection.
func (p *refParser) Parse(buf []byte, req *Request) (n int, err error) {
	if p.st.searched > len(buf) || p.st.pos > len(buf) {
		p.Reset() // not the bytes we saw last time: start over, never index past them
	}
	p.refusedHead = false
	done, perr := p.scan(buf)
	if perr != nil {
		p.refusedHead = p.isHead(buf)
		p.Reset()
		return 0, perr
	}
	if !done {
		return 0, nil
	}
	n = p.st.pos
	p.fill(buf, req)
	p.Reset()
	return n, nil
}

// scan advances the state machine over buf. done: the request ends at st.pos.
func (p *refParser) scan(buf []byte) (done bool, err *Error) {
	st := &p.st
	for {
		switch st.refPhase {
		case refPhaseRequestLine, refPhaseHeaders:
			limitErr := errHeadersTooLarge
			if st.refPhase == refPhaseRequestLine {
				limitErr = errRequestLineLong
			}
			start, end, ok, err := p.nextLine(buf, p.maxHeaderBytes, limitErr)
			if err != nil || !ok {
				return false, err
			}
			if st.refPhase == refPhaseRequestLine {
				if start == end {
					continue // RFC 9112 §2.2: ignore empty lines before the request line
				}
				if err := p.requestLine(buf, start, end); err != nil {
					return false, err
				}
				st.refPhase = refPhaseHeaders
				st.headerStart = st.pos
				continue
			}
			if start == end {
				st.headerEnd = start
				if done, err := p.headersDone(); done || err != nil {
					return done, err
				}
				continue
			}
			if err := p.headerLine(buf, start, end); err != nil {
				return false, err
			}
		case refPhaseBody:
			end := st.bodyStart + int(st.contentLength)
			if len(buf) < end {
				return false, nil
			}
			st.pos = end
			return true, nil
		case refPhaseChunkSize, refPhaseChunkData, refPhaseChunkDataEnd, refPhaseTrailers:
			return p.scanChunked(buf)
		}
	}
}

// nextLine finds the CRLF-terminated line starting at st.pos. The line may
// not reach index limit (or the request would exceed a size limit), which is
// refused with limitErr as soon as the buffer shows it. ok == false: the line
// is incomplete. On success st.pos moves past the CRLF and [start, end) is
// the line without it.
func (p *refParser) nextLine(buf []byte, limit int, limitErr *Error) (start, end int, ok bool, err *Error) {
	st := &p.st
	from := max(st.searched, st.pos)
	i := bytes.IndexByte(buf[from:], '\n')
	if i < 0 {
		st.searched = len(buf)
		// Incomplete: the line goes on at least to index len(buf).
		if len(buf) >= limit {
			return 0, 0, false, limitErr
		}
		return 0, 0, false, nil
	}
	lf := from + i
	if lf >= limit {
		return 0, 0, false, limitErr
	}
	start = st.pos
	if lf == start || buf[lf-1] != '\r' {
		return 0, 0, false, errBareLF
	}
	st.pos = lf + 1
	st.searched = lf + 1
	return start, lf - 1, true, nil
}

// requestLine parses `method SP target SP HTTP-version`.
func (p *refParser) requestLine(buf []byte, start, end int) *Error {
	st := &p.st
	st.reqStart = start
	line := buf[start:end]
	sp := bytes.IndexByte(line, ' ')
	if sp <= 0 {
		return errRequestLine
	}
	for _, c := range line[:sp] {
		if !isTokenChar[c] {
			return errMethod
		}
	}
	st.method = refSpan{start, start + sp}
	rest := line[sp+1:]
	sp2 := bytes.IndexByte(rest, ' ')
	if sp2 <= 0 {
		return errRequestLine
	}
	targetStart := start + sp + 1
	st.target = refSpan{targetStart, targetStart + sp2}
	st.query = refNoSpan
	for i, c := range rest[:sp2] {
		if !isTargetChar[c] {
			return errTarget
		}
		if c == '?' && st.query.start < 0 {
			st.query = refSpan{targetStart + i + 1, targetStart + sp2}
		}
	}
	v, err := refParseVersion(rest[sp2+1:])
	if err != nil {
		return err
	}
	st.version = v
	st.path = refTargetPath(buf, st.target, st.query)
	return nil
}

// refTargetPath is the path of a request-target: the origin-form itself
// (before '?'), or, for the absolute-form `http://host/path` (RFC 9112
// §3.2.2), what follows the authority; an absolute-form with no path is
// routed as "/" (refNoSpan here, filled in by fill). Other forms (authority-,
// asterisk-) are kept whole and simply match no route.
func refTargetPath(buf []byte, target, query refSpan) refSpan {
	end := target.end
	if query.start >= 0 {
		end = query.start - 1
	}
	t := buf[target.start:end]
	scheme := 0
	switch {
	case len(t) >= 7 && equalFold(t[:7], "http://"):
		scheme = 7
	case len(t) >= 8 && equalFold(t[:8], "https://"):
		scheme = 8
	default:
		return refSpan{target.start, end}
	}
	if slash := bytes.IndexByte(t[scheme:], '/'); slash >= 0 {
		return refSpan{target.start + scheme + slash, end}
	}
	return refNoSpan
}

func refParseVersion(b []byte) (Version, *Error) {
	if len(b) != 8 || string(b[:5]) != "HTTP/" || !isDigit(b[5]) || b[6] != '.' || !isDigit(b[7]) {
		return 0, errVersion
	}
	if b[5] == '1' && b[7] == '1' {
		return HTTP11, nil
	}
	if b[5] == '1' && b[7] == '0' {
		return HTTP10, nil
	}
	return 0, errVersionUnsupp
}

// headerLine validates `name ":" OWS value OWS` and records the headers that
// matter for framing and routing.
func (p *refParser) headerLine(buf []byte, start, end int) *Error {
	colon, vs, ve, err := refFieldLine(buf[start:end], errHeaderLine, errHeaderValue)
	if err != nil {
		return err
	}
	return p.knownHeader(buf[start:start+colon], refSpan{start + vs, start + ve}, buf[start+vs:start+ve])
}

// refFieldLine checks the syntax of one field line (a header or a trailer):
// no obsolete folding, a token name followed directly by ':', a value of
// visible characters, spaces and tabs. It returns the colon's index and the
// value's bounds without its surrounding whitespace. badLine and badValue are
// the refusals to use for a malformed line and a malformed value.
func refFieldLine(line []byte, badLine, badValue *Error) (colon, vs, ve int, err *Error) {
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

// knownHeader records the headers the parser acts on; others are only
// validated (and reachable through Request.RawHeaders).
func (p *refParser) knownHeader(name []byte, valSpan refSpan, val []byte) *Error {
	st := &p.st
	switch len(name) {
	case 4:
		if equalFold(name, "host") {
			st.hosts++
			if st.hosts > 1 {
				return errHostTwo // RFC 9112 §3.2: more than one Host
			}
		}
	case 10:
		if equalFold(name, "connection") {
			refConnectionTokens(val, st)
		}
	case 6:
		if equalFold(name, "expect") && equalFold(val, "100-continue") {
			st.expectContinue = true
		}
	case 12:
		if equalFold(name, "x-request-id") && st.requestID.start < 0 {
			st.requestID = valSpan
		} else if equalFold(name, "content-type") && st.contentType.start < 0 {
			st.contentType = valSpan
		}
	case 14:
		if equalFold(name, "content-length") {
			return p.contentLength(val)
		}
	case 17:
		if equalFold(name, "transfer-encoding") {
			return p.transferEncoding(val)
		}
	}
	return nil
}

func (p *refParser) contentLength(val []byte) *Error {
	st := &p.st
	if st.chunked {
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
	if st.contentLength >= 0 && st.contentLength != n {
		return errContentLengthTwo
	}
	if n > int64(p.maxRequestSize) {
		return errBodyTooLarge // known at once: do not wait for the body
	}
	st.contentLength = n
	return nil
}

// transferEncoding accepts exactly one coding, chunked. Other codings are
// understood to exist but not implemented (501); a second Transfer-Encoding
// header would apply chunked twice (400).
func (p *refParser) transferEncoding(val []byte) *Error {
	st := &p.st
	switch {
	case st.version == HTTP10:
		return errTEHTTP10 // RFC 9112 §6.1: faulty framing
	case st.contentLength >= 0:
		return errContentLengthTE
	case st.chunked:
		return errTransferEncoding
	case len(val) == 0:
		return errTransferEncoding
	case !equalFold(val, "chunked"):
		return errTEUnsupported
	}
	st.chunked = true
	return nil
}

// refConnectionTokens reads a Connection token list: close wins over keep-alive;
// other tokens (upgrade, header names) are ignored.
func refConnectionTokens(val []byte, st *refScanState) {
	for len(val) > 0 {
		tok := val
		if comma := bytes.IndexByte(val, ','); comma >= 0 {
			tok, val = val[:comma], val[comma+1:]
		} else {
			val = nil
		}
		tok = trimOWS(tok)
		switch {
		case equalFold(tok, "close"):
			st.connClose = true
		case equalFold(tok, "keep-alive"):
			st.connKeepAlive = true
		}
	}
}

// headersDone decides the framing once the empty line ended the headers.
func (p *refParser) headersDone() (done bool, err *Error) {
	st := &p.st
	if st.version == HTTP11 && st.hosts == 0 && !p.hostOptional {
		return false, errHostMissing // RFC 9112 §3.2
	}
	st.bodyStart = st.pos
	switch {
	case st.chunked:
		st.refPhase = refPhaseChunkSize
		if cap(p.scratch) > scratchKeepBytes {
			p.scratch = nil
		}
		p.scratch = p.scratch[:0]
		if st.bodyStart+lastChunkBytes > p.maxRequestSize {
			return false, errRequestTooLarge
		}
		return false, nil
	case st.contentLength > 0:
		if int64(st.bodyStart)+st.contentLength > int64(p.maxRequestSize) {
			return false, errRequestTooLarge
		}
		st.refPhase = refPhaseBody
		return false, nil
	}
	return true, nil
}

// scanChunked decodes chunks into p.scratch as they arrive, so a body that
// trickles in is copied once.
func (p *refParser) scanChunked(buf []byte) (done bool, err *Error) {
	st := &p.st
	for {
		switch st.refPhase {
		case refPhaseChunkSize:
			limit := min(st.pos+maxChunkLineBytes, p.maxRequestSize)
			limitErr := errChunkLineTooLong
			if p.maxRequestSize < st.pos+maxChunkLineBytes {
				limitErr = errRequestTooLarge
			}
			start, end, ok, err := p.nextLine(buf, limit, limitErr)
			if err != nil || !ok {
				return false, err
			}
			size, err := refChunkSize(buf[start:end])
			if err != nil {
				return false, err
			}
			if size == 0 {
				st.refPhase = refPhaseTrailers
				continue
			}
			// The chunk, its CRLF and a last chunk must still fit.
			if int64(st.pos)+size+2+lastChunkBytes > int64(p.maxRequestSize) {
				return false, errRequestTooLarge
			}
			st.chunkLeft = int(size)
			st.refPhase = refPhaseChunkData
		case refPhaseChunkData:
			take := min(len(buf)-st.pos, st.chunkLeft)
			p.scratch = append(p.scratch, buf[st.pos:st.pos+take]...)
			st.pos += take
			st.searched = st.pos
			st.chunkLeft -= take
			if st.chunkLeft > 0 {
				return false, nil
			}
			st.refPhase = refPhaseChunkDataEnd
		case refPhaseChunkDataEnd:
			// Check each byte as soon as it is there, whatever the split.
			if len(buf) > st.pos && buf[st.pos] != '\r' {
				return false, errChunkDataEnd
			}
			if len(buf) > st.pos+1 && buf[st.pos+1] != '\n' {
				return false, errChunkDataEnd
			}
			if len(buf) < st.pos+2 {
				return false, nil
			}
			st.pos += 2
			st.searched = st.pos
			st.refPhase = refPhaseChunkSize
		case refPhaseTrailers:
			start, end, ok, err := p.nextLine(buf, p.maxRequestSize, errRequestTooLarge)
			if err != nil || !ok {
				return false, err
			}
			if start == end {
				return true, nil
			}
			if err := refTrailerLine(buf[start:end]); err != nil {
				return false, err
			}
		default:
			return false, nil
		}
	}
}

// refChunkSize parses a chunk-size line as RFC 9112 §7.1 writes it:
//
//	chunk-size [ chunk-ext ]
//	chunk-ext     = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
//	chunk-ext-val = token / quoted-string
//
// Whitespace is allowed only where BWS stands: before a ';' or '=' and after
// one, never at the end of the line. Extensions are checked, not kept.
func refChunkSize(line []byte) (int64, *Error) {
	i := 0
	var n int64
	for i < len(line) {
		d := hexValue[line[i]]
		if d < 0 {
			break
		}
		if i == 15 { // 15 hex digits cannot overflow int64
			return 0, errChunkSize
		}
		n = n<<4 | int64(d)
		i++
	}
	if i == 0 || !refChunkExtensions(line[i:]) {
		return 0, errChunkSize
	}
	return n, nil
}

// refChunkExtensions reports whether rest, the line after the chunk size, is a
// well-formed (possibly empty) chunk-ext.
func refChunkExtensions(rest []byte) bool {
	i := 0
	for i < len(rest) {
		i = refSkipBWS(rest, i)
		if i == len(rest) || rest[i] != ';' {
			return false // whitespace not followed by ';', or another byte
		}
		i = refSkipBWS(rest, i+1)
		name := i
		for i < len(rest) && isTokenChar[rest[i]] {
			i++
		}
		if i == name {
			return false // empty or non-token name
		}
		j := refSkipBWS(rest, i)
		if j == len(rest) || rest[j] != '=' {
			if j == len(rest) && j != i {
				return false // trailing whitespace
			}
			i = j
			continue
		}
		i = refSkipBWS(rest, j+1)
		if i == len(rest) {
			return false // '=' without a value
		}
		if rest[i] == '"' {
			end, ok := refQuotedString(rest, i)
			if !ok {
				return false
			}
			i = end
			continue
		}
		value := i
		for i < len(rest) && isTokenChar[rest[i]] {
			i++
		}
		if i == value {
			return false
		}
	}
	return true
}

func refSkipBWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return i
}

// refQuotedString returns the index after the quoted-string that starts at
// b[i] == '"' (RFC 9110 §5.6.4: qdtext is HTAB, SP, visible ASCII but '"'
// and '\\', or obs-text; a quoted-pair is '\\' and HTAB, SP, VCHAR or
// obs-text).
func refQuotedString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, true
		case c == '\\':
			i++
			if i == len(b) || !isValueChar[b[i]] {
				return 0, false
			}
		case !isValueChar[c]:
			return 0, false
		}
	}
	return 0, false // unterminated
}

// refTrailerLine checks the field syntax of a trailer; trailers are otherwise
// ignored.
func refTrailerLine(line []byte) *Error {
	_, _, _, err := refFieldLine(line, errTrailer, errTrailer)
	return err
}

// refRootPath is the path of an absolute-form target that has none. Shared:
// capacity-limited like every other field, so it cannot be appended to in
// place.
var refRootPath = []byte("/")[:1:1]

// fill turns the offsets of a complete request into slices of buf.
func (p *refParser) fill(buf []byte, req *Request) {
	st := &p.st
	keepAlive := !st.connClose
	if st.version == HTTP10 {
		keepAlive = st.connKeepAlive && !st.connClose
	}
	*req = Request{
		Method:         st.method.slice(buf),
		Target:         st.target.slice(buf),
		Path:           st.path.slice(buf),
		Query:          st.query.slice(buf),
		Version:        st.version,
		KeepAlive:      keepAlive,
		RequestID:      st.requestID.slice(buf),
		ContentType:    st.contentType.slice(buf),
		ContentLength:  st.contentLength,
		Chunked:        st.chunked,
		ExpectContinue: st.expectContinue,
		RawHeaders:     buf[st.headerStart:st.headerEnd:st.headerEnd],
	}
	if req.Path == nil {
		req.Path = refRootPath // absolute-form without a path
	}
	switch {
	case st.chunked && len(p.scratch) > 0:
		req.Body = p.scratch[:len(p.scratch):len(p.scratch)]
	case st.contentLength > 0:
		req.Body = buf[st.bodyStart:st.pos:st.pos]
	}
}
