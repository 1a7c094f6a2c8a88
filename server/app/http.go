package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"runtime"
	"time"

	"weaseldb/server/commit"
	"weaseldb/server/eventloop"
	"weaseldb/server/http1"
	"weaseldb/server/metrics"
)

// handler is the HTTP/1.1 protocol on one event loop. It parses requests,
// numbers them per connection, answers locally what needs no pipeline
// (/metrics, errors, routes not implemented yet) and collects the rest;
// at the end of each loop turn the collected requests go to the commit
// pipeline in one push.
type handler struct {
	s       *Server
	loop    *eventloop.Loop
	pending []commit.Entry
	req     http1.Request
	subs    subscribers // GET /v1/subscribe streams on this loop
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

// maxPending bounds one turn's batch so a push never waits on a ring that
// this very batch would overfill.
const maxPending = 4096

func (h *handler) OnTurnEnd(*eventloop.Loop) {
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
	h.s.commit.Submit(h.pending)
	clear(h.pending)
	h.pending = h.pending[:0]
	if h.s.yield {
		// The push readied the first stage goroutine on this P. Yielding
		// lets it (and the stages it readies in turn) run here now, as
		// goroutine switches on this OS thread, instead of waking another
		// thread while this one sleeps in epoll_wait: the hop that costs
		// an OS context switch per batch is the one to avoid.
		runtime.Gosched()
	}
}

// OnData parses every complete request in `in`. Hand-written hot path.
func (h *handler) OnData(c *eventloop.Conn, in []byte) int {
	st := c.Ctx.(*connState)
	if st.streaming {
		return len(in) // a subscriber's connection carries no more requests
	}
	now := time.Now() // one clock read per read call, shared by its requests
	off := 0
	for off < len(in) && !c.Overloaded() {
		n, err := st.parser.Parse(in[off:], &h.req)
		if err != nil {
			h.refuse(c, err, now)
			return len(in)
		}
		if n == 0 {
			if !st.continueSent && st.parser.WantsContinue() {
				// Headers complete, body to come, Expect: 100-continue. If an
				// earlier response is still pending, skip it: the client
				// sends the body after its own timeout.
				st.continueSent = c.SendInterim(continueResponse)
			}
			break
		}
		st.continueSent = false
		off += n
		h.route(c, &h.req, now)
		if st.streaming {
			return len(in) // the subscription stream takes the connection (and ends it)
		}
		if !h.req.KeepAlive {
			c.StopInput() // Connection: close: nothing after it is answered
			return len(in)
		}
		if len(h.pending) >= maxPending {
			h.submit()
		}
	}
	return off
}

// refuse answers a request the parser refused (400, 413, 501, 505), after
// the earlier responses, and closes the connection: its framing is lost.
func (h *handler) refuse(c *eventloop.Conn, err error, now time.Time) {
	status, reason := 400, "bad request"
	var perr *http1.Error
	if errors.As(err, &perr) {
		status, reason = perr.Status, perr.Reason
	}
	seq := c.NextSeq()
	c.Reply(seq, http1.AppendResponse(nil, status, "application/json", errorBody(reason), nil, false), true)
	c.StopInput()
	h.s.Metrics.Request(metrics.RouteInvalid, status, time.Since(now))
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
)

// route sends a parsed request to the pipeline or answers it on the loop.
func (h *handler) route(c *eventloop.Conn, r *http1.Request, now time.Time) {
	seq := c.NextSeq()
	method, path := string(r.Method), r.Path
	switch {
	case string(path) == "/ok":
		if method != "GET" {
			h.local(c, seq, r, metrics.RouteOK, 405, bodyMethodNotAllowed, now)
			return
		}
		h.enqueue(c, seq, r, commit.KindOK, metrics.RouteOK, now)
	case string(path) == "/v1/version":
		if method != "GET" {
			h.local(c, seq, r, metrics.RouteVersion, 405, bodyMethodNotAllowed, now)
			return
		}
		h.enqueue(c, seq, r, commit.KindVersion, metrics.RouteVersion, now)
	case string(path) == "/metrics":
		if method != "GET" {
			h.local(c, seq, r, metrics.RouteMetrics, 405, bodyMethodNotAllowed, now)
			return
		}
		h.metrics(c, seq, r, now)
	case string(path) == "/v1/commit":
		if method != "POST" {
			h.local(c, seq, r, metrics.RouteCommit, 405, bodyMethodNotAllowed, now)
			return
		}
		h.commitRequest(c, seq, r, now)
	case string(path) == "/v1/status":
		if method != "GET" {
			h.local(c, seq, r, metrics.RouteStatus, 405, bodyMethodNotAllowed, now)
			return
		}
		h.statusRequest(c, seq, r, now)
	case string(path) == "/v1/subscribe":
		if method != "GET" {
			h.local(c, seq, r, metrics.RouteSubscribe, 405, bodyMethodNotAllowed, now)
			return
		}
		h.subscribeRequest(c, seq, r, now)
	case bytes.HasPrefix(path, []byte("/v1/retention")) && (len(path) == len("/v1/retention") || path[len("/v1/retention")] == '/'):
		h.retentionRequest(c, seq, r, method, string(path[len("/v1/retention"):]), now)
	default:
		h.local(c, seq, r, metrics.RouteNotFound, 404, bodyNotFound, now)
	}
}

func (h *handler) enqueue(c *eventloop.Conn, seq uint64, r *http1.Request, kind commit.Kind, route metrics.Route, now time.Time) {
	e := commit.Entry{Kind: kind, Conn: c, Seq: seq, KeepAlive: r.KeepAlive, HTTP10: r.Version == http1.HTTP10, Route: route, Start: now}
	if r.RequestID != nil {
		e.RequestID = append([]byte(nil), r.RequestID...) // the read buffer is reused
	}
	h.pending = append(h.pending, e)
}

func (h *handler) local(c *eventloop.Conn, seq uint64, r *http1.Request, route metrics.Route, status int, body []byte, now time.Time) {
	c.Reply(seq, commit.BuildResponse(nil, status, "application/json", body, r.RequestID, r.KeepAlive, r.Version == http1.HTTP10), !r.KeepAlive)
	h.s.Metrics.Request(route, status, time.Since(now))
}

// metrics is answered by the loop, in order with the connection's other
// responses.
func (h *handler) metrics(c *eventloop.Conn, seq uint64, r *http1.Request, now time.Time) {
	body, err := h.s.Metrics.Encode()
	if err != nil {
		h.local(c, seq, r, metrics.RouteMetrics, 500, errorBody(err.Error()), now)
		return
	}
	c.Reply(seq, commit.BuildResponse(nil, 200, metrics.ContentType, body, r.RequestID, r.KeepAlive, r.Version == http1.HTTP10), !r.KeepAlive)
	h.s.Metrics.Request(metrics.RouteMetrics, 200, time.Since(now))
}
