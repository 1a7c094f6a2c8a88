package loadtester

// Booking a response or a failure: the warm-up's or the measured window's
// books, by when the request was due, and the --vegeta samples. Every
// protocol books through these.
//
// Who owns what: loop thread only; the books are written under
// accounts.mu, which the loop holds for a batch of events.

// answer books ring entry i's response, status, in the warm-up's books or
// the measured window's by when it was due; when a check refuses it (the
// checks read the rest of it through protocol.response), as failed
// (errCheck) with its latency kept, and reports false.
func (t *netThread) answer(c *conn, i int, now int64, status int) bool {
	if t.r.checks != nil {
		st, head, body := c.proto.response(i)
		if !t.acct.judge(c, i, st, head, body) {
			c.received++ // a response all the same (--requests-per-conn)
			t.acct.recordFailedLatency(c, i, now)
			t.failEntry(c, i, now, errCheck)
			return false
		}
	}
	t.acct.record(c, i, now, status)
	return true
}

// record books ring entry i's response (status) at now.
func (a *accounts) record(c *conn, head int, now int64, status int) {
	start := c.sendTimes[head]
	c.received++
	latency := now - start
	status = min(status, maxStatus)
	var kind uint8
	if c.kinds != nil {
		kind = c.kinds[head]
	}
	if c.seqs != nil && status >= 200 && status < 300 && a.r.kinds[kind].referred {
		a.rend.answered[kind], a.rend.hasAnswered[kind] = c.seqs[head], true
	}
	b := &a.books
	if start < a.win.start {
		b.warm.requests++
		b.warm.status[status]++
		b.warm.hist.RecordValue(latency)
		return
	}
	m := &b.measured
	if err := m.hist.RecordValue(latency); err != nil {
		m.recordErrors++
	}
	m.requests++
	m.status[status]++
	svc := int64(-1)
	if c.sentAt != nil {
		svc = now - c.sentAt[head]
		b.svc.RecordValue(svc)
	}
	if a.kb != nil {
		kb := &a.kb[kind]
		kb.hist.RecordValue(latency)
		kb.answered++
		kb.status[status]++
		if svc >= 0 {
			kb.svc.RecordValue(svc)
		}
	}
	if a.sb != nil {
		a.bookStageAnswer(start, latency, status)
	}
	if b.samples != nil {
		b.samples.add(sample{start: start, latency: latency, code: uint16(status), kind: kind})
	}
}

// recordFailedLatency books the latency of ring entry i, failed though it
// got a response (a check refused it), in the measured window's failed
// histograms: the run's, its kind's and its stage's. It allocates nothing
// (the histograms exist whenever there are checks, the only way here).
func (a *accounts) recordFailedLatency(c *conn, i int, now int64) {
	start := c.sendTimes[i]
	if start < a.win.start {
		return
	}
	latency := now - start
	a.books.failedHist.RecordValue(latency)
	if a.kb != nil {
		var kind uint8
		if c.kinds != nil {
			kind = c.kinds[i]
		}
		a.kb[kind].failedHist.RecordValue(latency)
	}
	if a.sb != nil {
		a.sb[a.stageOf(start)].failedHist.RecordValue(latency)
	}
}

// phase is the books of the phase a request due at due belongs to.
func (a *accounts) phase(due int64) *phaseStats {
	if due < a.win.start {
		return &a.books.warm
	}
	return &a.books.measured
}

// connError books a failure of a connection itself, with no request to
// charge (a refused connect, a timeout, a broken connection with nothing
// in flight, h2 SETTINGS that refuse every request), and keeps it for
// --vegeta.
func (t *netThread) connError(now int64, kind errorKind) {
	t.acct.books.measured.errors[kind]++
	t.acct.sampleRequestError(now, 0, kind, 0)
}

// sampleRequestError keeps a failed request of kind reqKind (start: when
// it was due) or, with start 0, a failure of the connection itself, for
// --vegeta; only what belongs to the measured window.
func (a *accounts) sampleRequestError(now, start int64, kind errorKind, reqKind uint8) {
	if a.books.samples == nil {
		return
	}
	if start == 0 {
		if now < a.win.start || now >= a.win.closeAt {
			return
		}
		start = now
	}
	a.books.samples.add(sample{start: start, latency: now - start, errKind: kind + 1, kind: reqKind})
}
