package http1

import (
	"bytes"
	"strconv"
)

// StatusText returns the reason phrase of a status code, "" if unknown.
func StatusText(code int) string {
	if code >= 0 && code < len(statusTexts) {
		return statusTexts[code]
	}
	return ""
}

var statusTexts = [600]string{
	100: "Continue",
	101: "Switching Protocols",
	200: "OK",
	201: "Created",
	202: "Accepted",
	204: "No Content",
	206: "Partial Content",
	301: "Moved Permanently",
	302: "Found",
	303: "See Other",
	304: "Not Modified",
	307: "Temporary Redirect",
	308: "Permanent Redirect",
	400: "Bad Request",
	401: "Unauthorized",
	403: "Forbidden",
	404: "Not Found",
	405: "Method Not Allowed",
	406: "Not Acceptable",
	408: "Request Timeout",
	409: "Conflict",
	410: "Gone",
	411: "Length Required",
	412: "Precondition Failed",
	413: "Content Too Large",
	414: "URI Too Long",
	415: "Unsupported Media Type",
	417: "Expectation Failed",
	422: "Unprocessable Content",
	426: "Upgrade Required",
	428: "Precondition Required",
	429: "Too Many Requests",
	431: "Request Header Fields Too Large",
	500: "Internal Server Error",
	501: "Not Implemented",
	502: "Bad Gateway",
	503: "Service Unavailable",
	504: "Gateway Timeout",
	505: "HTTP Version Not Supported",
	507: "Insufficient Storage",
}

// statusLines holds the precomputed "HTTP/1.1 <code> <text>\r\n" of every
// code in 100..599 (an unknown code gets an empty reason phrase), so writing
// a response never formats numbers for its status line.
var statusLines [600]string

func init() {
	for code := 100; code < len(statusLines); code++ {
		statusLines[code] = "HTTP/1.1 " + strconv.Itoa(code) + " " + statusTexts[code] + "\r\n"
	}
}

// validStatus maps a code outside 100..599 to 500, since a response must
// still go out.
func validStatus(status int) int {
	if status < 100 || status >= len(statusLines) {
		return 500
	}
	return status
}

// bodyless reports the statuses whose responses have no body and no
// Content-Length (RFC 9110 §8.6, §15.3.5, §15.4.5).
func bodyless(status int) bool {
	return status < 200 || status == 204 || status == 304
}

// headEnd ends a response's head.
var headEnd = []byte("\r\n\r\n")

// WithConnectionClose returns a complete response built by this package
// marked as the connection's last: "Connection: close" in its head (an
// HTTP/1.0 "Connection: keep-alive" becomes it). A response already so
// marked, or not a response head at all (a stream's chunk), is returned
// as is; otherwise the result is a new slice, so a shared response stays
// unchanged. For the last response a stopping server owes.
func WithConnectionClose(resp []byte) []byte {
	end := bytes.Index(resp, headEnd)
	if end < 0 || !bytes.HasPrefix(resp, []byte("HTTP/1.")) {
		return resp
	}
	head := resp[:end+2] // up to and with the last header line's CRLF
	if bytes.Contains(head, connClose) {
		return resp
	}
	out := make([]byte, 0, len(resp)+len(connClose))
	if i := bytes.Index(head, connKeepAlive); i >= 0 {
		out = append(out, head[:i+2]...)
		out = append(out, connClose[2:]...)
		out = append(out, head[i+len(connKeepAlive):]...)
	} else {
		out = append(out, head...)
		out = append(out, connClose[2:]...)
	}
	out = append(out, "\r\n"...)
	return append(out, resp[end+len(headEnd):]...)
}

var (
	connClose     = []byte("\r\nConnection: close\r\n")
	connKeepAlive = []byte("\r\nConnection: keep-alive\r\n")
)

func appendContentType(dst []byte, contentType string) []byte {
	if contentType != "" {
		dst = append(dst, "Content-Type: "...)
		dst = append(dst, contentType...)
		dst = append(dst, "\r\n"...)
	}
	return dst
}

func appendResponseID(dst []byte, requestID []byte) []byte {
	if len(requestID) > 0 && safeHeaderValue(requestID) {
		dst = append(dst, "X-Response-ID: "...)
		dst = append(dst, requestID...)
		dst = append(dst, "\r\n"...)
	}
	return dst
}

// safeHeaderValue refuses bytes that would end or corrupt the header line
// (response splitting). Parsed request ids always pass.
func safeHeaderValue(v []byte) bool {
	for _, c := range v {
		if c == '\r' || c == '\n' || c == 0 {
			return false
		}
	}
	return true
}

// AppendChunkedHeader appends the head of a streamed response
// (Transfer-Encoding: chunked); follow it with AppendChunk calls and one
// AppendLastChunk. The connection stays open after the last chunk.
func AppendChunkedHeader(dst []byte, status int, contentType string, requestID []byte) []byte {
	dst = append(dst, statusLines[validStatus(status)]...)
	dst = appendContentType(dst, contentType)
	dst = appendResponseID(dst, requestID)
	return append(dst, "Transfer-Encoding: chunked\r\n\r\n"...)
}

// AppendChunk appends data as one chunk. Empty data appends nothing, since an
// empty chunk would end the stream.
func AppendChunk(dst []byte, data []byte) []byte {
	if len(data) == 0 {
		return dst
	}
	dst = strconv.AppendUint(dst, uint64(len(data)), 16)
	dst = append(dst, "\r\n"...)
	dst = append(dst, data...)
	return append(dst, "\r\n"...)
}

// AppendLastChunk appends the chunk that ends a streamed response (no trailers).
func AppendLastChunk(dst []byte) []byte {
	return append(dst, "0\r\n\r\n"...)
}
