// The interfaces a protocol implements on top of the loops. Every method
// runs on the connection's loop goroutine.

package eventloop

// Handler is the protocol on top of the loop. Every method runs on the
// connection's loop goroutine.
type Handler interface {
	// OnOpen is called once per accepted connection before any data.
	OnOpen(c *Conn)
	// OnData gets all unconsumed input and returns how many bytes it
	// consumed (the rest is offered again with more input) and what the
	// loop should do with the connection, which the loop carries out once
	// OnData has returned. It stops early (returning what it consumed)
	// when c.Overloaded().
	OnData(c *Conn, in []byte) (consumed int, act Action)
	// OnTurnEnd is called once per loop turn, after the events of one
	// wait of the backend and the ready list were served: the place to hand the
	// turn's requests to the pipeline in one push.
	OnTurnEnd(l *Loop)
	// OnClose is called once after the descriptor is closed.
	OnClose(c *Conn)
}

// Action is what a handler asks of the loop for a connection; the loop
// carries it out in one place, after the callback returned.
type Action uint8

const (
	// Continue: keep reading and parsing.
	Continue Action = iota
	// StopInput: parse no more requests (Connection: close, a malformed
	// request); the responses owed are written, then the connection drains
	// and closes. Input after the request that asked is discarded.
	StopInput
)

// DrainHandler is implemented by a Handler that streams (GET /v1/subscribe):
// OnDrained runs on the loop when a connection with NotifyDrained set has
// written everything it owed after a short write (the socket took the rest), so the
// handler can give it more. It must not write to c itself (Stream from
// OnTurnEnd instead): flush calls it.
type DrainHandler interface {
	OnDrained(c *Conn)
}

// StopHandler is implemented by a Handler that wants to speak last at
// shutdown: OnStop runs on the loop when it begins to stop, before its
// connections start draining, so streams can end with a final line.
type StopHandler interface {
	OnStop(l *Loop)
}

// TimeoutHandler is implemented by a Handler that answers a request cut by
// the header or body timeout (HTTP's 408): OnRequestTimeout runs on the
// loop with input already stopped; it may queue one last response (after
// every response owed before it), and the connection then drains and
// closes. Without it the connection is just closed.
type TimeoutHandler interface {
	OnRequestTimeout(c *Conn)
}

// LastResponseMarker is implemented by a Handler whose protocol can tell a
// peer that a response is the connection's last (HTTP's Connection:
// close). At a graceful stop each connection's last owed response goes
// through MarkLast before it is queued, so a pipelining client stops
// sending instead of writing into a closing socket; the connection then
// closes after it. MarkLast runs on whichever goroutine queues the
// response (the loop or a Sender's) and must return a new slice rather
// than modify data, which may be shared.
type LastResponseMarker interface {
	MarkLast(data []byte) []byte
}
