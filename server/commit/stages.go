// The first three stages' work on a batch: sequence, resolve and
// persist (release is release.go). Each runs on whoever holds its stage
// thread: its own goroutine, or a pushing goroutine under run to
// completion (inline.go); the state each touches is its stage's alone.

package commit

import (
	"strconv"
	"time"
	"weaseldb/server/api"
	"weaseldb/server/pipeline"
	"weaseldb/server/store"
)

// sequence assigns versions to commits and looks status requests up. The
// clock is read once per batch, and only when the batch has a data route.
func (cp *Pipeline[C]) sequence(b pipeline.StageBatch[Entry[C]], _ int, _ int64) (shutdowns int) {
	var now time.Time
	sq := cp.st.Sequencer
	for i := 0; i < b.Len(); i++ {
		e := b.At(i)
		switch e.Kind {
		case KindShutdown:
			shutdowns++
		case KindCommit:
			if now.IsZero() {
				now = cp.opt.Now()
			}
			d := e.Data
			d.Sequenced = sq.Sequence(d.Commit.RequestID, d.Commit.ReadVersion, now)
			e.Version, d.Forgotten = d.Sequenced.Version, sq.Forgotten()
		case KindStatus:
			if now.IsZero() {
				now = cp.opt.Now()
			}
			q := &e.Data.Status
			e.Data.Lookup = sq.LookupStatus(q.RequestID, q.MinVersion, now)
			e.Data.Forgotten = sq.Forgotten()
		}
	}
	if !now.IsZero() {
		sq.PublishStats()
	}
	return shutdowns
}

// resolve checks the preconditions of commits; /ok spends its spin work
// here, and so does every commit when benchmark.commit_resolve_spin_ns is
// set (duplicates and commits refused by the sequence stage included: the
// knob is a cost per request of the route), and every status lookup when
// benchmark.status_resolve_spin_ns is. It must never block.
func (cp *Pipeline[C]) resolve(b pipeline.StageBatch[Entry[C]], _ int, _ int64) (shutdowns int) {
	for i := 0; i < b.Len(); i++ {
		e := b.At(i)
		switch e.Kind {
		case KindShutdown:
			shutdowns++
		case KindOK:
			if cp.opt.OkResolveIterations > 0 {
				cp.opt.spendIterations(cp.opt.OkResolveIterations)
			}
			if cp.opt.OkResolveSpin > 0 {
				cp.opt.spinFor(cp.opt.OkResolveSpin)
			}
		case KindStatus:
			if cp.opt.StatusResolveIterations > 0 {
				cp.opt.spendIterations(cp.opt.StatusResolveIterations)
			}
			if cp.opt.StatusResolveSpin > 0 {
				cp.opt.spinFor(cp.opt.StatusResolveSpin)
			}
		case KindCommit:
			if cp.opt.CommitResolveIterations > 0 {
				cp.opt.spendIterations(cp.opt.CommitResolveIterations)
			}
			if cp.opt.CommitResolveSpin > 0 {
				cp.opt.spinFor(cp.opt.CommitResolveSpin)
			}
			if e.Data.Sequenced.Verdict == store.Accepted {
				e.Data.Result = cp.st.Resolver.Resolve(e.Version, &e.Data.Commit)
			}
		}
	}
	return shutdowns
}

// persist applies commits and builds each response. After a batch with
// commits it publishes the log once (waking the subscribers' loops through
// OnPublish): subscribers cost this stage nothing per subscriber.
func (cp *Pipeline[C]) persist(b pipeline.StageBatch[Entry[C]], _ int, _ int64) (shutdowns int) {
	var now time.Time
	committed, appended := false, false
	for i := 0; i < b.Len(); i++ {
		e := b.At(i)
		switch e.Kind {
		case KindShutdown:
			shutdowns++
		case KindOK:
			e.Status = 200
			if e.Resp = cp.okResponses[e.Reply.Framing]; e.Resp == nil || e.Reply.RequestID != nil {
				e.Resp = cp.okResponse(&e.Reply)
			}
		case KindVersion:
			body := append(cp.body[:0], `{"version":`...)
			body = strconv.AppendInt(body, cp.st.Persister.Version(), 10)
			cp.body = append(body, `,"leader":""}`...)
			cp.respond(e, 200, api.ContentTypeJSON, cp.body)
		case KindCommit:
			if now.IsZero() {
				now = cp.opt.Now()
			}
			committed = true
			appended = cp.persistCommit(e, now) || appended
		case kindNone:
		default:
			cp.persistData(e)
		}
	}
	if committed {
		cp.st.Persister.PublishBatch()
		if appended && cp.opt.OnPublish != nil {
			cp.opt.OnPublish()
		}
	}
	return shutdowns
}
