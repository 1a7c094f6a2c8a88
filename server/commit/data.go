package commit

import (
	"errors"
	"fmt"
	"time"

	"weaseldb/server/api"
	"weaseldb/server/store"
)

// respond has the Responder frame e's answer around body (which it
// copies, so body may be the persist stage's scratch).
func (cp *Pipeline[C]) respond(e *Entry[C], status int, contentType string, body []byte) {
	e.Status = status
	e.Resp = cp.opt.Responder.AppendResponse(make([]byte, 0, 128+len(contentType)+len(e.Reply.RequestID)+len(body)),
		&e.Reply, status, contentType, body)
}

func (cp *Pipeline[C]) respondError(e *Entry[C], status int, msg string) {
	cp.body = api.AppendError(cp.body[:0], msg)
	cp.respond(e, status, api.ContentTypeJSON, cp.body)
}

// persistCommit applies a decided commit (or answers one the sequence
// stage did not accept: a duplicate with its original's outcome, a banned
// or unverifiable id with its refusal) and builds the answer. It reports
// whether the commit appended a transaction to the subscription log.
func (cp *Pipeline[C]) persistCommit(e *Entry[C], now time.Time) (appended bool) {
	d := e.Data
	ps := cp.st.Persister
	ps.Forget(d.Forgotten)
	res := d.Result
	switch d.Sequenced.Verdict {
	case store.Accepted:
		ps.Apply(&d.Commit, res, now)
		appended = res.Committed && len(d.Commit.Operations) > 0
	case store.Duplicate:
		res = ps.DuplicateResult(d.Sequenced.Version)
	case store.Banned:
		res = api.CommitResult{Reason: api.ReasonRequestIDBanned}
	case store.Unverifiable:
		res = api.CommitResult{Reason: api.ReasonRequestIDUnverifiable, MinReadVersion: d.Sequenced.MinReadVersion}
	}
	cp.body = api.AppendCommitResponse(cp.body[:0], &d.Commit, res)
	cp.respond(e, res.HTTPStatus(), api.ContentTypeJSON, cp.body)
	return appended
}

// persistData answers status, subscribe and retention requests.
func (cp *Pipeline[C]) persistData(e *Entry[C]) {
	d := e.Data
	switch e.Kind {
	case KindStatus:
		cp.st.Persister.Forget(d.Forgotten)
		cp.body = api.AppendStatusResponse(cp.body[:0], cp.st.Persister.Status(d.Status.RequestID, d.Lookup))
		cp.respond(e, 200, api.ContentTypeJSON, cp.body)
	case KindSubscribe:
		cp.subscribe(e)
	case KindRetentionPut:
		created, err := cp.st.Retention.Put(d.PolicyID, d.Policy)
		if err != nil {
			cp.respondError(e, 409, err.Error())
			return
		}
		status := 200
		if created {
			status = 201
		}
		cp.body = api.AppendRetentionPolicy(cp.body[:0], d.PolicyID, d.Policy)
		cp.respond(e, status, api.ContentTypeJSON, cp.body)
	case KindRetentionGet:
		p, ok := cp.st.Retention.Get(d.PolicyID)
		if !ok {
			cp.respondError(e, 404, "retention policy "+d.PolicyID+" not found")
			return
		}
		cp.body = api.AppendRetentionPolicy(cp.body[:0], d.PolicyID, p)
		cp.respond(e, 200, api.ContentTypeJSON, cp.body)
	case KindRetentionDelete:
		// Only this stage changes policies, so Get then Delete is atomic.
		p, ok := cp.st.Retention.Get(d.PolicyID)
		if !ok || !cp.st.Retention.Delete(d.PolicyID) {
			cp.respondError(e, 404, "retention policy "+d.PolicyID+" not found")
			return
		}
		cp.body = api.AppendRetentionPolicy(cp.body[:0], d.PolicyID, p) // what was deleted
		cp.respond(e, 200, api.ContentTypeJSON, cp.body)
	case KindRetentionList:
		cp.body = api.AppendRetentionPolicies(cp.body[:0], cp.st.Retention.List())
		cp.respond(e, 200, api.ContentTypeJSON, cp.body)
	}
}

// subscribe starts the cursor here, in version order with the commits, so
// "from the next commit" starts exactly after the commits before it. The
// answer is the head of a chunked stream; the loop streams the rest.
func (cp *Pipeline[C]) subscribe(e *Entry[C]) {
	if next := cp.st.Persister.Version() + 1; e.Data.FromVersion > next {
		e.Reply.Close = true
		cp.respondError(e, 400, fmt.Sprintf("from_version: %d is beyond the next version, %d", e.Data.FromVersion, next))
		return
	}
	sub, err := cp.st.Subscribe(e.Data.FromVersion)
	if err != nil {
		e.Reply.Close = true // the request is answered; the connection carries no more
		switch {
		case errors.Is(err, store.ErrLogTruncated):
			cp.respondError(e, 410, api.SubscribeErrLogTruncated+": "+err.Error())
		default:
			cp.respondError(e, 503, err.Error())
		}
		return
	}
	e.Data.Sub = sub
	e.Status = 200
	e.Resp = cp.opt.Responder.AppendStreamHead(make([]byte, 0, 128+len(e.Reply.RequestID)), &e.Reply, 200, api.ContentTypeNDJSON)
}
