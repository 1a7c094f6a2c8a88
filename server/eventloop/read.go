// Input, whatever the backend: the ready list (connections with more to
// read, or input a pause kept), handing input to the handler, and pausing
// a connection under back-pressure. The reading itself is the backend's.
// Loop goroutine only (pausedFlag is the atomic mirror senders read).

package eventloop

func (l *Loop) addReady(c *Conn) {
	if !c.onReady {
		c.onReady = true
		l.ready = append(l.ready, c)
	}
}

// serveReady gives connections that used up their read budget, or were
// resumed after a pause, another turn.
func (l *Loop) serveReady() {
	if len(l.ready) == 0 {
		return
	}
	batch := l.ready
	l.ready = nil
	for i, c := range batch {
		batch[i] = nil
		c.onReady = false
		if !c.isGone() {
			l.be.resume(c)
		}
	}
	if l.ready == nil {
		l.ready = batch[:0]
	}
}

// afterInput follows the handling of input (a read pass, or a receive's
// completion): pause a client the handler stopped for, write what the
// handler queued, begin the drain of a connection whose input stopped, and
// file its deadline.
func (l *Loop) afterInput(c *Conn) {
	if c.stalled && c.state == stateReading {
		// The handler stopped parsing because of back-pressure: input may
		// sit in c.in with no edge to come, so wait for the resume post.
		l.pause(c)
	}
	c.stalled = false
	if c.needFlush && !c.isGone() {
		c.needFlush = false
		l.flushAndProgress(c)
	}
	if c.state == stateInputStopped {
		l.beginDrain(c)
	}
	if c.lateStop && !c.isGone() && (c.nextSeq > 0 || c.eof) {
		// Taken from the backlog as the loop stopped: its requests are
		// read and owed, now it drains like the others (stop.go).
		c.lateStop = false
		c.markLastOwed()
		l.beginDrain(c)
	}
	if !c.isGone() {
		l.touchAfterRead(c)
	}
}

// consume hands input to the handler without copying when nothing is
// buffered; the unconsumed rest is kept.
func (l *Loop) consume(c *Conn, data []byte) {
	defer c.Overloaded() // an overload the handler did not look for still pauses (stalled)
	if len(c.in) == 0 && data != nil {
		k, act := l.h.OnData(c, data)
		l.act(c, act)
		if k < len(data) && c.parsing() {
			c.in = append(c.in, data[k:]...)
			c.firstInputAt = l.now // a request begins in this read
		}
		return
	}
	wasEmpty := len(c.in) == 0
	c.in = append(c.in, data...)
	k, act := l.h.OnData(c, c.in)
	l.act(c, act)
	if !c.parsing() {
		return
	}
	if (k > 0 || wasEmpty) && k < len(c.in) {
		c.firstInputAt = l.now // what is left is a request that began in this read
	}
	rest := copy(c.in, c.in[k:])
	c.in = c.in[:rest]
	if rest == 0 && cap(c.in) > spareLimit {
		c.in = nil
	}
}

// act carries out what OnData asked for.
func (l *Loop) act(c *Conn, a Action) {
	if a == StopInput {
		c.stopInput()
	}
}

func (l *Loop) pause(c *Conn) {
	c.setPaused(true)
	// Senders decrement the counters and then read pausedFlag; the loop
	// stores pausedFlag and then reads the counters: one of them sees the
	// other, so a resume is never lost.
	if c.belowLowWater() {
		c.setPaused(false)
		l.addReady(c)
	} else {
		l.be.pause(c)
	}
}
