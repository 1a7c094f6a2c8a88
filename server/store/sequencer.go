package store

import "time"

// Sequencer is the sequence stage's state: it assigns versions and
// remembers which request ids it has seen, so a retried commit is not
// applied twice.
//
// Owner: the sequence stage goroutine. Every field is read and written by it
// alone; no method is goroutine-safe.
type Sequencer struct {
	last      int64            // last version assigned (0: none yet)
	ids       map[string]int64 // request id -> version it was assigned
	order     deque[idRecord]  // the ids in version order, for eviction
	truncated int64            // highest version whose request id may be forgotten
	maxIDs    int
	retention *Retention
}

type idRecord struct {
	id      string
	version int64
	at      time.Time
}

// NewSequencer starts at version 0 (the first commit gets version 1).
// maxIDs bounds the remembered request ids (memory); the retention limits
// bound them by age and versions.
func NewSequencer(r *Retention, maxIDs int) *Sequencer {
	return &Sequencer{ids: make(map[string]int64), maxIDs: max(maxIDs, 1), retention: r}
}

// LastVersion is the last version assigned.
func (s *Sequencer) LastVersion() int64 { return s.last }

// Sequence assigns the next version to a commit. When requestID (not "")
// was seen within retention it returns the original's version with
// duplicate true and assigns nothing: the caller must not resolve or apply
// the commit, only answer with the original's outcome
// (Persister.DuplicateResult). now is the batch's time, read once per batch.
func (s *Sequencer) Sequence(requestID string, now time.Time) (version int64, duplicate bool) {
	if requestID != "" {
		if v, ok := s.ids[requestID]; ok {
			return v, true
		}
	}
	s.last++
	if requestID != "" {
		s.ids[requestID] = s.last
		s.order.push(idRecord{id: requestID, version: s.last, at: now})
	}
	s.evict(now)
	return s.last, false
}

// Lookup is what the sequence stage knows about a status request; the
// persist stage turns it into an answer (Persister.Status).
type Lookup struct {
	Found bool
	// Version: the version the request id was assigned, when Found.
	Version int64
	// Truncated: not found, and ids from min_version on may have been
	// forgotten, so "not_found" cannot be promised.
	Truncated bool
	// OldestVersion: the oldest version whose request ids are all still
	// known (for log_truncated answers).
	OldestVersion int64
}

// LookupStatus looks requestID up for GET /v1/status. minVersion is the
// client's lower bound on the commit's version (its read_version; 0 when it
// does not know): an id not found is log_truncated when ids of versions at
// or above minVersion may have been forgotten, not_found otherwise.
func (s *Sequencer) LookupStatus(requestID string, minVersion int64, now time.Time) Lookup {
	s.evict(now)
	lk := Lookup{OldestVersion: s.truncated + 1}
	if v, ok := s.ids[requestID]; ok {
		lk.Found, lk.Version = true, v
		return lk
	}
	lk.Truncated = s.truncated > 0 && minVersion <= s.truncated
	return lk
}

// evict forgets the ids that fall outside the retention limits or the
// count bound, oldest first.
func (s *Sequencer) evict(now time.Time) {
	lim := s.retention.Limits()
	if floor := s.last - lim.Versions; floor > s.truncated {
		// Versions that carried no request id age out too.
		s.truncated = floor
	}
	for s.order.len() > 0 {
		r := s.order.front()
		expired := r.version <= s.truncated || now.Sub(r.at) > lim.Age || s.order.len() > s.maxIDs
		if !expired {
			return
		}
		rec := s.order.popFront()
		if s.ids[rec.id] == rec.version {
			delete(s.ids, rec.id)
		}
		s.truncated = max(s.truncated, rec.version)
	}
}

// RememberedIDs is the number of request ids held (for metrics and tests).
func (s *Sequencer) RememberedIDs() int { return len(s.ids) }
