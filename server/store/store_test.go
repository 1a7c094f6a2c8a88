package store

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"weaseldb/server/api"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func write(k, v string) api.Operation {
	return api.Operation{Type: api.Write, Key: []byte(k), Value: []byte(v)}
}
func del(k string) api.Operation { return api.Operation{Type: api.Delete, Key: []byte(k)} }
func rangeDel(b, e string) api.Operation {
	return api.Operation{Type: api.RangeDelete, Begin: []byte(b), End: []byte(e)}
}
func pointRead(k string) api.Precondition {
	return api.Precondition{Type: api.PointRead, Key: []byte(k)}
}
func rangeRead(b, e string) api.Precondition {
	return api.Precondition{Type: api.RangeRead, Begin: []byte(b), End: []byte(e)}
}

func TestRetentionEffectiveLimits(t *testing.T) {
	base := Limits{Versions: 1000, Age: 10 * time.Hour}
	r := NewRetention(base)
	if r.Limits() != base {
		t.Fatalf("no policies: %+v", r.Limits())
	}
	steps := []struct {
		op   string
		id   string
		p    api.RetentionPolicy
		want Limits
	}{
		// A dimension a policy leaves out needs nothing: history is kept
		// while within either limit.
		{"put", "a", api.RetentionPolicy{Versions: 10}, Limits{Versions: 10, Age: 0}},
		{"put", "b", api.RetentionPolicy{Versions: 50, Seconds: 60}, Limits{Versions: 50, Age: time.Minute}},
		{"put", "a", api.RetentionPolicy{Seconds: 30}, Limits{Versions: 50, Age: time.Minute}},
		{"put", "a", api.RetentionPolicy{Versions: 5, Seconds: 30}, Limits{Versions: 50, Age: time.Minute}},
		{"put", "c", api.RetentionPolicy{Versions: 1 << 40, Seconds: 1 << 30}, base}, // capped by base
		{"delete", "c", api.RetentionPolicy{}, Limits{Versions: 50, Age: time.Minute}},
		{"delete", "a", api.RetentionPolicy{}, Limits{Versions: 50, Age: time.Minute}},
		{"delete", "b", api.RetentionPolicy{}, base},
	}
	for i, s := range steps {
		if s.op == "put" {
			if _, err := r.Put(s.id, s.p); err != nil {
				t.Fatal(err)
			}
		} else if !r.Delete(s.id) {
			t.Fatalf("step %d: delete %s: not found", i, s.id)
		}
		if got := r.Limits(); got != s.want {
			t.Fatalf("step %d (%s %s): limits %+v, want %+v", i, s.op, s.id, got, s.want)
		}
	}
	if r.Delete("nope") {
		t.Fatal("deleted a missing policy")
	}
	created, _ := r.Put("x", api.RetentionPolicy{Versions: 1})
	again, _ := r.Put("x", api.RetentionPolicy{Versions: 2})
	if !created || again {
		t.Fatalf("created flags %v %v", created, again)
	}
	if p, ok := r.Get("x"); !ok || p.Versions != 2 {
		t.Fatalf("get: %+v %v", p, ok)
	}
	r.Put("a", api.RetentionPolicy{Seconds: 1})
	if got := r.List(); len(got) != 2 || got[0].ID != "a" || got[1].ID != "x" {
		t.Fatalf("list: %+v", got)
	}
	for i := range MaxPolicies {
		r.Put(fmt.Sprint("p", i), api.RetentionPolicy{Versions: 1})
	}
	if _, err := r.Put("overflow", api.RetentionPolicy{Versions: 1}); !errors.Is(err, ErrTooManyPolicies) {
		t.Fatalf("overflow: %v", err)
	}
}

