package http1

import "bytes"

// Default limits.
const (
	// DefaultMaxRequestSize is used when NewParser is given a size <= 0.
	DefaultMaxRequestSize = 1 << 20
	// DefaultMaxHeaderBytes bounds the header section (request line, header
	// lines and the final CRLF); NewParser caps it at maxRequestSize.
	DefaultMaxHeaderBytes = 64 << 10
	// maxChunkLineBytes bounds a chunk-size line with its extensions and CRLF.
	maxChunkLineBytes = 4 << 10
	// lastChunkBytes is the shortest possible end of a chunked body, "0\r\n\r\n";
	// a declared chunk that leaves no room for it is already too large.
	lastChunkBytes = 5
	// scratchKeepBytes: a de-chunking scratch buffer larger than this is
	// dropped when the next chunked body starts, so one large upload does not
	// pin memory on an idle keep-alive connection.
	scratchKeepBytes = 64 << 10
)

// Parser parses the requests of one connection. It is reusable and keeps its
// scan state between calls; it is not safe for concurrent use.
type Parser struct {
	maxRequestSize int
	maxHeaderBytes int
	hostOptional   bool // tests of framing only: do not insist on Host
	refusedHead    bool // the request the last Parse refused was a HEAD
	st             scanState
	scratch        []byte // de-chunked body of the current request
}

// NewParser returns a parser that refuses requests (headers and body) larger
// than maxRequestSize bytes: 431 when the header section alone is over its
// limit (min(DefaultMaxHeaderBytes, maxRequestSize)), 414 when the request
// line alone is, 413 otherwise; <= 0 means DefaultMaxRequestSize.
func NewParser(maxRequestSize int) *Parser {
	if maxRequestSize <= 0 {
		maxRequestSize = DefaultMaxRequestSize
	}
	return &Parser{
		maxRequestSize: maxRequestSize,
		maxHeaderBytes: min(DefaultMaxHeaderBytes, maxRequestSize),
		st:             freshState(),
	}
}

// SetMaxHeaderBytes changes the header section limit (capped at the request
// size limit; <= 0 restores the default). Call it between requests.
func (p *Parser) SetMaxHeaderBytes(n int) {
	if n <= 0 {
		n = DefaultMaxHeaderBytes
	}
	p.maxHeaderBytes = min(n, p.maxRequestSize)
}

// MaxRequestSize returns the request size limit.
func (p *Parser) MaxRequestSize() int { return p.maxRequestSize }

// Reset forgets a partially scanned request. Call it when the next Parse will
// not start at the same request (for example after the caller dropped bytes).
func (p *Parser) Reset() { p.st = freshState() }

// WantsContinue reports whether the request being parsed (Parse returned
// n == 0) has complete headers, a body still to come and
// `Expect: 100-continue`: the moment to send "HTTP/1.1 100 Continue".
func (p *Parser) WantsContinue() bool {
	return p.st.phase >= phaseBody && p.st.expectContinue
}

// RefusedHead reports whether the request that the last Parse refused (err
// != nil) was a HEAD request, as far as its first bytes tell: the answer to
// it must then carry no content (RFC 9110 §9.3.2), like any answer to HEAD.
func (p *Parser) RefusedHead() bool { return p.refusedHead }

// isHead tells whether the request at the start of buf (after the empty
// lines a request may follow) names the method HEAD, whether or not its
// request line was complete.
func (p *Parser) isHead(buf []byte) bool {
	if p.st.method.start >= 0 {
		return string(p.st.method.slice(buf)) == "HEAD"
	}
	return bytes.HasPrefix(bytes.TrimLeft(buf, "\r\n"), []byte("HEAD "))
}

// HeadDone reports whether the request being parsed (Parse returned
// n == 0) has its head complete and its body still to come.
func (p *Parser) HeadDone() bool { return p.st.phase >= phaseBody }

