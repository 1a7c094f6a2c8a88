package store

import (
	"bytes"

	"weaseldb/server/api"
)

// Resolver is the resolve stage's state: the recent writes of committed
// transactions by version, to decide whether a commit's preconditions still
// hold.
//
// Owner: the resolve stage goroutine. Every field is read and written by it
// alone; no method is goroutine-safe.
//
// Cost: a point read is one map lookup plus a scan of the range deletes
// newer than read_version; a range read scans every write newer than
// read_version. Clients read recent versions, so the scans are short; the
// history is bounded by maxBytes, and a read_version older than it is
// refused (read_version_too_old) rather than answered wrongly.
type Resolver struct {
	last      int64            // last version resolved
	points    map[string]int64 // key -> newest version that wrote or deleted it
	history   deque[writeSet]  // committed write sets with writes, in version order
	ranges    deque[rangeWrite]
	bytes     int64 // memory held by history, approximately
	maxBytes  int64
	truncated int64 // writes at or below this version may be forgotten
}

type writeSet struct {
	version int64
	keys    [][]byte // point writes and deletes (copied, the request is not kept)
	ranges  []keyRange
	size    int64
}

type keyRange struct{ begin, end []byte }

type rangeWrite struct {
	version int64
	r       keyRange
}

// perEntryOverhead approximates the bookkeeping bytes of one key in the
// history (slice header, map entry).
const perEntryOverhead = 64

// NewResolver keeps at most about maxBytes of write history.
func NewResolver(maxBytes int64) *Resolver {
	return &Resolver{points: make(map[string]int64), maxBytes: max(maxBytes, 1)}
}

// Resolve decides the commit sequenced at version (which must be the next
// version after the previous call's, duplicates excluded) and, when it
// commits, records its writes so later commits see them.
func (r *Resolver) Resolve(version int64, req *api.CommitRequest) api.CommitResult {
	res := r.check(version, req)
	r.last = version
	if res.Committed {
		r.record(version, req.Operations)
	}
	return res
}

func (r *Resolver) check(version int64, req *api.CommitRequest) api.CommitResult {
	res := api.CommitResult{Version: version}
	rv := req.ReadVersion
	switch {
	case req.HasReadVersion && rv >= version:
		// Refused with or without preconditions: no client can have read
		// a version not assigned yet. This also keeps every accepted
		// commit's read_version below its version, which the sequencer's
		// retry proof relies on (Sequencer.Sequence).
		res.Reason = api.ReasonReadVersionInFuture
		return res
	case len(req.Preconditions) == 0:
		res.Committed = true
		return res
	case rv < r.truncated:
		res.Reason = api.ReasonReadVersionTooOld
		return res
	}
	for i := range req.Preconditions {
		if r.conflicts(req.Preconditions[i], rv) {
			res.Reason, res.ConflictIndex, res.Conflict = api.ReasonConflict, i, &req.Preconditions[i]
			return res
		}
	}
	res.Committed = true
	return res
}

func (r *Resolver) conflicts(pc api.Precondition, rv int64) bool {
	if pc.Type == api.PointRead {
		if v, ok := r.points[string(pc.Key)]; ok && v > rv {
			return true
		}
		for i := r.ranges.search(func(w *rangeWrite) bool { return w.version > rv }); i < r.ranges.len(); i++ {
			if w := r.ranges.at(i); contains(w.r, pc.Key) {
				return true
			}
		}
		return false
	}
	read := keyRange{pc.Begin, pc.End}
	for i := r.history.search(func(w *writeSet) bool { return w.version > rv }); i < r.history.len(); i++ {
		ws := r.history.at(i)
		for _, k := range ws.keys {
			if contains(read, k) {
				return true
			}
		}
		for _, wr := range ws.ranges {
			if intersects(read, wr) {
				return true
			}
		}
	}
	return false
}

// contains: k in [begin, end).
func contains(r keyRange, k []byte) bool {
	return bytes.Compare(k, r.begin) >= 0 && bytes.Compare(k, r.end) < 0
}

// intersects: the half-open ranges share a key (empty ranges share none).
func intersects(a, b keyRange) bool {
	return bytes.Compare(a.begin, b.end) < 0 && bytes.Compare(b.begin, a.end) < 0 &&
		bytes.Compare(a.begin, a.end) < 0 && bytes.Compare(b.begin, b.end) < 0
}

func (r *Resolver) record(version int64, ops []api.Operation) {
	if len(ops) == 0 {
		return
	}
	ws := writeSet{version: version}
	for _, op := range ops {
		switch op.Type {
		case api.Write, api.Delete:
			k := bytes.Clone(op.Key)
			ws.keys = append(ws.keys, k)
			ws.size += int64(len(k)) + perEntryOverhead
			r.points[string(k)] = version
		case api.RangeDelete:
			kr := keyRange{bytes.Clone(op.Begin), bytes.Clone(op.End)}
			ws.ranges = append(ws.ranges, kr)
			ws.size += int64(len(kr.begin)+len(kr.end)) + perEntryOverhead
			r.ranges.push(rangeWrite{version: version, r: kr})
		}
	}
	r.history.push(ws)
	r.bytes += ws.size
	for r.bytes > r.maxBytes && r.history.len() > 1 {
		r.forgetOldest()
	}
}

func (r *Resolver) forgetOldest() {
	ws := r.history.popFront()
	r.bytes -= ws.size
	for _, k := range ws.keys {
		if r.points[string(k)] == ws.version {
			delete(r.points, string(k))
		}
	}
	for r.ranges.len() > 0 && r.ranges.front().version <= ws.version {
		r.ranges.popFront()
	}
	r.truncated = ws.version
}

// OldestReadVersion is the oldest read_version the resolver can still check.
func (r *Resolver) OldestReadVersion() int64 { return r.truncated }

// HistoryBytes is the approximate memory of the write history.
func (r *Resolver) HistoryBytes() int64 { return r.bytes }
