package http1

import "strconv"

// Framing is how a response is framed for the request it answers: whether
// the connection stays open after it, whether the client speaks HTTP/1.0
// (which closes after a response unless told otherwise, so keep-alive must
// be announced) and whether the request was a HEAD (the head alone). Every
// complete response the server sends goes through AppendFramed, so these
// rules, HEAD's included, live in this one place.
type Framing uint8

// Framing's bits.
const (
	FramingKeepAlive Framing = 1 << iota // the connection stays open after the response
	FramingHTTP10                        // the client speaks HTTP/1.0
	FramingHead                          // HEAD: the head alone, Content-Length included
)

// RequestFraming is the framing of the answer to r; head says r was a HEAD
// (its router, which serves HEAD as GET, knows).
func RequestFraming(r *Request, head bool) Framing {
	var f Framing
	if r.KeepAlive {
		f |= FramingKeepAlive
	}
	if r.Version == HTTP10 {
		f |= FramingHTTP10
	}
	if head {
		f |= FramingHead
	}
	return f
}

// KeepAlive reports whether the connection stays open after the response.
func (f Framing) KeepAlive() bool { return f&FramingKeepAlive != 0 }

// Closing is f for a response that ends its connection whatever its
// request asked.
func (f Framing) Closing() Framing { return f &^ FramingKeepAlive }

// AppendFramed appends a complete response to dst: status line,
// Content-Type (when contentType != ""), Content-Length, X-Response-ID
// (when requestID is non-empty and holds no CR, LF or NUL), the connection
// header f asks for ("Connection: close" unless keep-alive,
// "Connection: keep-alive" for an HTTP/1.0 client that keeps it), extra
// (more header lines, each ending in CRLF, such as "Allow: GET, HEAD\r\n";
// the caller owns its content), the empty line and body. For HEAD the body
// is left out and Content-Length stays the GET's (RFC 9110 §9.3.2, RFC 9112
// §6.3). For 1xx, 204 and 304 no Content-Length and no body are written; a
// status outside 100..599 is written as 500. It does not allocate beyond
// growing dst.
func AppendFramed(dst []byte, f Framing, status int, contentType string, body, requestID []byte, extra string) []byte {
	status = validStatus(status)
	dst = append(dst, statusLines[status]...)
	dst = appendContentType(dst, contentType)
	noBody := bodyless(status)
	if !noBody {
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(body)), 10)
		dst = append(dst, "\r\n"...)
	}
	dst = appendResponseID(dst, requestID)
	if f&FramingKeepAlive == 0 {
		dst = append(dst, "Connection: close\r\n"...)
	} else if f&FramingHTTP10 != 0 {
		dst = append(dst, "Connection: keep-alive\r\n"...)
	}
	if extra != "" { // most responses have none: no copy call for it
		dst = append(dst, extra...)
	}
	dst = append(dst, "\r\n"...)
	if !noBody && f&FramingHead == 0 {
		dst = append(dst, body...)
	}
	return dst
}

// AppendResponse is AppendFramed for an HTTP/1.1 request that is not a
// HEAD, with no extra header lines.
func AppendResponse(dst []byte, status int, contentType string, body []byte, requestID []byte, keepAlive bool) []byte {
	f := Framing(0)
	if keepAlive {
		f = FramingKeepAlive
	}
	return AppendFramed(dst, f, status, contentType, body, requestID, "")
}