func TestSequencer(t *testing.T) {
	r := NewRetention(Limits{Versions: 5, Age: time.Hour})
	s := NewSequencer(r, 0)
	steps := []struct {
		id   string
		want Sequenced
	}{
		{"a", Sequenced{Accepted, 1, 0}},
		{"", Sequenced{Accepted, 2, 0}},
		{"a", Sequenced{Duplicate, 1, 0}}, // no new version
		{"b", Sequenced{Accepted, 3, 0}},
		{"", Sequenced{Accepted, 4, 0}},
		{"b", Sequenced{Duplicate, 3, 0}},
	}
	for i, st := range steps {
		if got := s.Sequence(st.id, 0, t0); got != st.want {
			t.Fatalf("step %d (%q): got %+v want %+v", i, st.id, got, st.want)
		}
	}
	if s.RememberedIDs() != 2 || s.LastVersion() != 4 {
		t.Fatalf("remembered %d ids, last version %d", s.RememberedIDs(), s.LastVersion())
	}
	if got := s.LookupStatus("a", 0, t0); got != (Lookup{Found: true, Version: 1, OldestVersion: 1}) {
		t.Fatalf("status of a: %+v", got)
	}
}

// The retry sequence: retention of 1 hour and 5 versions; the retry
// comes after 6 more commits. An id is forgotten only once past both
// limits, so every case but the last is answered as a duplicate.
func TestRetentionNeedsBothLimits(t *testing.T) {
	cases := []struct {
		name              string
		versions          int // commits after the first, before the retry
		after             time.Duration
		wantDuplicate     bool
		wantStatus        Lookup
		wantRetryVersion  int64
		wantOldestVersion int64
	}{
		{"neither passed", 2, time.Minute, true, Lookup{Found: true, Version: 1, OldestVersion: 1}, 1, 1},
		{"versions passed, age not", 6, time.Minute, true, Lookup{Found: true, Version: 1, OldestVersion: 1}, 1, 1},
		{"age passed, versions not", 2, 2 * time.Hour, true, Lookup{Found: true, Version: 1, OldestVersion: 1}, 1, 1},
		{"both passed", 6, 2 * time.Hour, false, Lookup{Truncated: true, Reason: TruncatedByRetention, OldestVersion: 2}, 8, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewSequencer(NewRetention(Limits{Versions: 5, Age: time.Hour}), 0)
			const id = "retry-after-6-commits-0001"
			if got := s.Sequence(id, 0, t0); got.Verdict != Accepted || got.Version != 1 {
				t.Fatalf("first: %+v", got)
			}
			for range c.versions {
				s.Sequence("", 0, t0)
			}
			later := t0.Add(c.after)
			if got := s.LookupStatus(id, 0, later); got != c.wantStatus {
				t.Fatalf("status: %+v, want %+v", got, c.wantStatus)
			}
			got := s.Sequence(id, 0, later)
			if (got.Verdict == Duplicate) != c.wantDuplicate || got.Version != int64(c.wantRetryVersion) {
				t.Fatalf("retry: %+v, want duplicate %v at %d", got, c.wantDuplicate, c.wantRetryVersion)
			}
			if s.Forgotten()+1 != c.wantOldestVersion {
				t.Fatalf("forgotten %d", s.Forgotten())
			}
		})
	}
}

