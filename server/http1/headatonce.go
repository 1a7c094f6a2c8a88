package http1

import (
	"encoding/binary"
	"math/bits"
)

// headAtOnce reads the head of a request that is all in buf on the first
// call, in one forward pass that finds each line's end while it validates
// the line: the method and the header names byte by byte against the token
// table (they are short), the request-target likewise, the HTTP-version as
// one word, the header values eight bytes at a time (valueEnd), whose
// first control byte is the CR that ends the line. It refuses nothing on
// its own: whatever is not the common case (empty lines before the request
// line, a version other than 1.0 and 1.1, obs-fold, a control byte, a bare
// LF or CR, a head not complete within the buffer or the header limit) it
// leaves to the line-by-line scan, which starts over from the request's
// first byte, so every request is judged by the same rules however it
// arrives.
//
// ok == false: left to the scan (p.st untouched, still fresh). ok and err:
// refused by a header's meaning (knownHeader, Host, the size limit), exactly
// where the scan would refuse it. ok and n > 0: req holds the request, which
// has no body. ok and n == 0: the head is in p.st, its body still to scan.
func (p *Parser) headAtOnce(buf []byte, req *Request) (n int, err *Error, ok bool) {
	// Every line's LF must lie before the header limit (431 or 414 past
	// it), so a head that does not end before it is the scan's to judge.
	b := buf[:min(len(buf), p.maxHeaderBytes)]
	methodEnd := 0
	if len(b) >= 4 && binary.LittleEndian.Uint32(b) == getWord {
		methodEnd = 3
	} else {
		for methodEnd < len(b) && isTokenChar[b[methodEnd]] {
			methodEnd++
		}
	}
	if methodEnd == 0 || methodEnd >= len(b) || b[methodEnd] != ' ' {
		return 0, nil, false
	}
	target, query, ok := scanTarget(b, methodEnd+1)
	if !ok {
		return 0, nil, false
	}
	facts := freshFacts()
	if facts.version, ok = versionCRLF(b, target.end+1); !ok {
		return 0, nil, false
	}
	headerStart := target.end + 11
	pos := headerStart
	for {
		if pos+1 >= len(b) {
			return 0, nil, false
		}
		if b[pos] == '\r' {
			if b[pos+1] != '\n' {
				return 0, nil, false
			}
			break // the empty line that ends the head
		}
		next, err, ok := p.fieldAtOnce(b, pos, &facts)
		if !ok || err != nil {
			return 0, err, ok
		}
		pos = next
	}
	headerEnd := pos
	pos += 2
	path := span{target.start, target.end}
	if query.start >= 0 {
		path.end = query.start - 1
	}
	if b[target.start] != '/' {
		path = targetPath(buf, target, query) // absolute-form and the others
	}
	if facts.version == HTTP11 && facts.hosts == 0 && !p.hostOptional {
		return 0, errHostMissing, true // RFC 9112 §3.2
	}
	if facts.chunked || facts.contentLength > 0 {
		p.st = scanState{
			phase: phaseHeaders, pos: pos, searched: pos,
			method: span{0, methodEnd}, target: target, query: query, path: path,
			headerStart: headerStart, headerEnd: headerEnd, headerFacts: facts,
		}
		_, err := p.headersDone()
		return 0, err, true
	}
	// Field by field: a composite literal would be built aside and copied.
	req.Method = buf[:methodEnd:methodEnd]
	req.Target = buf[target.start:target.end:target.end]
	req.Path = rootPath // absolute-form without a path
	if path.start >= 0 {
		req.Path = buf[path.start:path.end:path.end]
	}
	req.Query = query.slice(buf)
	req.Version = facts.version
	req.KeepAlive = facts.keepAlive()
	req.RequestID = facts.requestID.slice(buf)
	req.ContentType = facts.contentType.slice(buf)
	req.ContentLength = facts.contentLength
	req.Chunked = false
	req.ExpectContinue = facts.expectContinue
	req.Body = nil
	req.RawHeaders = buf[headerStart:headerEnd:headerEnd]
	return pos, nil, true
}

// getWord is "GET " as a little-endian word.
const getWord = 'G' | 'E'<<8 | 'T'<<16 | ' '<<24

// scanTarget reads the request-target that starts at b[i], up to the space
// that must follow it, and the query after its first '?'.
func scanTarget(b []byte, i int) (target, query span, ok bool) {
	j := i
	for j < len(b) && targetClass[b[j]] == targetPlain {
		j++
	}
	query = noSpan
	if j < len(b) && b[j] == '?' {
		j++
		query.start = j
		for j < len(b) && targetClass[b[j]] != targetStop {
			j++
		}
	}
	if j == i || j >= len(b) || b[j] != ' ' {
		return span{}, span{}, false
	}
	if query.start >= 0 {
		query.end = j
	}
	return span{i, j}, query, true
}

// versionCRLF reads "HTTP/1.1\r\n" or "HTTP/1.0\r\n" at b[i].
func versionCRLF(b []byte, i int) (Version, bool) {
	if i+10 > len(b) || b[i+8] != '\r' || b[i+9] != '\n' {
		return 0, false
	}
	switch binary.LittleEndian.Uint64(b[i:]) {
	case http11Word:
		return HTTP11, true
	case http10Word:
		return HTTP10, true
	}
	return 0, false
}

// http11Word and http10Word are "HTTP/1.1" and "HTTP/1.0" as little-endian
// words.
var (
	http11Word = binary.LittleEndian.Uint64([]byte("HTTP/1.1"))
	http10Word = binary.LittleEndian.Uint64([]byte("HTTP/1.0"))
)

