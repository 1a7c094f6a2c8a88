package app

import (
	"time"

	"weaseldb/server/api"
	"weaseldb/server/commit"
	"weaseldb/server/eventloop"
	"weaseldb/server/http1"
	"weaseldb/server/metrics"
)

// The data routes are parsed here, on the event loop (in parallel across
// loops), so a malformed request is answered 400 at once and never enters
// the pipeline: nothing is applied for it.

func (h *handler) badRequest(c *eventloop.Conn, seq uint64, r *http1.Request, route metrics.Route, err error, now time.Time) {
	h.local(c, seq, r, route, 400, api.AppendError(nil, err.Error()), now)
}

func (h *handler) enqueueData(c *eventloop.Conn, seq uint64, r *http1.Request, kind commit.Kind, route metrics.Route, d *commit.Data, now time.Time) {
	h.enqueue(c, seq, r, kind, route, now)
	h.pending[len(h.pending)-1].Data = d
}

// commitRequest parses a POST /v1/commit body (keys and values are decoded
// into the request's own arena, so the read buffer can be reused).
func (h *handler) commitRequest(c *eventloop.Conn, seq uint64, r *http1.Request, now time.Time) {
	d := &commit.Data{}
	if err := api.ParseCommitInto(r.Body, h.s.cfg.Commit.MinRequestIDLength, &d.Commit); err != nil {
		h.badRequest(c, seq, r, metrics.RouteCommit, err, now)
		return
	}
	h.enqueueData(c, seq, r, commit.KindCommit, metrics.RouteCommit, d, now)
}

func (h *handler) statusRequest(c *eventloop.Conn, seq uint64, r *http1.Request, now time.Time) {
	q, err := api.ParseStatusQuery(r.Query)
	if err != nil {
		h.badRequest(c, seq, r, metrics.RouteStatus, err, now)
		return
	}
	h.enqueueData(c, seq, r, commit.KindStatus, metrics.RouteStatus, &commit.Data{Status: q}, now)
}

// subscribeRequest starts a stream: the connection carries no further
// requests (input after this one is discarded). The persist stage starts
// the cursor; the loop streams (see subscribe.go).
func (h *handler) subscribeRequest(c *eventloop.Conn, seq uint64, r *http1.Request, now time.Time) {
	from, err := api.ParseSubscribeQuery(r.Query)
	if err == nil && r.Version == http1.HTTP10 {
		err = &api.FieldError{Field: "version", Msg: "GET /v1/subscribe streams with chunked transfer coding, which needs HTTP/1.1"}
	}
	if err != nil {
		h.badRequest(c, seq, r, metrics.RouteSubscribe, err, now)
		return
	}
	c.Ctx.(*connState).streaming = true
	// The stream is the connection's last response and ends it: a
	// Connection: close must not cut it after the head.
	r.KeepAlive = true
	h.enqueueData(c, seq, r, commit.KindSubscribe, metrics.RouteSubscribe, &commit.Data{FromVersion: from}, now)
}

// retentionRequest serves /v1/retention (GET: the list) and
// /v1/retention/{policy_id} (PUT, GET, DELETE); rest is the path after
// "/v1/retention".
func (h *handler) retentionRequest(c *eventloop.Conn, seq uint64, r *http1.Request, method, rest string, now time.Time) {
	const route = metrics.RouteRetention
	if rest == "" || rest == "/" {
		if method != "GET" {
			h.local(c, seq, r, route, 405, bodyMethodNotAllowed, now)
			return
		}
		h.enqueueData(c, seq, r, commit.KindRetentionList, route, &commit.Data{}, now)
		return
	}
	id := rest[1:]
	var kind commit.Kind
	switch method {
	case "PUT":
		kind = commit.KindRetentionPut
	case "GET":
		kind = commit.KindRetentionGet
	case "DELETE":
		kind = commit.KindRetentionDelete
	default:
		h.local(c, seq, r, route, 405, bodyMethodNotAllowed, now)
		return
	}
	if err := api.ValidatePolicyID(id); err != nil {
		h.badRequest(c, seq, r, route, err, now)
		return
	}
	d := &commit.Data{PolicyID: id}
	if kind == commit.KindRetentionPut {
		p, err := api.ParseRetentionPolicy(r.Body)
		if err != nil {
			h.badRequest(c, seq, r, route, err, now)
			return
		}
		d.Policy = p
	}
	h.enqueueData(c, seq, r, kind, route, d, now)
}
