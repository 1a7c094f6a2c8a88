// The pipeline's side of answering: the app layer addresses each entry's
// answer (Reply), frames it (Responder) and sends it (Sender); commit only
// decides each answer's status and body. So commit knows no connection
// type (it is the type parameter C) and no HTTP: it imports neither
// server/eventloop nor server/http1.
//
// Ownership: a Reply travels in its entry's ring slot (the stage holding
// the slot owns it); Responder's Append* run on the persist stage's
// goroutine alone; each release thread owns the Sender it made and uses it
// alone.

package commit

// Reply addresses an entry's answer. The app layer fills it when it
// submits the request; commit never looks into Conn or Framing: it hands
// them back to the Responder and the Sender.
type Reply[C comparable] struct {
	// Conn is the connection the request came on; the zero C only in
	// tests: nothing is sent.
	Conn C
	// Seq is the request's number on Conn: answers leave in its order.
	Seq uint64
	// RequestID is echoed in the answer; nil if none. Copied out of the
	// read buffer, which is reused.
	RequestID []byte
	// Framing is how the answer is framed on Conn (keep-alive, protocol
	// version, HEAD): the app layer's bits, opaque here. The persist
	// stage keeps one framed GET /ok answer per value.
	Framing uint8
	// Close says the answer ends the connection: the app layer sets it
	// when the request did not ask to keep it, commit when it refuses a
	// subscription (then the framing must say so too: Connection: close).
	Close bool
}

// Responder is the app layer's framing of answers.
type Responder[C comparable] interface {
	// AppendResponse appends the complete answer (status, body) to dst,
	// framed for r (closing the connection when r.Close says so). It must
	// copy body (the persist stage's scratch).
	AppendResponse(dst []byte, r *Reply[C], status int, contentType string, body []byte) []byte
	// AppendStreamHead appends the head of a streamed answer (a
	// subscription's) to dst, framed for r.
	AppendStreamHead(dst []byte, r *Reply[C], status int, contentType string) []byte
	// NewSender returns a Sender for one release thread.
	NewSender() Sender[C]
}

// Sender delivers a release thread's answers to their connections
// (server/eventloop's Sender is one).
type Sender[C comparable] interface {
	// Send queues resp, the framed answer to request seq of conn, in seq's
	// order on conn, closing conn after it when closeAfter. conn owns resp
	// from then on. Answers may be held until Flush or a Send to another
	// connection.
	Send(conn C, seq uint64, resp []byte, closeAfter bool)
	// Flush delivers what Send holds; called once per release batch.
	Flush()
}
