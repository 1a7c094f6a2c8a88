package store

import (
	"sync/atomic"
	"time"
)

// Sequencer is the sequence stage's state: it assigns versions and keeps
// the memory of request ids (requestIDs), so that a retried commit is never
// applied twice within retention and a status answer stays true. Commits
// and status requests are both ordered through this one stage, so "status
// answered not_found, then the commit arrived" has one meaning for everyone.
//
// Owner: the sequence stage goroutine. Every field is read and written by it
// alone, except stats (atomics, published once per batch by
// PublishStats for metrics); no other method is goroutine-safe.
type Sequencer struct {
	last      int64 // last version assigned (0: none yet)
	ids       *requestIDs
	retention *Retention

	refusedBanned, refusedUnverifiable int64
	stats                              Stats
}

// Stats are the sequencer's counters for metrics (any goroutine; updated by
// PublishStats).
type Stats struct {
	RememberedIDs       atomic.Int64 // request ids of commits remembered
	BannedIDs           atomic.Int64 // ids banned by a not_found status answer
	RequestIDBytes      atomic.Int64 // memory held for remembered and banned ids together (RequestIDBytes)
	MaxRequestIDs       atomic.Int64 // the cap on both together (0: no cap)
	DroppedByCap        atomic.Int64 // entries dropped by the cap while within retention (total)
	RefusedBanned       atomic.Int64 // commits refused: their id was banned (total)
	RefusedUnverifiable atomic.Int64 // commits refused: the cap dropped ids they might retry (total)
}

// NewSequencer starts at version 0 (the first commit gets version 1).
// maxIDs caps the request ids and bans remembered (commit.max_request_ids);
// 0 means no cap: retention alone decides what is forgotten.
func NewSequencer(r *Retention, maxIDs int) *Sequencer {
	s := &Sequencer{ids: newRequestIDs(maxIDs), retention: r}
	s.stats.MaxRequestIDs.Store(int64(s.ids.maxIDs))
	return s
}

// LastVersion is the last version assigned.
func (s *Sequencer) LastVersion() int64 { return s.last }

// Verdict is what the sequence stage decided about a commit's request id.
type Verdict uint8

// Verdicts.
const (
	// Accepted: a new commit; it got the next version and goes on to be
	// resolved and applied.
	Accepted Verdict = iota
	// Duplicate: the id is a commit's within retention; Version is that
	// commit's, and the answer is its outcome (Persister.DuplicateResult).
	Duplicate
	// Banned: status answered not_found for this id; refused, no version.
	Banned
	// Unverifiable: the id is unknown, but the cap dropped ids still within
	// retention and read_version does not prove this commit is not a retry
	// of one of them; refused, no version. MinReadVersion says which
	// read_version would.
	Unverifiable
)

// Sequenced is the sequence stage's decision about one commit.
type Sequenced struct {
	Verdict Verdict
	// Version: the version assigned (Accepted) or the original's
	// (Duplicate); 0 when refused.
	Version int64
	// MinReadVersion: Unverifiable only.
	MinReadVersion int64
}

// Sequence decides a commit: requestID "" (none) is always Accepted.
// readVersion is the commit's read_version (0 when absent); it only
// matters once the cap has dropped ids. now is the batch's time, read once
// per batch.
func (s *Sequencer) Sequence(requestID string, readVersion int64, now time.Time) Sequenced {
	lim := s.retention.Limits()
	s.ids.evict(lim, s.last, now)
	var k idKey
	if requestID != "" {
		k = s.ids.key(requestID)
		if e, ok := s.ids.get(k); ok {
			if e.banned() {
				s.refusedBanned++
				return Sequenced{Verdict: Banned}
			}
			return Sequenced{Verdict: Duplicate, Version: e.version()}
		}
		// Unknown. A retry of a dropped entry carries the read_version of
		// its first attempt, below the proof (see requestIDs.forget); a
		// read_version at or above it proves the commit is new. A commit
		// with a read_version in the future is refused by the resolver,
		// so a first attempt's read_version is always below its version.
		if readVersion < s.ids.proof && s.ids.earlyDropActive(lim, s.last, now) {
			s.refusedUnverifiable++
			return Sequenced{Verdict: Unverifiable, MinReadVersion: s.ids.proof}
		}
	}
	s.last++
	if requestID != "" {
		s.ids.addCommit(k, s.last, now)
		s.ids.evict(lim, s.last, now) // the cap, at once
	}
	return Sequenced{Verdict: Accepted, Version: s.last}
}