// fieldAtOnce reads the header line at b[pos] (not the empty line) and
// records what it says; next is the start of the line after it.
func (p *Parser) fieldAtOnce(b []byte, pos int, facts *headerFacts) (next int, err *Error, ok bool) {
	id, colon := knownName(b[pos:])
	if colon < 0 {
		// Not one the server acts on (knownName misses none of those that
		// are followed by ':'): only validated.
		nameStart := pos
		for pos < len(b) && isTokenChar[b[pos]] {
			pos++
		}
		if pos == nameStart || pos >= len(b) || b[pos] != ':' {
			return 0, nil, false
		}
	} else {
		pos += colon
	}
	pos++
	for pos < len(b) && (b[pos] == ' ' || b[pos] == '\t') {
		pos++
	}
	vs := pos
	cr, ok := valueEnd(b, pos)
	if !ok || cr+1 >= len(b) || b[cr+1] != '\n' {
		return 0, nil, false
	}
	ve := cr
	for ve > vs && (b[ve-1] == ' ' || b[ve-1] == '\t') {
		ve--
	}
	if id != headerOther {
		if err := facts.record(id, span{vs, ve}, b[vs:ve], p.maxRequestSize); err != nil {
			return 0, err, true
		}
	}
	return cr + 2, nil, true
}

// valueEnd finds the first byte from b[i] on that a field value cannot
// hold (RFC 9110 §5.5: a control byte but HTAB, or DEL), eight bytes at a
// time. ok: it is a CR, which ends the value; otherwise the value holds a
// byte to refuse, or goes on past b.
func valueEnd(b []byte, i int) (cr int, ok bool) {
	for {
		if i+8 <= len(b) {
			m := controlBytes(binary.LittleEndian.Uint64(b[i:]))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		} else {
			for i < len(b) && isValueChar[b[i]] {
				i++
			}
			if i == len(b) {
				return i, false
			}
		}
		switch b[i] {
		case '\r':
			return i, true
		case '\t':
			i++
		default:
			return i, false
		}
	}
}

// controlBytes flags the high bit of each byte of w below 0x20 or equal to
// 0x7f. Only the lowest flag is exact (a borrow can flag a byte above it),
// which is all valueEnd reads.
func controlBytes(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	below := (w - 0x20*ones) & ^w & highs
	del := w ^ 0x7f*ones
	return below | (del-ones)&^del&highs
}

// knownName matches, at the start of b, the name of a header the server
// acts on followed by its ':', a word at a time; colon is the colon's index
// (-1 and headerOther when it is none of them).
func knownName(b []byte) (id headerID, colon int) {
	if len(b) == 0 {
		return headerOther, -1
	}
	switch b[0] | 0x20 {
	case 'h':
		// Host is in every request: one word and its colon.
		if len(b) >= 5 && binary.LittleEndian.Uint32(b)|0x20202020 == hostWord && b[4] == ':' {
			return headerHost, 4
		}
	case 'c':
		switch {
		case contentLengthName.matches(b):
			return headerContentLength, 14
		case contentTypeName.matches(b):
			return headerContentType, 12
		case connectionName.matches(b):
			return headerConnection, 10
		}
	case 'x':
		if requestIDName.matches(b) {
			return headerRequestID, 12
		}
	case 't':
		if transferEncodingName.matches(b) {
			return headerTransferEncoding, 17
		}
	case 'e':
		if expectName.matches(b) {
			return headerExpect, 6
		}
	}
	return headerOther, -1
}

// nameWords is a header name with its colon, as the little-endian words
// that cover it (the last one overlapping the one before when the length
// is not a multiple of the word), each with a mask that folds case where
// the name has a letter and nowhere else: OR-ing 0x20 into a non-letter
// would let a control byte match ('-' is CR | 0x20).
type nameWords struct {
	length int
	offs   [3]int
	masks  [3]uint64
	words  [3]uint64
	n      int
	wide   bool // 8-byte words (4-byte ones for names shorter than 8 with the colon)
}

// hostWord is "host" as a little-endian word.
const hostWord = 'h' | 'o'<<8 | 's'<<16 | 't'<<24

var (
	expectName           = newNameWords("expect:")
	connectionName       = newNameWords("connection:")
	contentTypeName      = newNameWords("content-type:")
	requestIDName        = newNameWords("x-request-id:")
	contentLengthName    = newNameWords("content-length:")
	transferEncodingName = newNameWords("transfer-encoding:")
)

func newNameWords(lower string) nameWords {
	w := nameWords{length: len(lower), wide: len(lower) >= 8}
	size := 4
	if w.wide {
		size = 8
	}
	for off := 0; ; off += size {
		if off+size > len(lower) {
			off = len(lower) - size
		}
		var word, mask uint64
		for i := size - 1; i >= 0; i-- {
			c := lower[off+i]
			word, mask = word<<8|uint64(c), mask<<8
			if c >= 'a' && c <= 'z' {
				mask |= 0x20
			}
		}
		w.offs[w.n], w.words[w.n], w.masks[w.n] = off, word, mask
		w.n++
		if off+size == len(lower) {
			return w
		}
	}
}

// matches reports whether b starts with the name and its colon, in any case.
func (w *nameWords) matches(b []byte) bool {
	if len(b) < w.length {
		return false
	}
	for i := 0; i < w.n; i++ {
		var got uint64
		if w.wide {
			got = binary.LittleEndian.Uint64(b[w.offs[i]:])
		} else {
			got = uint64(binary.LittleEndian.Uint32(b[w.offs[i]:]))
		}
		if got|w.masks[i] != w.words[i] {
			return false
		}
	}
	return true
}
