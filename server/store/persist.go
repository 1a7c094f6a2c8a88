package store

import (
	"bytes"
	"sync/atomic"
	"time"

	"weaseldb/server/api"
)

// Persister is the persist stage's state: the in-memory key-value store,
// the outcome of every commit that carried a request id, and the writer
// side of the subscription log.
//
// Owner: the persist stage goroutine. Every field is read and written by it
// alone, except version (atomic: any goroutine may read Version) and log
// (goroutine-safe itself).
type Persister struct {
	kv        map[string]kvEntry
	outcomes  deque[outcome] // commits with a request id, in version order
	truncated int64          // outcomes at or below this version may be forgotten
	maxIDs    int
	retention *Retention
	log       *Log
	version   atomic.Int64 // last version persisted
}

type kvEntry struct {
	value   []byte
	version int64 // version that wrote it
}

type outcome struct {
	version int64
	at      time.Time
	res     api.CommitResult
}

// NewPersister applies commits to an empty store and appends them to log.
// maxIDs bounds the outcomes kept, as Sequencer's ids.
func NewPersister(r *Retention, log *Log, maxIDs int) *Persister {
	return &Persister{kv: make(map[string]kvEntry), maxIDs: max(maxIDs, 1), retention: r, log: log}
}

// Apply persists the decided commit at res.Version: a committed commit's
// operations are applied and appended to the log; the outcome of a commit
// with a request id is recorded for status and duplicate answers. Call it
// for every non-duplicate commit, in version order; call PublishBatch at the
// end of each batch.
func (p *Persister) Apply(req *api.CommitRequest, res api.CommitResult, now time.Time) {
	if res.Committed && len(req.Operations) > 0 {
		p.apply(res.Version, req.Operations)
		// The log keeps the line, so each gets its own array.
		line := api.AppendTransactionLine(make([]byte, 0, p.lineSize(req.Operations)), res.Version, req.Operations)
		p.log.Append(res.Version, line, now)
	}
	if req.RequestID != "" {
		p.outcomes.push(outcome{version: res.Version, at: now, res: res})
	}
	p.version.Store(res.Version)
	p.evict(now)
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
// outcome, marked Duplicate. When that outcome is no longer kept, ok is
// false and the result says not_committed with api.ReasonOutcomeUnknown
// (true for this request: nothing was applied for it).
func (p *Persister) DuplicateResult(version int64) (res api.CommitResult, ok bool) {
	o, ok := p.outcome(version)
	if !ok {
		return api.CommitResult{Version: version, Duplicate: true, Reason: api.ReasonOutcomeUnknown}, false
	}
	o.res.Duplicate = true
	return o.res, true
}

// Status answers GET /v1/status from the sequence stage's lookup.
func (p *Persister) Status(requestID string, lk Lookup) api.StatusResult {
	st := api.StatusResult{RequestID: requestID}
	switch {
	case lk.Truncated:
		st.Kind, st.OldestVersion = api.StatusLogTruncated, lk.OldestVersion
	case !lk.Found:
		st.Kind = api.StatusNotFound
	default:
		o, ok := p.outcome(lk.Version)
		switch {
		case !ok:
			st.Kind, st.OldestVersion = api.StatusLogTruncated, p.truncated+1
		case o.res.Committed:
			st.Kind, st.Version = api.StatusCommitted, o.version
		default:
			st.Kind, st.Version = api.StatusNotCommitted, o.version
			st.Reason, st.ConflictIndex = o.res.Reason, o.res.ConflictIndex
		}
	}
	return st
}

func (p *Persister) outcome(version int64) (outcome, bool) {
	i := p.outcomes.search(func(o *outcome) bool { return o.version >= version })
	if i < p.outcomes.len() && p.outcomes.at(i).version == version {
		return *p.outcomes.at(i), true
	}
	return outcome{}, false
}

// evict drops outcomes outside retention or beyond maxIDs, oldest first,
// by the same rule as Sequencer.evict.
func (p *Persister) evict(now time.Time) {
	lim := p.retention.Limits()
	last := p.version.Load()
	for p.outcomes.len() > 0 {
		o := p.outcomes.front()
		expired := o.version <= last-lim.Versions || now.Sub(o.at) > lim.Age || p.outcomes.len() > p.maxIDs
		if !expired {
			return
		}
		p.truncated = max(p.truncated, o.version)
		p.outcomes.popFront()
	}
}

// Get returns the value of key and the version that wrote it.
func (p *Persister) Get(key []byte) (value []byte, version int64, ok bool) {
	e, ok := p.kv[string(key)]
	return e.value, e.version, ok
}

// Len is the number of keys stored.
func (p *Persister) Len() int { return len(p.kv) }
