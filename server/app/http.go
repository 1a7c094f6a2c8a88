package app

import (
	"encoding/json"
	"errors"
	"runtime"
	"sync/atomic"
	"time"

	"weaseldb/internal/monoclock"
	"weaseldb/server/eventloop"
	"weaseldb/server/http1"
	"weaseldb/server/metrics"
)

// handler is the HTTP/1.1 protocol on one event loop. It parses requests,
// numbers them per connection, routes them (routes.go), answers locally
// what needs no pipeline (/metrics, errors) and collects the rest;
// at the end of each loop turn the collected requests go to the commit
// pipeline in one push.
type handler struct {
	s       *Server
	loop    *eventloop.Loop
	pending []entry
	req     http1.Request
	q       request     // the request being routed (reused: no allocation per request)
	subs    subscribers // GET /v1/subscribe streams on this loop
	// turnRequests counts the requests routed in this loop turn (loop
	// goroutine only); OnTurnEnd adds them to requests, which /metrics
	// reads (weaseldb_loop_requests_total): one atomic add per turn.
	turnRequests int64
	requests     atomic.Int64
}

type connState struct {
	parser       *http1.Parser
	continueSent bool        // 100 Continue sent for the request being read
	streaming    bool        // a subscribe request took the connection: input is ignored
	sub          *subscriber // its stream, once the pipeline started it
}

var continueResponse = []byte("HTTP/1.1 100 Continue\r\n\r\n")

func newHandler(s *Server) *handler { return &handler{s: s} }

func (h *handler) OnOpen(c *eventloop.Conn) {
	c.Ctx = &connState{parser: http1.NewParser(int(h.s.cfg.Server.MaxRequestSizeBytes))}
	h.s.Metrics.ConnOpened()
}

func (h *handler) OnClose(c *eventloop.Conn) {
	if st, ok := c.Ctx.(*connState); ok && st.sub != nil {
		h.subs.closed(st.sub)
	}
	c.Ctx = nil
	h.s.Metrics.ConnClosed()
}

// MarkLast makes a response the connection's last (eventloop's
// LastResponseMarker): at a graceful stop the last response a connection
// owes says Connection: close, as nginx does, so a pipelining client stops
// sending into a socket that is about to close.
func (h *handler) MarkLast(resp []byte) []byte { return http1.WithConnectionClose(resp) }

// maxPending bounds one turn's batch so a push never waits on a ring that
// this very batch would overfill.
const maxPending = 4096

func (h *handler) OnTurnEnd(*eventloop.Loop) {
	if h.turnRequests > 0 {
		h.requests.Add(h.turnRequests)
		h.turnRequests = 0
	}
	if h.subs.active() {
		h.serveSubscribers()
	}
	h.submit()
}

// submit pushes the collected requests to the pipeline in one push.
func (h *handler) submit() {
	if len(h.pending) == 0 {
		return
	}
	if err := h.s.commit.Submit(h.pending); err != nil {
		h.dropAll()
	}
	clear(h.pending)
	h.pending = h.pending[:0]
	if h.s.yield {
		// With stage goroutines, the push readied the first one on this
		// P: yielding lets the stages run here now, as goroutine switches
		// on this OS thread, instead of waking another thread while this
		// one sleeps in epoll_wait. Run to completion (the stages already
		// ran in Submit), the yield stays: a loop goroutine that does not
		// pass through the scheduler after each push kept sysmon awake at
		// its 20 µs tick, waking threads for nothing (26x the nanosleeps,
		// 34x the futex calls; docs/wait_strategies.md), which cost more
		// CPU a request than the yield does.
		runtime.Gosched()
	}
}

// dropAll closes the connections of the collected requests: the pipeline
// refused them (it is closed), so no answer will come and no client may
// wait for one. Shutdown stops the loops before it closes the pipeline, so
// this does not happen today; it is the safe answer if that order changes.
func (h *handler) dropAll() {
	for i := range h.pending {
		e := &h.pending[i]
		h.s.Metrics.Request(e.Route, 503, time.Duration(monoclock.Now()-e.Start))
		e.Reply.Conn.Abort()
	}
}

// OnData parses every complete request in `in`. Hand-written hot path.
func (h *handler) OnData(c *eventloop.Conn, in []byte) (int, eventloop.Action) {
	st := c.Ctx.(*connState)
	if st.streaming {
		return len(in), eventloop.Continue // a subscriber's connection carries no more requests
	}
	now := monoclock.Now() // one clock read per read call, shared by its requests
	off := 0
	for off < len(in) && !c.Overloaded() {
		n, err := st.parser.Parse(in[off:], &h.req)
		if err != nil {
			h.refuse(c, st, err, now)
			return len(in), eventloop.StopInput // the framing is lost
		}
		if n == 0 {
			// A partial request: its head, or its body once the head is in
			// (then the body timeout applies, not the header timeout).
			c.SetAwaitingBody(st.parser.HeadDone())
			if !st.continueSent && st.parser.WantsContinue() {
				// Headers complete, body to come, Expect: 100-continue: the
				// 100 goes out right after the responses owed before it.
				st.continueSent = c.SendInterim(continueResponse)
			}
			break
		}
		st.continueSent = false
		off += n
		h.turnRequests++
		h.dispatch(c, &h.req, now)
		if st.streaming {
			return len(in), eventloop.Continue // the subscription stream takes the connection (and ends it)
		}
		if !h.req.KeepAlive {
			return len(in), eventloop.StopInput // Connection: close: nothing after it is answered
		}
		if len(h.pending) >= maxPending {
			h.submit()
		}
	}
	return off, eventloop.Continue
}

// refuse answers a request the parser refused (400, 413, 414, 431, 501,
// 505), after the earlier responses; OnData then stops the input (the
// framing is lost), so the connection closes once the answers are out. A
// refused HEAD gets the head alone, as every HEAD does.
func (h *handler) refuse(c *eventloop.Conn, st *connState, err error, now int64) {
	status, reason := 400, "bad request"
	var perr *http1.Error
	if errors.As(err, &perr) {
		status, reason = perr.Status, perr.Reason
	}
	f := http1.Framing(0) // not keep-alive: the connection closes after it
	if st.parser.RefusedHead() {
		f |= http1.FramingHead
	}
	resp := http1.AppendFramed(nil, f, status, "application/json", errorBody(reason), nil, "")
	c.Reply(c.NextSeq(), resp, true)
	h.s.Metrics.Request(metrics.RouteInvalid, status, time.Duration(monoclock.Now()-now))
}

// OnRequestTimeout answers a request whose head or body did not arrive in
// time (the event loop's header or body timeout): 408, after the responses
// owed for earlier requests, then the connection closes.
func (h *handler) OnRequestTimeout(c *eventloop.Conn) {
	c.Reply(c.NextSeq(), http1.AppendResponse(nil, 408, "application/json", bodyRequestTimeout, nil, false), true)
	h.s.Metrics.Request(metrics.RouteInvalid, 408, 0)
}

func errorBody(msg string) []byte {
	b, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{msg})
	return b
}

var (
	bodyNotFound         = errorBody("not found")
	bodyMethodNotAllowed = errorBody("method not allowed")
	bodyRequestTimeout   = errorBody("request timeout")
)
