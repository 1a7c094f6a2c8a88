package store

import "time"

// requestIDs is the sequence stage's memory of request ids, of two kinds:
//
//   - a commit's id, with the version it was assigned, so that a retry is
//     answered with the first attempt's outcome instead of being applied
//     again;
//   - a banned id: one that GET /v1/status answered not_found for, so that
//     a commit with it that arrives later (sent before the status request,
//     delayed) is refused, and the not_found stays true.
//
// An id is remembered by its 128-bit hash, not its text (idKey), in 32
// bytes plus its share of the table (idIndex): about 40 bytes per entry.
//
// An entry is forgotten once it is past both retention limits (Limits.Past),
// oldest first; with no cap (commit.max_request_ids = 0, the default) that
// is the only way, and memory grows with the ids within retention. A cap
// of maxIDs entries is an opt-in guard: when full, the oldest entry is
// dropped although still within retention, and from then on a commit
// whose id is unknown is accepted only if its read_version proves that it
// is not a retry of a dropped entry (see Sequencer.Sequence); the others
// are refused, never applied a second time. The drop is counted (Stats)
// and named in status answers.
//
// Owner: the sequence stage goroutine. No method is goroutine-safe.
type requestIDs struct {
	// idx holds one record per entry, keyed by the id's hash (idKey), in
	// eviction order: commits' in version order; a ban refreshed by a later
	// not_found is updated in place and moved to the back only when its
	// record reaches the front (see queuedAs), so repeated status requests
	// never add records.
	idx idIndex
	// queuedAs holds, for each ban refreshed since its record was queued
	// (by seq), the state it was queued with: that decides when it leaves
	// the front, as if the refresh had not moved it. Empty unless status
	// polls an unknown id while commits flow.
	queuedAs map[uint64]idEntry
	maxIDs   int // 0: no cap

	commits, bans int // live entries of each kind

	// forgotten is the highest version of a commit id forgotten (0:
	// none): ids of versions above it are all remembered.
	forgotten      int64
	forgottenByCap bool // forgotten was set by a cap drop

	// early is the newest entry the cap dropped while it was still within
	// retention (its version and storeClock time); proof is the
	// read_version from which a commit cannot be a retry of any entry
	// dropped so far. It matters until early is past retention too (then
	// the drop is what retention would have done).
	earlyVersion, earlyAt int64
	proof                 int64
	droppedByCap          int64 // entries dropped by the cap since start

	hash func(string) idKey // hashID; tests force collisions with their own
}

// storeClock turns times into int64 nanoseconds since the package's start
// (monotonic when both carry a monotonic reading): 8 bytes per record
// instead of time.Time's 24.
var clockBase = time.Now()

func storeClock(t time.Time) int64 { return int64(t.Sub(clockBase)) }

func newRequestIDs(maxIDs int) *requestIDs {
	return &requestIDs{queuedAs: make(map[uint64]idEntry), maxIDs: max(maxIDs, 0), hash: hashID}
}

// key is what the store keeps of id (see idKey).
func (m *requestIDs) key(id string) idKey { return m.hash(id) }

// limit is the most entries held: the cap, or with none the index's own
// limit (about 4 billion, some 160 GiB).
func (m *requestIDs) limit() int {
	if m.maxIDs > 0 {
		return min(m.maxIDs, m.idx.maxLen())
	}
	return m.idx.maxLen()
}

func (m *requestIDs) get(k idKey) (idEntry, bool) {
	seq, ok := m.idx.find(k)
	if !ok {
		return idEntry{}, false
	}
	return m.idx.rec(seq).idEntry, true
}

// addCommit remembers the id (key k) of the commit assigned version; the
// id is not remembered yet.
func (m *requestIDs) addCommit(k idKey, version int64, now time.Time) {
	m.idx.push(idRecord{key: k, idEntry: idEntry{v: version, at: storeClock(now)}})
	m.commits++
}

// ban bans the id (key k) as of version (the last version sequenced) and
// now; the id is banned already or not held (a commit's id is left alone:
// LookupStatus answers it instead). A ban already held is
// refreshed in place, so it lasts the retention from the latest not_found;
// its record is moved when it reaches the front (evict).
func (m *requestIDs) ban(k idKey, version int64, now time.Time) {
	e := idEntry{v: ^version, at: storeClock(now)}
	if seq, ok := m.idx.find(k); ok {
		r := m.idx.rec(seq)
		if !r.banned() {
			return // a commit's id: status answers it, never bans it
		}
		if _, refreshed := m.queuedAs[seq]; !refreshed {
			m.queuedAs[seq] = r.idEntry
		}
		r.idEntry = e
		return
	}
	m.idx.push(idRecord{key: k, idEntry: e})
	m.bans++
}

// evict forgets, oldest first, the entries past both limits, then as many
// as the cap requires.
func (m *requestIDs) evict(lim Limits, last int64, now time.Time) {
	for m.idx.len() > 0 {
		seq, r := m.idx.front()
		queued, refreshed := r.idEntry, false
		if r.banned() && len(m.queuedAs) > 0 {
			if q, ok := m.queuedAs[seq]; ok {
				queued, refreshed = q, true
			}
		}
		switch {
		case past(lim, queued.version(), queued.at, last, now):
			if refreshed {
				delete(m.queuedAs, seq)
				if !past(lim, r.version(), r.at, last, now) {
					// A ban refreshed since: it lives on from its latest
					// not_found, behind the others.
					m.idx.requeueFront(r.idEntry)
					continue
				}
			}
			m.forget(m.idx.popFront().idEntry, false)
		case m.idx.len() > m.limit():
			if refreshed {
				delete(m.queuedAs, seq)
			}
			m.forget(m.idx.popFront().idEntry, true)
		default:
			return
		}
	}
}

func past(lim Limits, version, at, last int64, now time.Time) bool {
	return version <= last-lim.Versions && storeClock(now)-at >= int64(lim.Age)
}

// forget counts the entry e, just removed from the index.
func (m *requestIDs) forget(e idEntry, byCap bool) {
	version := e.version()
	if e.banned() {
		m.bans--
	} else {
		m.commits--
		m.forgotten, m.forgottenByCap = version, byCap
	}
	if !byCap {
		return
	}
	m.droppedByCap++
	if version >= m.earlyVersion {
		m.earlyVersion, m.earlyAt = version, e.at
	}
	// A retry of a dropped commit id carries the read_version of its first
	// attempt, which was below the version it got; a late commit that a
	// ban guarded against was sent before the status request, so its
	// read_version is at most the ban's version.
	proof := version
	if e.banned() {
		proof = version + 1
	}
	m.proof = max(m.proof, proof)
}

// earlyDropActive reports whether the cap has dropped an entry that is
// still within retention: then an unknown id may be one the server should
// have remembered.
func (m *requestIDs) earlyDropActive(lim Limits, last int64, now time.Time) bool {
	return m.proof > 0 && !past(lim, m.earlyVersion, m.earlyAt, last, now)
}