// A not_found answer bans the id: a commit with it that arrives later is
// refused, for as long as the ban is within retention; log_truncated does
// not ban (the server did not claim anything).
func TestNotFoundBansTheID(t *testing.T) {
	s := NewSequencer(NewRetention(Limits{Versions: 3, Age: time.Hour}), 0)
	const late = "late-commit-000000000001"
	s.Sequence("", 0, t0)
	if lk := s.LookupStatus(late, 0, t0); lk.Found || lk.Truncated {
		t.Fatalf("status: %+v", lk)
	}
	if s.BannedIDs() != 1 || s.RememberedIDs() != 0 {
		t.Fatalf("bans %d, ids %d", s.BannedIDs(), s.RememberedIDs())
	}
	if got := s.Sequence(late, 0, t0); got != (Sequenced{Verdict: Banned}) {
		t.Fatalf("late commit: %+v", got)
	}
	if s.LastVersion() != 1 {
		t.Fatalf("a banned commit took a version: %d", s.LastVersion())
	}
	// Still not_found (and still banned) on a second look.
	if lk := s.LookupStatus(late, 0, t0); lk.Found || lk.Truncated {
		t.Fatalf("second status: %+v", lk)
	}
	// Past one limit only: still banned.
	for range 5 {
		s.Sequence("", 0, t0)
	}
	if got := s.Sequence(late, 0, t0.Add(time.Minute)); got.Verdict != Banned {
		t.Fatalf("versions passed, age not: %+v", got)
	}
	if got := s.Sequence(late, 0, t0.Add(2*time.Hour)); got.Verdict != Accepted {
		t.Fatalf("past both limits the ban is gone: %+v", got)
	}

	// log_truncated: no ban.
	s2 := NewSequencer(NewRetention(Limits{Versions: 1, Age: time.Hour}), 0)
	s2.Sequence("forgotten-id-0000000001", 0, t0)
	s2.Sequence("", 0, t0)
	s2.Sequence("", 0, t0.Add(2*time.Hour)) // evicts forgotten-id
	if lk := s2.LookupStatus("other-id-0000000000001", 0, t0.Add(2*time.Hour)); !lk.Truncated {
		t.Fatalf("want log_truncated: %+v", lk)
	}
	if s2.BannedIDs() != 0 {
		t.Fatal("log_truncated banned the id")
	}
	if got := s2.Sequence("other-id-0000000000001", 0, t0.Add(2*time.Hour)); got.Verdict != Accepted {
		t.Fatalf("after log_truncated: %+v", got)
	}
	// A min_version above what was forgotten makes not_found certain.
	if lk := s2.LookupStatus("third-id-0000000000001", 2, t0.Add(2*time.Hour)); lk.Truncated || lk.Found {
		t.Fatalf("from min_version 2: %+v", lk)
	}
	if got := s2.Sequence("third-id-0000000000001", 1, t0.Add(2*time.Hour)); got.Verdict != Banned {
		t.Fatalf("banned from a min_version: %+v", got)
	}
}

// Polling the status of an unknown id while commits flow refreshes its ban
// in place: memory stays one entry, and the ban lasts the retention from
// the latest not_found, not the first.
func TestBanRefreshedInPlace(t *testing.T) {
	s := NewSequencer(NewRetention(Limits{Versions: 3, Age: time.Hour}), 0)
	const id = "polled-id-00000000000001"
	at := t0
	for range 100 {
		s.Sequence("", 0, at)
		if lk := s.LookupStatus(id, 0, at); lk.Found || lk.Truncated {
			t.Fatalf("status: %+v", lk)
		}
		at = at.Add(time.Minute)
	}
	if s.BannedIDs() != 1 || s.ids.idx.len() != 1 {
		t.Fatalf("%d bans in %d records after 100 polls", s.BannedIDs(), s.ids.idx.len())
	}
	// The first not_found is past both limits (100 versions, 100 minutes
	// ago); the latest is not: still banned.
	later := at.Add(30 * time.Minute)
	for range 10 {
		s.Sequence("", 0, later)
	}
	if got := s.Sequence(id, 0, later); got.Verdict != Banned {
		t.Fatalf("within retention of the latest not_found: %+v", got)
	}
	if s.ids.idx.len() != 1 {
		t.Fatalf("%d records", s.ids.idx.len())
	}
	if got := s.Sequence(id, 0, later.Add(2*time.Hour)); got.Verdict != Accepted {
		t.Fatalf("past the latest not_found: %+v", got)
	}
}

