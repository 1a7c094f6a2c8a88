// The pipeline's side of answering: the app layer addresses each entry's
// answer (Reply) and frames and sends it (Responder, Sender); commit only
// decides each answer's status and body. So commit knows no connection
// type and no HTTP: it imports neither server/eventloop nor server/http1.
//
// Ownership: a Reply travels in its entry's ring slot (the stage holding
// the slot owns it); Responder's Append* run on the persist stage's
// goroutine alone; each release thread owns the Sender it made and uses it
// alone.

package commit

// Reply addresses an entry's answer. The app layer fills it when it
// submits the request; commit never looks into Conn or Framing: it hands
// the Reply back to the Responder and the Sender.
type Reply struct {
	// Conn is the connection the request came on, as the app layer knows
	// it; nil only in tests: nothing is sent.
	Conn any
	// Seq is the request's number on Conn: answers leave in its order.
	Seq uint64
	// RequestID is echoed in the answer; nil if none. Copied out of the
	// read buffer, which is reused.
	RequestID []byte
	// Framing is how the answer is framed on Conn (keep-alive, protocol
	// version, HEAD): the app layer's bits, opaque here. The persist
	// stage keeps one framed GET /ok answer per value.
	Framing uint8
	// Close is set by commit: the answer ends the connection whatever the
	// request asked (a refused subscription).
	Close bool
}

// Responder is the app layer's framing of answers.
type Responder interface {
	// AppendResponse appends the complete answer (status, body) to dst,
	// framed for r. It must copy body (the persist stage's scratch).
	AppendResponse(dst []byte, r *Reply, status int, contentType string, body []byte) []byte
	// AppendStreamHead appends the head of a streamed answer (a
	// subscription's) to dst, framed for r.
	AppendStreamHead(dst []byte, r *Reply, status int, contentType string) []byte
	// NewSender returns a Sender for one release thread.
	NewSender() Sender
}

// Sender delivers a release thread's answers to their connections.
type Sender interface {
	// Send queues resp, the framed answer addressed by r, in r.Seq's
	// order on r.Conn (closing it afterwards when the framing or r.Close
	// say so). The connection owns resp from then on. Answers to one
	// connection may be held until Flush or a Send to another.
	Send(r *Reply, resp []byte)
	// Flush delivers what Send holds; called once per release batch.
	Flush()
}
