package loadtester

// How a {{data.COLUMN}} value is written where it goes (issue: a value
// with a space broke the request line, one with CR/LF added a header, one
// with & added query parameters). The template's own text is never
// re-encoded: only the values a data file brings.
//
//	in a path         one path segment: all but RFC 3986's unreserved
//	                  characters percent-encoded ("/" and "?" included)
//	in a query        form-encoded: a space as +, all but unreserved %XX
//	in a header       as it is; a value with CR, LF or NUL is refused
//	                  before the run (splitSegments)
//	in the body       as it is
//	{{json:data.C}}   escaped for the inside of a JSON string, anywhere
//	{{raw:data.C}}    as it is, anywhere (the opt-out for paths and queries)
type valueEncoding uint8

const (
	encRaw valueEncoding = iota
	encPathSegment
	encQuery
	encJSON
)

const upperHex = "0123456789ABCDEF"

// unreserved is RFC 3986's unreserved set: ALPHA DIGIT - . _ ~
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// appendEncoded appends v to dst as e writes it; it allocates only when
// dst must grow.
func appendEncoded(dst []byte, v string, e valueEncoding) []byte {
	switch e {
	case encPathSegment, encQuery:
		for i := 0; i < len(v); i++ {
			switch c := v[i]; {
			case unreserved(c):
				dst = append(dst, c)
			case c == ' ' && e == encQuery:
				dst = append(dst, '+')
			default:
				dst = append(dst, '%', upperHex[c>>4], upperHex[c&15])
			}
		}
		return dst
	case encJSON:
		for i := 0; i < len(v); i++ {
			switch c := v[i]; {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', upperHex[c>>4], upperHex[c&15])
			default:
				dst = append(dst, c)
			}
		}
		return dst
	}
	return append(dst, v...)
}

// encodedLen is how many bytes appendEncoded writes for v: what bounds on
// a request's size (HTTP/2's header list) count.
func (e valueEncoding) encodedLen(v string) int {
	n := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case e == encRaw || (e == encPathSegment || e == encQuery) && unreserved(c) || e == encQuery && c == ' ':
			n++
		case e == encJSON && (c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t'):
			n += 2
		case e == encJSON && c < 0x20:
			n += 6
		case e == encJSON:
			n++
		default:
			n += 3
		}
	}
	return n
}

// where is the part of a request a template's text sits in: it picks how
// a data value there is encoded.
type where uint8

const (
	inHeader where = iota // the request line's method and the header fields
	inTarget              // the request target: a path, then after a "?" the query
	inBody
)