// TruncationReason says why ids may have been forgotten.
type TruncationReason uint8

// Truncation reasons.
const (
	// TruncatedByRetention: past both retention limits (the client's
	// choice of retention).
	TruncatedByRetention TruncationReason = iota + 1
	// TruncatedByCap: commit.max_request_ids was reached and ids still
	// within retention were dropped.
	TruncatedByCap
)

// Lookup is what the sequence stage knows about a status request; the
// persist stage turns it into an answer (Persister.Status).
type Lookup struct {
	Found bool
	// Version: the version the request id was assigned, when Found.
	Version int64
	// Truncated: not found, and ids from min_version on may have been
	// forgotten, so "not_found" cannot be promised.
	Truncated bool
	Reason    TruncationReason // when Truncated
	// OldestVersion: the oldest version whose request ids are all still
	// known (for log_truncated answers).
	OldestVersion int64
}

// LookupStatus looks requestID up for GET /v1/status. minVersion is the
// client's lower bound on the commit's version (its read_version; 0 when it
// does not know): an id not found is log_truncated when ids of versions at
// or above minVersion may have been forgotten, not_found otherwise. A
// not_found bans the id: a commit with it sequenced later is refused
// (Banned), so the answer stays true.
func (s *Sequencer) LookupStatus(requestID string, minVersion int64, now time.Time) Lookup {
	lim := s.retention.Limits()
	s.ids.evict(lim, s.last, now)
	lk := Lookup{OldestVersion: s.ids.forgotten + 1}
	k := s.ids.key(requestID)
	e, ok := s.ids.get(k)
	switch {
	case ok && !e.banned():
		lk.Found, lk.Version = true, e.version()
		return lk
	case !ok && s.ids.forgotten > 0 && minVersion <= s.ids.forgotten:
		lk.Truncated, lk.Reason = true, TruncatedByRetention
		if s.ids.forgottenByCap && s.ids.earlyDropActive(lim, s.last, now) {
			lk.Reason = TruncatedByCap
		}
		return lk
	}
	// Ban, or refresh the ban so it lasts the full retention from the
	// latest not_found.
	s.ids.ban(k, s.last, now)
	if !ok {
		s.ids.evict(lim, s.last, now) // the cap, at once
	}
	return lk
}

// Forgotten is the highest version whose commit id has been forgotten:
// outcomes at or below it are no longer needed (Persister.Forget).
func (s *Sequencer) Forgotten() int64 { return s.ids.forgotten }

// RememberedIDs is the number of commit request ids held.
func (s *Sequencer) RememberedIDs() int { return s.ids.commits }

// BannedIDs is the number of banned ids held.
func (s *Sequencer) BannedIDs() int { return s.ids.bans }

// RequestIDBytes is the memory held for remembered and banned ids: bans
// and commits' ids share one FIFO and one table, so the bytes are theirs
// together (per id about 40: docs/api.md, "Memory").
func (s *Sequencer) RequestIDBytes() int64 { return s.ids.idx.bytes() }

// PublishStats copies the counters to Stats (once per batch).
func (s *Sequencer) PublishStats() {
	s.stats.RememberedIDs.Store(int64(s.ids.commits))
	s.stats.BannedIDs.Store(int64(s.ids.bans))
	s.stats.RequestIDBytes.Store(s.RequestIDBytes())
	s.stats.DroppedByCap.Store(s.ids.droppedByCap)
	s.stats.RefusedBanned.Store(s.refusedBanned)
	s.stats.RefusedUnverifiable.Store(s.refusedUnverifiable)
}

// Stats are the counters last published (any goroutine).
func (s *Sequencer) Stats() *Stats { return &s.stats }