// The cap (commit.max_request_ids) drops the oldest entries while they are
// still within retention. That is counted and named, and a commit that
// could be a retry of a dropped id is refused, never applied twice; one
// whose read_version proves it is new is accepted.
func TestCapDropsAreVisibleAndNeverReapply(t *testing.T) {
	s := NewSequencer(NewRetention(Limits{Versions: 1000, Age: time.Hour}), 3)
	ids := []string{"cap-id-00000000000000001", "cap-id-00000000000000002", "cap-id-00000000000000003", "cap-id-00000000000000004"}
	for i, id := range ids {
		if got := s.Sequence(id, int64(i), t0); got.Verdict != Accepted || got.Version != int64(i+1) {
			t.Fatalf("%s: %+v", id, got)
		}
	}
	s.PublishStats()
	if st := s.Stats(); s.RememberedIDs() != 3 || st.DroppedByCap.Load() != 1 || st.RememberedIDs.Load() != 3 || st.MaxRequestIDs.Load() != 3 {
		t.Fatalf("remembered %d, stats %+v", s.RememberedIDs(), st)
	}
	// The retry of the dropped id (version 1, read_version 0) is refused.
	if got := s.Sequence(ids[0], 0, t0); got != (Sequenced{Verdict: Unverifiable, MinReadVersion: 1}) {
		t.Fatalf("retry of a dropped id: %+v", got)
	}
	// So is any unknown id that does not prove it is new...
	if got := s.Sequence("new-id-00000000000000005", 0, t0); got.Verdict != Unverifiable {
		t.Fatalf("unknown id, read_version 0: %+v", got)
	}
	// ...and one with a read_version at the proof is accepted.
	if got := s.Sequence("new-id-00000000000000005", 1, t0); got.Verdict != Accepted || got.Version != 5 {
		t.Fatalf("unknown id, read_version 1: %+v", got)
	}
	// Status says why it cannot answer.
	if lk := s.LookupStatus(ids[0], 0, t0); !lk.Truncated || lk.Reason != TruncatedByCap || lk.OldestVersion != 3 {
		t.Fatalf("status of a dropped id: %+v", lk)
	}
	s.PublishStats()
	if st := s.Stats(); st.RefusedUnverifiable.Load() != 2 || st.DroppedByCap.Load() != 2 {
		t.Fatalf("stats %+v", st)
	}
	// Once the dropped entries are past retention as well, the drop is what
	// retention would have done: the retry is applied (the client's choice).
	later := t0.Add(2 * time.Hour)
	for range 1000 {
		s.Sequence("", 0, later)
	}
	if got := s.Sequence(ids[0], 0, later); got.Verdict != Accepted {
		t.Fatalf("retry past retention: %+v", got)
	}
	if lk := s.LookupStatus(ids[1], 0, later); !lk.Truncated || lk.Reason != TruncatedByRetention {
		t.Fatalf("status past retention: %+v", lk)
	}
}

// A ban dropped by the cap still refuses the late commit it guarded against
// (whose read_version is at most the ban's version).
func TestCapDroppedBanStillRefusesLateCommit(t *testing.T) {
	s := NewSequencer(NewRetention(Limits{Versions: 1000, Age: time.Hour}), 2)
	s.Sequence("", 0, t0)
	s.Sequence("", 0, t0) // version 2
	const late = "late-commit-000000000001"
	if lk := s.LookupStatus(late, 0, t0); lk.Found || lk.Truncated {
		t.Fatalf("status: %+v", lk)
	}
	s.Sequence("filler-id-00000000000001", 2, t0)
	s.Sequence("filler-id-00000000000002", 2, t0) // the ban is dropped
	if s.BannedIDs() != 0 {
		t.Fatalf("bans %d", s.BannedIDs())
	}
	if got := s.Sequence(late, 2, t0); got != (Sequenced{Verdict: Unverifiable, MinReadVersion: 3}) {
		t.Fatalf("late commit after its ban was dropped: %+v", got)
	}
}

// By default there is no cap: every id within retention is kept however
// many there are, nothing is dropped or refused, the max gauge says 0, and
// retention alone forgets them.
func TestNoCapByDefault(t *testing.T) {
	st := New(Options{RetentionVersions: 10, RetentionAge: time.Hour})
	s := st.Sequencer
	const n = 3*chunkLen + 5 // across several chunks of the index
	for i := range n {
		if got := s.Sequence(fmt.Sprintf("no-cap-id-%014d", i), 0, t0); got.Verdict != Accepted {
			t.Fatalf("commit %d: %+v", i, got)
		}
	}
	s.PublishStats()
	if st := s.Stats(); s.RememberedIDs() != n || st.MaxRequestIDs.Load() != 0 || st.DroppedByCap.Load() != 0 {
		t.Fatalf("remembered %d, max %d, dropped %d", s.RememberedIDs(), st.MaxRequestIDs.Load(), st.DroppedByCap.Load())
	}
	if got := s.Sequence(fmt.Sprintf("no-cap-id-%014d", 0), 0, t0); got != (Sequenced{Verdict: Duplicate, Version: 1}) {
		t.Fatalf("retry of the first: %+v", got)
	}
	later := t0.Add(2 * time.Hour)
	if lk := s.LookupStatus(fmt.Sprintf("no-cap-id-%014d", 0), 0, later); !lk.Truncated || lk.Reason != TruncatedByRetention || lk.OldestVersion != n-9 {
		t.Fatalf("status past retention: %+v", lk)
	}
	if s.RememberedIDs() != 10 {
		t.Fatalf("remembered %d past retention, want the last 10 versions'", s.RememberedIDs())
	}
}

