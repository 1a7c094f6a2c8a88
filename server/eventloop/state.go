// A connection's life, in one field, and the transitions between its
// states: the only places that change it. Loop goroutine only; pausedFlag
// (conn.go) is the atomic mirror of statePaused that Senders read, and
// each transition that enters or leaves statePaused sets it.

package eventloop

// connState is where a connection is in its life. States only move
// forward, except statePaused, which returns to stateReading when the
// client catches up.
type connState uint8

const (
	// stateReading: requests are read and handed to the handler.
	stateReading connState = iota
	// statePaused: back-pressure; the client owes the server reading (or
	// has too many requests in flight), so the loop stops reading it
	// until it drains below the low-water mark.
	statePaused
	// stateInputStopped: no more requests are parsed (Connection: close, a
	// malformed request, a timeout, a stream's end); input is discarded,
	// owed responses are still written. The read pass that stopped it
	// begins the drain.
	stateInputStopped
	// stateDraining: finishing what is owed, then closing.
	stateDraining
	// stateLingering: SHUT_WR sent; input is read and discarded until the
	// peer's FIN or the linger deadline, so unread input never turns the
	// close into a RST that would destroy responses in flight.
	stateLingering
	// stateClosed: the descriptor is closed and the Conn out of the table.
	stateClosed
)

var stateNames = [...]string{"reading", "paused", "input-stopped", "draining", "lingering", "closed"}

func (s connState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "unknown"
}

// isGone tells whether c was closed (loop goroutine only).
func (c *Conn) isGone() bool { return c.state == stateClosed }

// parsing tells whether requests are still parsed from c's input.
func (c *Conn) parsing() bool { return c.state <= statePaused }

// finishing tells whether c drains, lingers or is closed.
func (c *Conn) finishing() bool { return c.state >= stateDraining }

// setPaused enters statePaused from stateReading, or returns to
// stateReading, keeping pausedFlag in step.
func (c *Conn) setPaused(paused bool) {
	switch {
	case paused && c.state == stateReading:
		c.state = statePaused
		c.pausedFlag.Store(true)
	case !paused && c.state == statePaused:
		c.state = stateReading
		c.pausedFlag.Store(false)
	}
}

// stopInput ends request parsing and drops the input not yet parsed.
func (c *Conn) stopInput() {
	if c.state <= statePaused {
		c.pausedFlag.Store(false)
		c.state = stateInputStopped
	}
	c.in = nil
}

// advance moves c forward to s (draining, lingering or closed), never
// back, leaving statePaused and its mirror behind.
func (c *Conn) advance(s connState) {
	if s <= c.state {
		return
	}
	if c.state == statePaused {
		c.pausedFlag.Store(false)
	}
	c.state = s
	if s >= stateInputStopped {
		c.in = nil
	}
}
