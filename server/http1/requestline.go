package http1

import "bytes"

// requestLine parses `method SP target SP HTTP-version`.
func (p *Parser) requestLine(buf []byte, start, end int) *Error {
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
	st.method = span{start, start + sp}
	rest := line[sp+1:]
	sp2 := bytes.IndexByte(rest, ' ')
	if sp2 <= 0 {
		return errRequestLine
	}
	targetStart := start + sp + 1
	st.target = span{targetStart, targetStart + sp2}
	st.query = noSpan
	for i, c := range rest[:sp2] {
		if !isTargetChar[c] {
			return errTarget
		}
		if c == '?' && st.query.start < 0 {
			st.query = span{targetStart + i + 1, targetStart + sp2}
		}
	}
	v, err := parseVersion(rest[sp2+1:])
	if err != nil {
		return err
	}
	st.version = v
	st.path = targetPath(buf, st.target, st.query)
	return nil
}

// targetPath is the path of a request-target: the origin-form itself
// (before '?'), or, for the absolute-form `http://host/path` (RFC 9112
// §3.2.2), what follows the authority; an absolute-form with no path is
// routed as "/" (noSpan here, filled in by fill). Other forms (authority-,
// asterisk-) are kept whole and simply match no route.
func targetPath(buf []byte, target, query span) span {
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
		return span{target.start, end}
	}
	if slash := bytes.IndexByte(t[scheme:], '/'); slash >= 0 {
		return span{target.start + scheme + slash, end}
	}
	return noSpan
}

func parseVersion(b []byte) (Version, *Error) {
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