func TestResolverConflicts(t *testing.T) {
	// History: v1 writes k1; v2 deletes k2; v3 range-deletes [m, p);
	// v4 writes x (so v4's read of nothing matters); v5 writes nothing.
	setup := func() *Resolver {
		r := NewResolver(1 << 20)
		history := [][]api.Operation{
			{write("k1", "v")},
			{del("k2")},
			{rangeDel("m", "p")},
			{write("x", "1"), write("y", "2")},
			nil,
		}
		for i, ops := range history {
			res := r.Resolve(int64(i+1), &api.CommitRequest{Operations: ops})
			if !res.Committed {
				t.Fatalf("setup v%d not committed", i+1)
			}
		}
		return r
	}
	cases := []struct {
		name   string
		rv     int64
		pcs    []api.Precondition
		commit bool
		reason api.NotCommittedReason
		index  int
	}{
		{"no preconditions", 0, nil, true, 0, 0},
		{"point read after write", 1, []api.Precondition{pointRead("k1")}, true, 0, 0},
		{"point read before write", 0, []api.Precondition{pointRead("k1")}, false, api.ReasonConflict, 0},
		{"point read of deleted", 1, []api.Precondition{pointRead("k2")}, false, api.ReasonConflict, 0},
		{"point read untouched", 0, []api.Precondition{pointRead("zzz")}, true, 0, 0},
		{"point read in range delete", 2, []api.Precondition{pointRead("n")}, false, api.ReasonConflict, 0},
		{"point read at range end", 2, []api.Precondition{pointRead("p")}, true, 0, 0},
		{"point read at range begin", 2, []api.Precondition{pointRead("m")}, false, api.ReasonConflict, 0},
		{"point read after range delete", 3, []api.Precondition{pointRead("n")}, true, 0, 0},
		{"range read over write", 0, []api.Precondition{rangeRead("k", "l")}, false, api.ReasonConflict, 0},
		{"range read end exclusive", 0, []api.Precondition{rangeRead("a", "k1")}, true, 0, 0},
		{"range read over range delete", 2, []api.Precondition{rangeRead("o", "q")}, false, api.ReasonConflict, 0},
		{"range read touching range end", 2, []api.Precondition{rangeRead("p", "q")}, true, 0, 0},
		{"empty range read", 0, []api.Precondition{rangeRead("k1", "k1")}, true, 0, 0},
		{"second precondition conflicts", 3, []api.Precondition{pointRead("k1"), rangeRead("w", "z")}, false, api.ReasonConflict, 1},
		{"read at latest", 5, []api.Precondition{rangeRead("", "\xff\xff")}, true, 0, 0},
		{"read version in future", 6, []api.Precondition{pointRead("a")}, false, api.ReasonReadVersionInFuture, 0},
		// Without preconditions too: the sequencer's retry proof relies on
		// every accepted commit's read_version being below its version.
		{"blind write in future", 6, nil, false, api.ReasonReadVersionInFuture, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := setup()
			req := &api.CommitRequest{ReadVersion: c.rv, HasReadVersion: true, Preconditions: c.pcs}
			got := r.Resolve(6, req)
			want := api.CommitResult{Version: 6, Committed: c.commit, Reason: c.reason, ConflictIndex: c.index}
			if c.reason == api.ReasonConflict {
				want.Conflict = &req.Preconditions[c.index] // the conflicting precondition itself
			}
			if got != want {
				t.Fatalf("got %+v want %+v", got, want)
			}
		})
	}
}

