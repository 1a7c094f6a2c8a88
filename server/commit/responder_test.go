package commit

import (
	"weaseldb/server/http1"
)

// keepAlive is the Reply.Framing of a keep-alive HTTP/1.1 request.
const keepAlive = uint8(http1.FramingKeepAlive)

// testConn stands for the app layer's connection type; test entries have
// none (a nil *testConn), so nothing is sent.
type testConn struct{}

// tEntry is the tests' entry.
type tEntry = Entry[*testConn]

// testResponder frames answers as server/app's does (server/http1, with
// Reply.Framing an http1.Framing), so the tests read real responses; its
// Sender sends nothing (test entries have no Conn).
type testResponder struct{}

func (testResponder) AppendResponse(dst []byte, r *Reply[*testConn], status int, contentType string, body []byte) []byte {
	f := http1.Framing(r.Framing)
	if r.Close {
		f = f.Closing()
	}
	return http1.AppendFramed(dst, f, status, contentType, body, r.RequestID, "")
}

func (testResponder) AppendStreamHead(dst []byte, r *Reply[*testConn], status int, contentType string) []byte {
	return http1.AppendChunkedHeader(dst, status, contentType, r.RequestID)
}

func (testResponder) NewSender() Sender[*testConn] { return nopSender{} }

type nopSender struct{}

func (nopSender) Send(*testConn, uint64, []byte, bool) {}
func (nopSender) Flush()                               {}
