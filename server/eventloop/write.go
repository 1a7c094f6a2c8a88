// Output from the loop, whatever the backend: flushing what a connection
// owes (the writing itself is the backend's) and what follows progress
// (resume reading, finish a draining connection). Loop goroutine only; the
// output queue itself is under Conn.mu (outqueue.go).

package eventloop

// flushAndProgress writes what c owes, then acts on the progress: the
// pair every caller outside flush itself needs.
func (l *Loop) flushAndProgress(c *Conn) {
	l.flush(c)
	l.afterProgress(c)
}

// afterProgress resumes reading or finishes the connection once enough
// output drained.
func (l *Loop) afterProgress(c *Conn) {
	switch {
	case c.state == statePaused && c.belowLowWater():
		c.setPaused(false)
		l.addReady(c)
	case c.state == stateDraining:
		l.maybeFinish(c)
	}
}

// flush has the backend write, or submit, what c owes.
func (l *Loop) flush(c *Conn) { l.be.flush(c) }
