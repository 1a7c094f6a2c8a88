package http1

// scanChunked decodes chunks into p.scratch as they arrive, so a body that
// trickles in is copied once.
func (p *Parser) scanChunked(buf []byte) (done bool, err *Error) {
	st := &p.st
	for {
		switch st.phase {
		case phaseChunkSize:
			limit := min(st.pos+maxChunkLineBytes, p.maxRequestSize)
			limitErr := errChunkLineTooLong
			if p.maxRequestSize < st.pos+maxChunkLineBytes {
				limitErr = errRequestTooLarge
			}
			start, end, ok, err := p.nextLine(buf, limit, limitErr)
			if err != nil || !ok {
				return false, err
			}
			size, err := chunkSize(buf[start:end])
			if err != nil {
				return false, err
			}
			if size == 0 {
				st.phase = phaseTrailers
				continue
			}
			// The chunk, its CRLF and a last chunk must still fit.
			if int64(st.pos)+size+2+lastChunkBytes > int64(p.maxRequestSize) {
				return false, errRequestTooLarge
			}
			st.chunkLeft = int(size)
			st.phase = phaseChunkData
		case phaseChunkData:
			take := min(len(buf)-st.pos, st.chunkLeft)
			p.scratch = append(p.scratch, buf[st.pos:st.pos+take]...)
			st.pos += take
			st.searched = st.pos
			st.chunkLeft -= take
			if st.chunkLeft > 0 {
				return false, nil
			}
			st.phase = phaseChunkDataEnd
		case phaseChunkDataEnd:
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
			st.phase = phaseChunkSize
		case phaseTrailers:
			start, end, ok, err := p.nextLine(buf, p.maxRequestSize, errRequestTooLarge)
			if err != nil || !ok {
				return false, err
			}
			if start == end {
				return true, nil
			}
			if err := trailerLine(buf[start:end]); err != nil {
				return false, err
			}
		default:
			return false, nil
		}
	}
}

// chunkSize parses a chunk-size line as RFC 9112 §7.1 writes it:
//
//	chunk-size [ chunk-ext ]
//	chunk-ext     = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
//	chunk-ext-val = token / quoted-string
//
// Whitespace is allowed only where BWS stands: before a ';' or '=' and after
// one, never at the end of the line. Extensions are checked, not kept.
func chunkSize(line []byte) (int64, *Error) {
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
	if i == 0 || !chunkExtensions(line[i:]) {
		return 0, errChunkSize
	}
	return n, nil
}

// chunkExtensions reports whether rest, the line after the chunk size, is a
// well-formed (possibly empty) chunk-ext.
func chunkExtensions(rest []byte) bool {
	i := 0
	for i < len(rest) {
		i = skipBWS(rest, i)
		if i == len(rest) || rest[i] != ';' {
			return false // whitespace not followed by ';', or another byte
		}
		i = skipBWS(rest, i+1)
		name := i
		for i < len(rest) && isTokenChar[rest[i]] {
			i++
		}
		if i == name {
			return false // empty or non-token name
		}
		j := skipBWS(rest, i)
		if j == len(rest) || rest[j] != '=' {
			if j == len(rest) && j != i {
				return false // trailing whitespace
			}
			i = j
			continue
		}
		i = skipBWS(rest, j+1)
		if i == len(rest) {
			return false // '=' without a value
		}
		if rest[i] == '"' {
			end, ok := quotedString(rest, i)
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

func skipBWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return i
}

// quotedString returns the index after the quoted-string that starts at
// b[i] == '"' (RFC 9110 §5.6.4: qdtext is HTAB, SP, visible ASCII but '"'
// and '\\', or obs-text; a quoted-pair is '\\' and HTAB, SP, VCHAR or
// obs-text).
func quotedString(b []byte, i int) (int, bool) {
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

// trailerLine checks the field syntax of a trailer; trailers are otherwise
// ignored.
func trailerLine(line []byte) *Error {
	_, _, _, err := fieldLine(line, errTrailer, errTrailer)
	return err
}
