package app

import (
	"bytes"
	"strings"
	"time"

	"weaseldb/internal/monoclock"
	"weaseldb/server/commit"
	"weaseldb/server/eventloop"
	"weaseldb/server/http1"
	"weaseldb/server/metrics"
)

// The route table: one entry per path, one function per method. Routing is
// one pass: OnData looks the path up, picks the method's function (HEAD
// takes GET's), and that function answers on the loop or hands the request
// to the pipeline. A method the route does not serve gets 405 with the
// route's Allow header (RFC 9110 §15.5.6); an unknown path gets 404.

// method indexes a route's functions.
type method uint8

const (
	methodGET method = iota
	methodPOST
	methodPUT
	methodDELETE
	numMethods
	methodHEAD  // served by the GET function, without the body
	methodOther // any other token: 405
)

func parseMethod(m []byte) method {
	switch string(m) { // no allocation: the compiler compares in place
	case "GET":
		return methodGET
	case "HEAD":
		return methodHEAD
	case "POST":
		return methodPOST
	case "PUT":
		return methodPUT
	case "DELETE":
		return methodDELETE
	}
	return methodOther
}

var methodNames = [numMethods]string{"GET", "POST", "PUT", "DELETE"}

// request is one parsed request on its way through its route: what every
// route function needs, built once per request.
type request struct {
	c     *eventloop.Conn
	seq   uint64
	http  *http1.Request
	route *route
	now   int64 // when the read that carried it returned (monoclock)
	head  bool  // HEAD: the GET's answer without its body
	// framing is the answer's, as the request asked (a route that then
	// closes the connection clears KeepAlive in http, which wins).
	framing http1.Framing
	suffix  []byte // a prefix route's path after its prefix
}

type routeFunc func(h *handler, q *request)

type route struct {
	path   string
	prefix bool // path is a prefix ending in '/'; the rest is request.suffix
	metric metrics.Route
	serve  [numMethods]routeFunc
	allow  string // "Allow: GET, HEAD\r\n", derived from serve
}

// routes, the most frequent first (lookup walks it in order).
var routes = []*route{
	{path: "/ok", metric: metrics.RouteOK, serve: get((*handler).okRequest)},
	{path: "/v1/version", metric: metrics.RouteVersion, serve: get((*handler).versionRequest)},
	{path: "/v1/commit", metric: metrics.RouteCommit, serve: post((*handler).commitRequest)},
	{path: "/v1/status", metric: metrics.RouteStatus, serve: get((*handler).statusRequest)},
	{path: "/v1/subscribe", metric: metrics.RouteSubscribe, serve: get((*handler).subscribeRequest)},
	{path: "/metrics", metric: metrics.RouteMetrics, serve: get((*handler).metricsRequest)},
	{path: "/v1/retention", metric: metrics.RouteRetention, serve: get((*handler).retentionListRequest)},
	{path: "/v1/retention/", metric: metrics.RouteRetention, serve: get((*handler).retentionListRequest)},
	{path: "/v1/retention/", prefix: true, metric: metrics.RouteRetention, serve: [numMethods]routeFunc{
		methodGET:    (*handler).retentionPolicyRequest,
		methodPUT:    (*handler).retentionPolicyRequest,
		methodDELETE: (*handler).retentionPolicyRequest,
	}},
}

func get(f routeFunc) (s [numMethods]routeFunc)  { s[methodGET] = f; return s }
func post(f routeFunc) (s [numMethods]routeFunc) { s[methodPOST] = f; return s }

func init() {
	for _, rt := range routes {
		var names []string
		for m, f := range rt.serve {
			if f == nil {
				continue
			}
			names = append(names, methodNames[m])
			if method(m) == methodGET {
				names = append(names, "HEAD")
			}
		}
		rt.allow = "Allow: " + strings.Join(names, ", ") + "\r\n"
	}
}

// lookup finds the route of path: an exact path first, then a prefix route
// whose rest is not empty.
func lookup(path []byte) (*route, []byte) {
	for _, rt := range routes {
		if rt.prefix {
			if len(path) > len(rt.path) && bytes.HasPrefix(path, []byte(rt.path)) {
				return rt, path[len(rt.path):]
			}
		} else if string(path) == rt.path {
			return rt, nil
		}
	}
	return nil, nil
}

// dispatch routes one parsed request.
func (h *handler) dispatch(c *eventloop.Conn, r *http1.Request, now int64) {
	q := &h.q
	// Field by field: a composite literal is built aside and copied.
	q.c, q.seq, q.http, q.now = c, c.NextSeq(), r, now
	q.route, q.head, q.suffix = nil, false, nil
	m := parseMethod(r.Method)
	if m == methodHEAD {
		// Known before the route, so every answer to HEAD, a 404 included,
		// goes without its body (RFC 9110 §9.3.2): a body would be read as
		// the start of the next pipelined response.
		m, q.head = methodGET, true
	}
	q.framing = http1.RequestFraming(r, q.head)
	rt, suffix := routes[0], []byte(nil)
	if rt.prefix || string(r.Path) != rt.path {
		rt, suffix = lookup(r.Path) // the most frequent route (GET /ok) skips the walk
	}
	if rt == nil {
		h.reply(q, metrics.RouteNotFound, 404, bodyNotFound)
		return
	}
	q.route, q.suffix = rt, suffix
	if m >= numMethods || rt.serve[m] == nil {
		h.reply(q, rt.metric, 405, bodyMethodNotAllowed)
		return
	}
	rt.serve[m](h, q)
}

// reply answers q on the loop, in order with the connection's other
// responses.
func (h *handler) reply(q *request, metric metrics.Route, status int, body []byte) {
	h.replyTyped(q, metric, status, "application/json", body)
}

func (h *handler) replyTyped(q *request, metric metrics.Route, status int, contentType string, body []byte) {
	r := q.http
	extra := ""
	if status == 405 && q.route != nil {
		extra = q.route.allow
	}
	f := q.framing
	if !r.KeepAlive {
		f = f.Closing()
	}
	resp := http1.AppendFramed(nil, f, status, contentType, body, r.RequestID, extra)
	q.c.Reply(q.seq, resp, !r.KeepAlive)
	h.s.Metrics.Request(metric, status, time.Duration(monoclock.Now()-q.now))
}

// enqueue hands q to the commit pipeline with its parsed data (nil for
// /ok and /v1/version); the release stage answers it.
func (h *handler) enqueue(q *request, kind commit.Kind, d *commit.Data) {
	r := q.http
	// Filled in place: an entry built aside would be copied into pending.
	h.pending = append(h.pending, entry{})
	e := &h.pending[len(h.pending)-1]
	e.Kind, e.Route, e.Start, e.Data = kind, q.route.metric, q.now, d
	e.Reply.Conn, e.Reply.Seq, e.Reply.Framing, e.Reply.Close = q.c, q.seq, uint8(q.framing), !r.KeepAlive
	if r.RequestID != nil {
		e.Reply.RequestID = append([]byte(nil), r.RequestID...) // the read buffer is reused
	}
}

func (h *handler) okRequest(q *request)      { h.enqueue(q, commit.KindOK, nil) }
func (h *handler) versionRequest(q *request) { h.enqueue(q, commit.KindVersion, nil) }

// metricsRequest is answered by the loop, in order with the connection's
// other responses.
func (h *handler) metricsRequest(q *request) {
	body, err := h.s.Metrics.Encode()
	if err != nil {
		h.reply(q, metrics.RouteMetrics, 500, errorBody(err.Error()))
		return
	}
	h.replyTyped(q, metrics.RouteMetrics, 200, metrics.ContentType, body)
}
