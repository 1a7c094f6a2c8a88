// Responses in request order: a response that completes before an earlier
// one waits in Conn.early until every earlier one is queued. Under Conn.mu.

package eventloop

type earlyResponse struct {
	seq        uint64
	data       []byte
	closeAfter bool
}

// enqueueLocked puts a response in request order: it is queued for writing
// only once every earlier response is queued; otherwise it waits in early.
func (c *Conn) enqueueLocked(seq uint64, data []byte, closeAfter bool) {
	c.inflight.Add(-1)
	if c.closed || c.closeQueued {
		return
	}
	if c.markLast && seq == c.lastSeq {
		data, closeAfter = c.loop.markLast(data), true
		c.markLast = false
	}
	if seq != c.nextSend {
		c.insertEarly(earlyResponse{seq, data, closeAfter})
		return
	}
	c.appendOutLocked(data)
	c.nextSend++
	if closeAfter {
		c.closeQueued = true
		c.early, c.interim = nil, nil
		return
	}
	c.interimTurnLocked()
	for len(c.early) > 0 && c.early[0].seq == c.nextSend {
		e := c.early[0]
		c.early[0] = earlyResponse{}
		c.early = c.early[1:]
		c.appendOutLocked(e.data)
		c.nextSend++
		if e.closeAfter {
			c.closeQueued = true
			c.early, c.interim = nil, nil
			return
		}
		c.interimTurnLocked()
	}
	if len(c.early) == 0 {
		c.early = nil
	}
}

// interimTurnLocked queues the waiting interim once every response before
// it is queued.
func (c *Conn) interimTurnLocked() {
	if c.interim != nil && c.nextSend == c.interimAt {
		c.appendOutLocked(c.interim)
		c.interim = nil
	}
}

func (c *Conn) insertEarly(e earlyResponse) {
	i := len(c.early)
	for i > 0 && c.early[i-1].seq > e.seq {
		i--
	}
	c.early = append(c.early, earlyResponse{})
	copy(c.early[i+1:], c.early[i:])
	c.early[i] = e
}

// markLastOwed makes the last response c owes, if any, the connection's
// last: marked for the peer (LastResponseMarker) and closing it once
// written (loop goroutine only, at a graceful stop, after the requests
// already read were parsed). A response already queued for writing is not
// touched: then nothing is owed, or what is owed comes later.
func (c *Conn) markLastOwed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.closeQueued || c.streaming || c.nextSend == c.nextSeq {
		return
	}
	last := c.nextSeq - 1
	for i := range c.early {
		if c.early[i].seq == last { // it completed early and waits its turn
			c.early[i].data, c.early[i].closeAfter = c.loop.markLast(c.early[i].data), true
			return
		}
	}
	c.markLast, c.lastSeq = true, last
}
