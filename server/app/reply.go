// The commit pipeline's answers, framed with server/http1 and sent through
// server/eventloop: the app layer's side of commit.Responder and
// commit.Sender, so server/commit knows neither.
//
// Ownership: responder is read-only after New (its Append* run on the
// persist stage's goroutine); each sender belongs to the one release
// thread that made it (eventloop.Sender's rule).

package app

import (
	"weaseldb/server/commit"
	"weaseldb/server/eventloop"
	"weaseldb/server/http1"
)

// responder implements commit.Responder. Reply.Conn is the request's
// *eventloop.Conn and Reply.Framing its http1.Framing (set by enqueue).
type responder struct {
	direct bool // release threads may write to sockets themselves
}

func (p *responder) AppendResponse(dst []byte, r *commit.Reply, status int, contentType string, body []byte) []byte {
	return http1.AppendFramed(dst, replyFraming(r), status, contentType, body, r.RequestID, "")
}

// AppendStreamHead frames a subscription's head: a chunked stream, which
// the loop ends; its connection stays open for it whatever was asked.
func (p *responder) AppendStreamHead(dst []byte, r *commit.Reply, status int, contentType string) []byte {
	return http1.AppendChunkedHeader(dst, status, contentType, r.RequestID)
}

func (p *responder) NewSender() commit.Sender { return (*sender)(eventloop.NewSender(p.direct)) }

// replyFraming is the framing enqueue gave r, closing if commit says so.
func replyFraming(r *commit.Reply) http1.Framing {
	f := http1.Framing(r.Framing)
	if r.Close {
		f = f.Closing()
	}
	return f
}

// sender is an eventloop.Sender that takes commit's Replies.
type sender eventloop.Sender

func (s *sender) Send(r *commit.Reply, resp []byte) {
	c, _ := r.Conn.(*eventloop.Conn)
	if c == nil {
		return // not one of ours (enqueue sets every Conn): nothing to send to
	}
	(*eventloop.Sender)(s).Send(c, r.Seq, resp, !replyFraming(r).KeepAlive())
}

func (s *sender) Flush() { (*eventloop.Sender)(s).Flush() }