func TestResolverRefusedWritesInvisibleAndHistoryBounded(t *testing.T) {
	r := NewResolver(1 << 20)
	r.Resolve(1, &api.CommitRequest{Operations: []api.Operation{write("a", "1")}})
	// v2 conflicts, so its write of "b" must not count.
	res := r.Resolve(2, &api.CommitRequest{HasReadVersion: true, ReadVersion: 0,
		Preconditions: []api.Precondition{pointRead("a")}, Operations: []api.Operation{write("b", "1")}})
	if res.Committed {
		t.Fatal("v2 committed")
	}
	res = r.Resolve(3, &api.CommitRequest{HasReadVersion: true, ReadVersion: 1, Preconditions: []api.Precondition{pointRead("b")}})
	if !res.Committed {
		t.Fatalf("refused write counted: %+v", res)
	}

	small := NewResolver(3 * (perEntryOverhead + 2))
	for v := int64(1); v <= 10; v++ {
		small.Resolve(v, &api.CommitRequest{Operations: []api.Operation{write(fmt.Sprint("k", v%10), "x")}})
	}
	if small.HistoryBytes() > 3*(perEntryOverhead+2) || small.OldestReadVersion() != 7 {
		t.Fatalf("history %d bytes, oldest read version %d", small.HistoryBytes(), small.OldestReadVersion())
	}
	res = small.Resolve(11, &api.CommitRequest{HasReadVersion: true, ReadVersion: 6, Preconditions: []api.Precondition{pointRead("zz")}})
	if res.Committed || res.Reason != api.ReasonReadVersionTooOld {
		t.Fatalf("too old: %+v", res)
	}
	res = small.Resolve(12, &api.CommitRequest{HasReadVersion: true, ReadVersion: 7, Preconditions: []api.Precondition{pointRead("k7")}})
	if !res.Committed {
		t.Fatalf("k7 (written at v7) read at 7: %+v", res)
	}
	res = small.Resolve(13, &api.CommitRequest{HasReadVersion: true, ReadVersion: 7, Preconditions: []api.Precondition{pointRead("k8")}})
	if res.Committed {
		t.Fatalf("k8 (written at v8) read at 7: %+v", res)
	}
	if len(small.points) != 3 {
		t.Fatalf("points map holds %d keys, want 3", len(small.points))
	}
}

