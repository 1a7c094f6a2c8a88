package app

import (
	"errors"
	"time"

	"weaseldb/internal/monoclock"
	"weaseldb/server/api"
	"weaseldb/server/commit"
	"weaseldb/server/http1"
	"weaseldb/server/metrics"
)

// The data routes are parsed here, on the event loop (in parallel across
// loops), so a malformed request is answered 400 at once and never enters
// the pipeline: nothing is applied for it.

func (h *handler) badRequest(q *request, err error) {
	if errors.Is(err, api.ErrMalformedEscape) {
		// As the seed: a target that cannot be decoded is a broken
		// request, not a bad parameter; answer and close.
		q.http.KeepAlive = false
	}
	h.reply(q, q.route.metric, 400, api.AppendError(nil, err.Error()))
}

// commitRequest parses a POST /v1/commit body (keys and values are decoded
// into the request's own arena, so the read buffer can be reused).
func (h *handler) commitRequest(q *request) {
	d := &commit.Data{}
	if err := api.ParseCommitInto(q.http.Body, h.s.cfg.Commit.MinRequestIDLength, &d.Commit); err != nil {
		h.badRequest(q, err)
		return
	}
	h.enqueue(q, commit.KindCommit, d)
}

func (h *handler) statusRequest(q *request) {
	sq, err := api.ParseStatusQuery(q.http.Query, h.s.cfg.Commit.MinRequestIDLength)
	if err != nil {
		h.badRequest(q, err)
		return
	}
	h.enqueue(q, commit.KindStatus, &commit.Data{Status: sq})
}

// subscribeRequest starts a stream: the connection carries no further
// requests (input after this one is discarded). The persist stage starts
// the cursor; the loop streams (see subscribe.go). HEAD gets the stream's
// head and no stream.
func (h *handler) subscribeRequest(q *request) {
	r := q.http
	from, err := api.ParseSubscribeQuery(r.Query)
	if err == nil && r.Version == http1.HTTP10 {
		err = &api.FieldError{Field: "version", Msg: "GET /v1/subscribe streams with chunked transfer coding, which needs HTTP/1.1"}
	}
	if err != nil {
		h.badRequest(q, err)
		return
	}
	if q.head {
		q.c.Reply(q.seq, http1.AppendChunkedHeader(nil, 200, api.ContentTypeNDJSON, r.RequestID), !r.KeepAlive)
		h.s.Metrics.Request(metrics.RouteSubscribe, 200, time.Duration(monoclock.Now()-q.now))
		return
	}
	q.c.Ctx.(*connState).streaming = true
	// The stream is the connection's last response and ends it: a
	// Connection: close must not cut it after the head.
	r.KeepAlive = true
	h.enqueue(q, commit.KindSubscribe, &commit.Data{FromVersion: from})
}

// retentionListRequest serves GET /v1/retention (and /v1/retention/).
func (h *handler) retentionListRequest(q *request) {
	h.enqueue(q, commit.KindRetentionList, &commit.Data{})
}

// retentionPolicyRequest serves PUT, GET and DELETE /v1/retention/{policy_id}.
func (h *handler) retentionPolicyRequest(q *request) {
	var kind commit.Kind
	switch string(q.http.Method) {
	case "PUT":
		kind = commit.KindRetentionPut
	case "DELETE":
		kind = commit.KindRetentionDelete
	default: // GET, and HEAD through it
		kind = commit.KindRetentionGet
	}
	id := string(q.suffix)
	if err := api.ValidatePolicyID(id); err != nil {
		h.badRequest(q, err)
		return
	}
	d := &commit.Data{PolicyID: id}
	if kind == commit.KindRetentionPut {
		p, err := api.ParseRetentionPolicy(q.http.Body)
		if err != nil {
			h.badRequest(q, err)
			return
		}
		d.Policy = p
	}
	h.enqueue(q, kind, d)
}