// Parse looks for one complete request at the start of buf.
//
// n > 0: req holds the request, which took the first n bytes of buf (the next
// request, if pipelined, starts at buf[n]). n == 0 and err == nil: the request
// is incomplete; call again when more bytes arrived, with buf starting at the
// same request (the scan resumes where it stopped). err != nil: the request is
// refused with an *Error; answer err.Status and close the connection.
//
// A request whose head is all in buf on the first call is read in one pass
// (headAtOnce); the line-by-line scan takes over for whatever that pass
// leaves: a head split across calls, anything unusual in it, and bodies.
func (p *Parser) Parse(buf []byte, req *Request) (n int, err error) {
	p.refusedHead = false
	if p.st.searched == 0 && p.st.phase == phaseRequestLine {
		n, perr, ok := p.headAtOnce(buf, req)
		if ok {
			if perr != nil {
				p.refusedHead = p.isHead(buf)
				p.Reset()
				return 0, perr
			}
			if n > 0 {
				return n, nil
			}
			// The head is in p.st; its body is still to scan.
		}
	} else if p.st.searched > len(buf) || p.st.pos > len(buf) {
		p.Reset() // not the bytes we saw last time: start over, never index past them
	}
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

// scan advances the line-by-line scan over buf. done: the request ends at
// st.pos.
func (p *Parser) scan(buf []byte) (done bool, err *Error) {
	st := &p.st
	for {
		switch st.phase {
		case phaseRequestLine, phaseHeaders:
			limitErr := errHeadersTooLarge
			if st.phase == phaseRequestLine {
				limitErr = errRequestLineLong
			}
			start, end, ok, err := p.nextLine(buf, p.maxHeaderBytes, limitErr)
			if err != nil || !ok {
				return false, err
			}
			if st.phase == phaseRequestLine {
				if start == end {
					continue // RFC 9112 §2.2: ignore empty lines before the request line
				}
				if err := p.requestLine(buf, start, end); err != nil {
					return false, err
				}
				st.phase = phaseHeaders
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
		case phaseBody:
			end := st.bodyStart + int(st.contentLength)
			if len(buf) < end {
				return false, nil
			}
			st.pos = end
			return true, nil
		case phaseChunkSize, phaseChunkData, phaseChunkDataEnd, phaseTrailers:
			return p.scanChunked(buf)
		}
	}
}

// nextLine finds the CRLF-terminated line starting at st.pos. The line may
// not reach index limit (or the request would exceed a size limit), which is
// refused with limitErr as soon as the buffer shows it. ok == false: the line
// is incomplete. On success st.pos moves past the CRLF and [start, end) is
// the line without it.
func (p *Parser) nextLine(buf []byte, limit int, limitErr *Error) (start, end int, ok bool, err *Error) {
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

// headersDone decides the framing once the empty line ended the headers.
func (p *Parser) headersDone() (done bool, err *Error) {
	st := &p.st
	if st.version == HTTP11 && st.hosts == 0 && !p.hostOptional {
		return false, errHostMissing // RFC 9112 §3.2
	}
	st.bodyStart = st.pos
	switch {
	case st.chunked:
		st.phase = phaseChunkSize
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
		st.phase = phaseBody
		return false, nil
	}
	return true, nil
}

// rootPath is the path of an absolute-form target that has none. Shared:
// capacity-limited like every other field, so it cannot be appended to in
// place.
var rootPath = []byte("/")[:1:1]

// fill turns the offsets of a complete request into slices of buf.
func (p *Parser) fill(buf []byte, req *Request) {
	st := &p.st
	*req = Request{
		Method:         st.method.slice(buf),
		Target:         st.target.slice(buf),
		Path:           st.path.slice(buf),
		Query:          st.query.slice(buf),
		Version:        st.version,
		KeepAlive:      st.keepAlive(),
		RequestID:      st.requestID.slice(buf),
		ContentType:    st.contentType.slice(buf),
		ContentLength:  st.contentLength,
		Chunked:        st.chunked,
		ExpectContinue: st.expectContinue,
		RawHeaders:     buf[st.headerStart:st.headerEnd:st.headerEnd],
	}
	if req.Path == nil {
		req.Path = rootPath // absolute-form without a path
	}
	switch {
	case st.chunked && len(p.scratch) > 0:
		req.Body = p.scratch[:len(p.scratch):len(p.scratch)]
	case st.contentLength > 0:
		req.Body = buf[st.bodyStart:st.pos:st.pos]
	}
}
