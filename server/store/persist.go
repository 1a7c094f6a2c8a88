package store

import (
	"bytes"
	"sync/atomic"
	"time"

	"weaseldb/server/api"
)

// Persister is the persist stage's state: the in-memory key-value store,
// the outcome of every refused commit that carried a request id (a commit
// the sequencer remembers and that is not among them committed), and the
// writer side of the subscription log.
//
// Owner: the persist stage goroutine. Every field is read and written by it
// alone, except version (atomic: any goroutine may read Version) and log
// (goroutine-safe itself).
type Persister struct {
	kv      map[string]kvEntry
	refused deque[refusal] // refused commits with a request id, in version order
	log     *Log
	version atomic.Int64 // last version persisted
}

type kvEntry struct {
	value   []byte
	version int64 // version that wrote it
}

// refusal is a refused commit's outcome, kept for its duplicates and its
// status: the conflicting precondition is copied (the request is freed).
type refusal struct {
	version int64
	res     api.CommitResult
}

// NewPersister applies commits to an empty store and appends them to log.
func NewPersister(log *Log) *Persister {
	return &Persister{kv: make(map[string]kvEntry), log: log}
}

// Apply persists the decided commit at res.Version: a committed commit's
// operations are applied and appended to the log; the outcome of a refused
// commit with a request id is recorded for status and duplicate answers.
// Call it for every commit the sequencer accepted, in version order; call
// PublishBatch at the end of each batch.
func (p *Persister) Apply(req *api.CommitRequest, res api.CommitResult, now time.Time) {
	if res.Committed && len(req.Operations) > 0 {
		p.apply(res.Version, req.Operations)
		// The log keeps the line, so each gets its own array.
		line := api.AppendTransactionLine(make([]byte, 0, p.lineSize(req.Operations)), res.Version, req.Operations)
		p.log.Append(res.Version, line, now)
	}
	if !res.Committed && req.RequestID != "" {
		if res.Conflict != nil {
			c := cloneConflict(*res.Conflict)
			res.Conflict = &c
		}
		p.refused.push(refusal{version: res.Version, res: res})
	}
	p.version.Store(res.Version)
}

func cloneConflict(c api.Precondition) api.Precondition {
	c.Key, c.Begin, c.End = bytes.Clone(c.Key), bytes.Clone(c.Begin), bytes.Clone(c.End)
	return c
}

// Forget drops the outcomes at or below version: the sequencer forgot their
// ids (Sequencer.Forgotten), so nothing will ask for them again. Called with
// the value the sequence stage read for the entry being persisted, so the
// outcomes kept are exactly those of the ids the sequencer still knew.
func (p *Persister) Forget(version int64) {
	for p.refused.len() > 0 && p.refused.front().version <= version {
		p.refused.popFront()
	}
}

// lineSize is the encoded size of a transaction line, to allocate it once.
func (p *Persister) lineSize(ops []api.Operation) int {
	n := 64
	for _, op := range ops {
		n += 48 + (len(op.Key)+len(op.Value)+len(op.Begin)+len(op.End))*4/3 + 8
	}
	return n
}

func (p *Persister) apply(version int64, ops []api.Operation) {
	for _, op := range ops {
		switch op.Type {
		case api.Write:
			// Copy: the request's arena is freed with the request.
			p.kv[string(op.Key)] = kvEntry{value: bytes.Clone(op.Value), version: version}
		case api.Delete:
			delete(p.kv, string(op.Key))
		case api.RangeDelete:
			p.deleteRange(op.Begin, op.End)
		}
	}
}

// deleteRange scans the whole map: the store is a hash map, which makes the
// common point operations O(1) and a range delete O(keys).
func (p *Persister) deleteRange(begin, end []byte) {
	if bytes.Compare(begin, end) >= 0 {
		return
	}
	for k := range p.kv {
		if k >= string(begin) && k < string(end) {
			delete(p.kv, k)
		}
	}
}

// PublishBatch wakes the subscribers once per batch. Persist stage only.
func (p *Persister) PublishBatch() { p.log.Publish(p.version.Load()) }

// Version is the last version persisted (any goroutine; GET /v1/version).
func (p *Persister) Version() int64 { return p.version.Load() }

// DuplicateResult is the answer to a commit whose request id the sequence
// stage found already used by the commit at version: the original's
// outcome (every field of it, the conflicting precondition included),
// marked Duplicate.
func (p *Persister) DuplicateResult(version int64) api.CommitResult {
	res := p.outcome(version)
	res.Duplicate = true
	return res
}

// Status answers GET /v1/status from the sequence stage's lookup.
func (p *Persister) Status(requestID string, lk Lookup) api.StatusResult {
	st := api.StatusResult{RequestID: requestID}
	switch {
	case lk.Truncated:
		st.Kind, st.OldestVersion = api.StatusLogTruncated, lk.OldestVersion
		st.TruncatedByCap = lk.Reason == TruncatedByCap
	case !lk.Found:
		st.Kind = api.StatusNotFound
	default:
		res := p.outcome(lk.Version)
		st.Version = lk.Version
		if res.Committed {
			st.Kind = api.StatusCommitted
		} else {
			st.Kind, st.Reason, st.ConflictIndex, st.Conflict = api.StatusNotCommitted, res.Reason, res.ConflictIndex, res.Conflict
		}
	}
	return st
}

// outcome is the result of the commit at version, which the sequencer
// remembers and which was persisted: refused if recorded, committed
// otherwise.
func (p *Persister) outcome(version int64) api.CommitResult {
	i := p.refused.search(func(r *refusal) bool { return r.version >= version })
	if i < p.refused.len() && p.refused.at(i).version == version {
		return p.refused.at(i).res
	}
	return api.CommitResult{Committed: true, Version: version}
}

// RefusedOutcomes is the number of refused outcomes kept (tests, metrics).
func (p *Persister) RefusedOutcomes() int { return p.refused.len() }

// Get returns the value of key and the version that wrote it.
func (p *Persister) Get(key []byte) (value []byte, version int64, ok bool) {
	e, ok := p.kv[string(key)]
	return e.value, e.version, ok
}

// Len is the number of keys stored.
func (p *Persister) Len() int { return len(p.kv) }