func TestPersisterApplyAndStatus(t *testing.T) {
	r := NewRetention(Limits{Versions: 100, Age: time.Hour})
	log := NewLog(1<<20, r)
	p := NewPersister(log)
	commit := func(v int64, id string, ops ...api.Operation) {
		p.Apply(&api.CommitRequest{RequestID: id, Operations: ops}, api.CommitResult{Version: v, Committed: true}, t0)
	}
	commit(1, "id-1", write("a", "1"), write("b", "2"), write("c", "3"), write("d", "4"))
	commit(2, "", del("a"), write("b", "22"))
	conflictReq := &api.CommitRequest{RequestID: "id-3", Preconditions: []api.Precondition{pointRead("q"), rangeRead("m", "p")},
		Operations: []api.Operation{write("z", "z")}}
	p.Apply(conflictReq, api.CommitResult{Version: 3, Reason: api.ReasonConflict, ConflictIndex: 1, Conflict: &conflictReq.Preconditions[1]}, t0)
	copy(conflictReq.Preconditions[1].Begin, "X") // the request's arena is reused: the store must have copied
	commit(4, "id-4", rangeDel("c", "d"))
	p.PublishBatch()

	want := map[string]string{"b": "22", "d": "4"}
	if p.Len() != len(want) {
		t.Fatalf("len %d", p.Len())
	}
	for k, v := range want {
		if got, _, ok := p.Get([]byte(k)); !ok || string(got) != v {
			t.Fatalf("%s = %q %v", k, got, ok)
		}
	}
	if _, ver, _ := p.Get([]byte("b")); ver != 2 || p.Version() != 4 || log.LastVersion() != 4 {
		t.Fatalf("versions: b@%d persisted %d log %d", ver, p.Version(), log.LastVersion())
	}
	conflict := rangeRead("m", "p")
	statuses := []struct {
		id   string
		lk   Lookup
		want api.StatusResult
	}{
		{"id-1", Lookup{Found: true, Version: 1}, api.StatusResult{Kind: api.StatusCommitted, RequestID: "id-1", Version: 1}},
		{"id-4", Lookup{Found: true, Version: 4}, api.StatusResult{Kind: api.StatusCommitted, RequestID: "id-4", Version: 4}},
		{"nope", Lookup{}, api.StatusResult{Kind: api.StatusNotFound, RequestID: "nope"}},
		{"old", Lookup{Truncated: true, Reason: TruncatedByRetention, OldestVersion: 9}, api.StatusResult{Kind: api.StatusLogTruncated, RequestID: "old", OldestVersion: 9}},
		{"capped", Lookup{Truncated: true, Reason: TruncatedByCap, OldestVersion: 9}, api.StatusResult{Kind: api.StatusLogTruncated, RequestID: "capped", OldestVersion: 9, TruncatedByCap: true}},
	}
	for _, s := range statuses {
		if got := p.Status(s.id, s.lk); got != s.want {
			t.Errorf("%s: got %+v want %+v", s.id, got, s.want)
		}
	}
	// The refused commit's status and duplicate keep its conflict, whole.
	st := p.Status("id-3", Lookup{Found: true, Version: 3})
	if st.Kind != api.StatusNotCommitted || st.Version != 3 || st.Reason != api.ReasonConflict || st.ConflictIndex != 1 ||
		st.Conflict == nil || !reflect.DeepEqual(*st.Conflict, conflict) {
		t.Fatalf("status of id-3: %+v (conflict %+v)", st, st.Conflict)
	}
	dup := p.DuplicateResult(3)
	if dup.Committed || !dup.Duplicate || dup.Version != 3 || dup.Reason != api.ReasonConflict || dup.ConflictIndex != 1 ||
		dup.Conflict == nil || !reflect.DeepEqual(*dup.Conflict, conflict) {
		t.Fatalf("duplicate of 3: %+v", dup)
	}
	if res := p.DuplicateResult(4); !res.Duplicate || !res.Committed || res.Version != 4 {
		t.Fatalf("duplicate of 4: %+v", res)
	}
	// Forget drops the outcomes the sequencer forgot.
	if p.RefusedOutcomes() != 1 {
		t.Fatalf("refused outcomes %d", p.RefusedOutcomes())
	}
	p.Forget(2)
	if p.RefusedOutcomes() != 1 {
		t.Fatal("Forget(2) dropped version 3")
	}
	p.Forget(3)
	if p.RefusedOutcomes() != 0 {
		t.Fatal("Forget(3) kept version 3")
	}
	// The log holds the committed transactions with operations: 1, 2, 4.
	sub, err := log.Subscribe(1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := sub.Next(nil, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	wantLog := string(api.AppendTransactionLine(nil, 1, []api.Operation{write("a", "1"), write("b", "2"), write("c", "3"), write("d", "4")})) +
		string(api.AppendTransactionLine(nil, 2, []api.Operation{del("a"), write("b", "22")})) +
		string(api.AppendTransactionLine(nil, 4, []api.Operation{rangeDel("c", "d")}))
	if string(got) != wantLog {
		t.Fatalf("log:\n%s\nwant:\n%s", got, wantLog)
	}
}

func TestPersisterDoesNotAliasRequest(t *testing.T) {
	r := NewRetention(Limits{Versions: 100, Age: time.Hour})
	p := NewPersister(NewLog(1<<20, r))
	key, val := []byte("key"), []byte("val")
	p.Apply(&api.CommitRequest{Operations: []api.Operation{{Type: api.Write, Key: key, Value: val}}}, api.CommitResult{Version: 1, Committed: true}, t0)
	copy(key, "XXX")
	copy(val, "YYY")
	if v, _, ok := p.Get([]byte("key")); !ok || string(v) != "val" {
		t.Fatalf("store aliases the request: %q %v", v, ok)
	}
}

func TestOptionsDefaults(t *testing.T) {
	s := New(Options{SubscriberMaxBehind: 1 << 30})
	want := Options{RetentionVersions: 100_000_000, RetentionAge: 24 * time.Hour, MaxRequestIDs: DefaultMaxRequestIDs,
		ResolverMaxBytes: DefaultResolverMaxBytes, LogMaxBytes: 2 << 30, SubscriberMaxBehind: 1 << 30}
	if !reflect.DeepEqual(s.Options, want) {
		t.Fatalf("options %+v", s.Options)
	}
}
