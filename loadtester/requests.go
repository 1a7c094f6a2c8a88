package loadtester

// The request source behind the protocol seam (protocol.go): what a protocol
// asks of its thread for the requests it frames. The closed loop's kinds
// are picked in turn from the thread's count of sends, the open loop's by
// the schedule's index; a kind's bytes are its template's, rendered where
// it has placeholders (request.go, and h2render.go for HTTP/2's header
// blocks).
//
// Who owns what: a network thread's requests are its loop's alone
// (thread.go); what a call returns is valid until the next call.

// requestSource is what a protocol asks for the requests it frames.
type requestSource interface {
	// closedKind is the kind of the closed loop's j-th request from now;
	// tookClosed moves the closed loop's count on by the n that went out.
	closedKind(j int) uint8
	tookClosed(n int)
	// scheduledKind is the kind of the open-loop schedule's k-th request.
	scheduledKind(k uint64) uint8
	// appendRequest appends one HTTP/1.1 request of kind to dst, with its
	// {{seq}} (0 for a kind whose bytes never change); false when its data
	// file has no row left.
	appendRequest(dst []byte, kind uint8) ([]byte, uint64, bool)
	// repeated is want copies of the run's one static HTTP/1.1 request.
	repeated(want int) []byte
	// h2Request is the header block and body of the next HTTP/2 request
	// of kind, with its {{seq}}; scratch: the body is rendered into a
	// buffer the next request reuses. False when its data file has no
	// row left, and then nothing was drawn.
	h2Request(kind uint8) (block, body []byte, scratch bool, seq uint64, ok bool)
	// scratch is the buffer one write's requests are gathered in.
	scratch() *[]byte
}

// requests is a network thread's request source.
type requests struct {
	run  *runner
	rend *renderer // nil unless a kind has placeholders
	wbuf []byte    // dynamic requests rendered for one write
	// batch: the static request repeated --pipeline times (fast only).
	batch []byte
	// fast: one kind, the same bytes every time: the closed loop writes
	// --pipeline copies of it from batch, no rendering.
	fast     bool
	kindNext uint64 // closed loop: this thread's sends so far, which pick the next kind
}

// newRequests is thread id's request source.
func newRequests(r *runner, id int) requests {
	q := requests{run: r}
	dynamic := false
	for _, k := range r.kinds {
		dynamic = dynamic || k.tmpl.dynamic()
	}
	if dynamic {
		q.rend = newRenderer(id, r.cfg.NetworkThreads, len(r.kinds), uint64(r.seed), r.feeds)
	}
	if q.fast = len(r.kinds) == 1 && !dynamic; q.fast {
		for range r.cfg.Pipeline {
			q.batch = append(q.batch, r.tmpl.static...)
		}
	}
	return q
}

func (q *requests) closedKind(j int) uint8       { return q.run.kindOf(q.kindNext + uint64(j)) }
func (q *requests) tookClosed(n int)             { q.kindNext += uint64(n) }
func (q *requests) scheduledKind(k uint64) uint8 { return q.run.kindOf(k) }
func (q *requests) scratch() *[]byte             { return &q.wbuf }
func (q *requests) repeated(want int) []byte     { return q.batch[:want*len(q.run.tmpl.static)] }

func (q *requests) appendRequest(dst []byte, kind uint8) ([]byte, uint64, bool) {
	tm := q.run.kinds[kind].tmpl
	if !tm.dynamic() {
		return append(dst, tm.static...), 0, true
	}
	return q.rend.appendRequest(dst, tm)
}

func (q *requests) h2Request(kind uint8) (block, body []byte, scratch bool, seq uint64, ok bool) {
	k := &q.run.h2req.kinds[kind]
	if !k.dynamic {
		return k.block, k.body, false, 0, true
	}
	r := q.rend
	var v reqVars
	if !r.next(q.run.kinds[kind].tmpl, &v) {
		return nil, nil, false, 0, false
	}
	body = k.body
	if k.bodySegs != nil {
		r.body = r.appendSegs(r.body[:0], k.bodySegs, &v)
		body = r.body
	}
	return r.h2Block(k, &v, len(body)), body, k.bodySegs != nil, v.seq, true
}

// protocolFor is a new connection's protocol, with ring entries: the
// run's, framing its requests as they come (static or rendered).
func (q *requests) protocolFor(c *conn, ring int) protocol {
	if q.run.h2req != nil {
		c.h2 = newH2Conn(ring, q.run.checkNeeds) // for the tests that look inside its streams
		c.h2.listSize = q.run.h2req.listSize
		if q.fast {
			c.h2.staticBlock, c.h2.staticBody, _, _, _ = q.h2Request(0)
			return h2Static{c.h2}
		}
		return h2Rendered{c.h2}
	}
	h := newHTTP1(q.run.cfg.Method == "HEAD", q.run.checkNeeds)
	if q.fast {
		h.repeated, h.one = q.batch, len(q.run.tmpl.static)
		return http1Static{h}
	}
	return http1Rendered{h}
}
