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
// An entry is forgotten once it is past both retention limits (Limits.Past),
// oldest first. The memory is also capped at maxIDs entries (config
// commit.max_request_ids): when full, the oldest entry is dropped although
// still within retention, and from then on a commit whose id is unknown is
// accepted only if its read_version proves that it is not a retry of a
// dropped entry (see Sequencer.Sequence); the others are refused, never
// applied a second time. The drop is counted (Stats) and named in status
// answers.
//
// Owner: the sequence stage goroutine. No method is goroutine-safe.
type requestIDs struct {
	entries map[string]idEntry
	// order holds one record per entry, for eviction: commits' in version
	// order; a ban refreshed by a later not_found is moved to the back
	// only when its record reaches the front, so repeated status requests
	// never add records.
	order  deque[idRecord]
	maxIDs int

	commits, bans int // live entries of each kind

	// forgotten is the highest version of a commit id forgotten (0:
	// none): ids of versions above it are all remembered.
	forgotten      int64
	forgottenByCap bool // forgotten was set by a cap drop

	// early is the newest entry the cap dropped while it was still within
	// retention; proof is the read_version from which a commit cannot be a
	// retry of any entry dropped so far. It matters until early is past
	// retention too (then the drop is what retention would have done).
	early        idRecord
	proof        int64
	droppedByCap int64 // entries dropped by the cap since start
}

// idEntry is one remembered id: a commit's assigned version, or for a ban
// (v < 0, v = ^version) the last version sequenced when status answered
// not_found, and when (storeClock). Packed in 16 bytes: the map holds one
// per id.
type idEntry struct {
	v  int64
	at int64
}

func (e idEntry) banned() bool { return e.v < 0 }

func (e idEntry) version() int64 {
	if e.v < 0 {
		return ^e.v
	}
	return e.v
}

// idRecord is one entry in eviction order. The id string is shared with
// the map key (no copy).
type idRecord struct {
	id      string
	version int64
	at      int64 // storeClock nanoseconds
}

// storeClock turns times into int64 nanoseconds since the package's start
// (monotonic when both carry a monotonic reading): 8 bytes per record
// instead of time.Time's 24.
var clockBase = time.Now()

func storeClock(t time.Time) int64 { return int64(t.Sub(clockBase)) }

func newRequestIDs(maxIDs int) *requestIDs {
	return &requestIDs{entries: make(map[string]idEntry), maxIDs: max(maxIDs, 1)}
}

func (m *requestIDs) get(id string) (idEntry, bool) {
	e, ok := m.entries[id]
	return e, ok
}

// addCommit remembers the id of the commit assigned version (the id is not
// remembered yet).
func (m *requestIDs) addCommit(id string, version int64, now time.Time) {
	at := storeClock(now)
	m.entries[id] = idEntry{v: version, at: at}
	m.commits++
	m.order.push(idRecord{id: id, version: version, at: at})
}

// ban bans id as of version (the last version sequenced) and now. A ban
// already held is refreshed in place, so it lasts the retention from the
// latest not_found; its record is moved when it reaches the front (evict).
func (m *requestIDs) ban(id string, version int64, now time.Time) {
	at := storeClock(now)
	if e, ok := m.entries[id]; ok && e.banned() {
		m.entries[id] = idEntry{v: ^version, at: at}
		return
	}
	m.entries[id] = idEntry{v: ^version, at: at}
	m.bans++
	m.order.push(idRecord{id: id, version: version, at: at})
}

// evict forgets, oldest first, the entries past both limits, then as many
// as the cap requires.
func (m *requestIDs) evict(lim Limits, last int64, now time.Time) {
	for m.order.len() > 0 {
		r := m.order.front()
		switch {
		case past(lim, r.version, r.at, last, now):
			r := m.order.popFront()
			e := m.entries[r.id]
			if (e.version() != r.version || e.at != r.at) && !past(lim, e.version(), e.at, last, now) {
				// A ban refreshed since: it lives on from its latest
				// not_found, behind the others.
				m.order.push(idRecord{id: r.id, version: e.version(), at: e.at})
				continue
			}
			m.forget(r.id, e, false)
		case m.order.len() > m.maxIDs:
			r := m.order.popFront()
			m.forget(r.id, m.entries[r.id], true)
		default:
			return
		}
	}
}

func past(lim Limits, version, at, last int64, now time.Time) bool {
	return version <= last-lim.Versions && storeClock(now)-at >= int64(lim.Age)
}

// forget drops the entry e of id.
func (m *requestIDs) forget(id string, e idEntry, byCap bool) {
	delete(m.entries, id)
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
	if version >= m.early.version {
		m.early = idRecord{id: id, version: version, at: e.at}
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
	return m.proof > 0 && !past(lim, m.early.version, m.early.at, last, now)
}
