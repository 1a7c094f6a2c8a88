package loadtester

// The connection ramp (--concurrency-stages), the load mode (mode.go) of
// a closed loop whose connections come and go: the ramp's goroutine moves
// the number wanted (connramp.go); a connection whose slot is no longer
// wanted sends nothing more and closes once nothing is in flight.
//
// Who owns what: loop thread only, like the rest of a netThread; the
// number wanted is the runner's, atomic (connramp.go).

// rampedLoop is the closed loop of its thread under a connection ramp.
type rampedLoop struct{ closedLoop }

func (l *rampedLoop) connUp(c *conn, now int64) { l.fill(c, now) }
func (l *rampedLoop) served(c *conn, now int64) { l.fill(c, now) }

// fill tops c up as the closed loop does while its slot is wanted.
func (l *rampedLoop) fill(c *conn, now int64) {
	t := l.t
	if now >= t.acct.win.closeAt || c.noNew {
		return
	}
	if l.unwanted(c) { // the ramp went below its slot: it closes once nothing is in flight
		if c.inflight == 0 {
			t.closeConn(c, false)
		}
		return
	}
	l.closedLoop.served(c, now)
}

// unwanted reports whether c's slot is past the connections wanted now:
// it sends nothing more, and closes once nothing is in flight.
func (l *rampedLoop) unwanted(c *conn) bool { return int64(c.connSlot) >= l.t.r.wanted() }
