// The commit pipeline's answers, framed with server/http1 and sent through
// server/eventloop: the app layer's side of commit.Responder and
// commit.Sender, so server/commit knows neither.
//
// Ownership: responder is read-only after New (its Append* run on the
// persist stage's goroutine); each release thread owns the
// eventloop.Sender it made (eventloop's rule).

package app

import (
	"weaseldb/server/commit"
	"weaseldb/server/eventloop"
	"weaseldb/server/http1"
)

// The pipeline's entries and their addresses: the request's connection,
// and Reply.Framing its http1.Framing (set by enqueue).
type (
	entry = commit.Entry[*eventloop.Conn]
	reply = commit.Reply[*eventloop.Conn]
)

// responder implements commit.Responder.
type responder struct {
	direct bool // release threads may write to sockets themselves
}

func (p *responder) AppendResponse(dst []byte, r *reply, status int, contentType string, body []byte) []byte {
	return http1.AppendFramed(dst, replyFraming(r), status, contentType, body, r.RequestID, "")
}

// AppendStreamHead frames a subscription's head: a chunked stream, which
// the loop ends; its connection stays open for it whatever was asked.
func (p *responder) AppendStreamHead(dst []byte, r *reply, status int, contentType string) []byte {
	return http1.AppendChunkedHeader(dst, status, contentType, r.RequestID)
}

// NewSender is the event loop's own: commit's Sender, as it is, with no
// call in between.
func (p *responder) NewSender() commit.Sender[*eventloop.Conn] { return eventloop.NewSender(p.direct) }

// replyFraming is the framing enqueue gave r, closing if commit says so.
func replyFraming(r *reply) http1.Framing {
	f := http1.Framing(r.Framing)
	if r.Close {
		f = f.Closing()
	}
	return f
}
