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
		{"put", "a", api.RetentionPolicy{Versions: 10}, Limits{Versions: 10, Age: 10 * time.Hour}},
		{"put", "b", api.RetentionPolicy{Versions: 50, Seconds: 60}, Limits{Versions: 50, Age: 10 * time.Hour}},
		{"put", "a", api.RetentionPolicy{Seconds: 30}, Limits{Versions: 1000, Age: time.Minute}},
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
	s := NewSequencer(r, 3)
	type step struct {
		id      string
		at      time.Duration
		wantV   int64
		wantDup bool
	}
	steps := []step{
		{"a", 0, 1, false},
		{"", 0, 2, false},
		{"a", 0, 1, true}, // duplicate: no new version
		{"b", 0, 3, false},
		{"c", 0, 4, false},
		{"d", 0, 5, false}, // 4 ids > maxIDs 3: "a" forgotten
		{"a", 0, 6, false}, // "b" forgotten
		{"c", 0, 4, true},
		{"b", 0, 7, false}, // "c" forgotten
	}
	for i, st := range steps {
		v, dup := s.Sequence(st.id, t0.Add(st.at))
		if v != st.wantV || dup != st.wantDup {
			t.Fatalf("step %d (%q): got %d,%v want %d,%v", i, st.id, v, dup, st.wantV, st.wantDup)
		}
	}
	if s.RememberedIDs() != 3 {
		t.Fatalf("remembered %d ids", s.RememberedIDs())
	}
	// Ids of v<=4 may be gone; "a" was reused at v6.
	cases := []struct {
		id   string
		min  int64
		want Lookup
	}{
		{"a", 0, Lookup{Found: true, Version: 6, OldestVersion: 5}},
		{"d", 5, Lookup{Found: true, Version: 5, OldestVersion: 5}},
		{"zz", 0, Lookup{Truncated: true, OldestVersion: 5}},
		{"zz", 4, Lookup{Truncated: true, OldestVersion: 5}},
		{"zz", 5, Lookup{OldestVersion: 5}},
	}
	for _, c := range cases {
		if got := s.LookupStatus(c.id, c.min, t0); got != c.want {
			t.Errorf("LookupStatus(%q, %d) = %+v, want %+v", c.id, c.min, got, c.want)
		}
	}
	// Versions rule: 5 versions kept, so after v11 ids of v<=6 are gone.
	for range 4 {
		s.Sequence("", t0)
	}
	if got := s.LookupStatus("a", 0, t0); !got.Truncated || got.OldestVersion != 7 {
		t.Fatalf("after versions rule: %+v", got)
	}
	// Age rule.
	if got := s.LookupStatus("b", 0, t0.Add(2*time.Hour)); got.Found || !got.Truncated {
		t.Fatalf("after age rule: %+v", got)
	}
	if s.RememberedIDs() != 0 {
		t.Fatalf("remembered %d ids after expiry", s.RememberedIDs())
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
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := setup()
			req := &api.CommitRequest{ReadVersion: c.rv, HasReadVersion: true, Preconditions: c.pcs}
			got := r.Resolve(6, req)
			want := api.CommitResult{Version: 6, Committed: c.commit, Reason: c.reason, ConflictIndex: c.index}
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
	p := NewPersister(r, log, 2)
	commit := func(v int64, id string, ops ...api.Operation) {
		p.Apply(&api.CommitRequest{RequestID: id, Operations: ops}, api.CommitResult{Version: v, Committed: true}, t0)
	}
	commit(1, "id-1", write("a", "1"), write("b", "2"), write("c", "3"), write("d", "4"))
	commit(2, "", del("a"), write("b", "22"))
	p.Apply(&api.CommitRequest{RequestID: "id-3", Operations: []api.Operation{write("z", "z")}},
		api.CommitResult{Version: 3, Reason: api.ReasonConflict, ConflictIndex: 1}, t0)
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
	statuses := []struct {
		id   string
		lk   Lookup
		want api.StatusResult
	}{
		// maxIDs 2: id-1's outcome was dropped when id-4 came.
		{"id-1", Lookup{Found: true, Version: 1}, api.StatusResult{Kind: api.StatusLogTruncated, RequestID: "id-1", OldestVersion: 2}},
		{"id-3", Lookup{Found: true, Version: 3}, api.StatusResult{Kind: api.StatusNotCommitted, RequestID: "id-3", Version: 3, Reason: api.ReasonConflict, ConflictIndex: 1}},
		{"id-4", Lookup{Found: true, Version: 4}, api.StatusResult{Kind: api.StatusCommitted, RequestID: "id-4", Version: 4}},
		{"nope", Lookup{}, api.StatusResult{Kind: api.StatusNotFound, RequestID: "nope"}},
		{"old", Lookup{Truncated: true, OldestVersion: 9}, api.StatusResult{Kind: api.StatusLogTruncated, RequestID: "old", OldestVersion: 9}},
	}
	for _, s := range statuses {
		if got := p.Status(s.id, s.lk); got != s.want {
			t.Errorf("%s: got %+v want %+v", s.id, got, s.want)
		}
	}
	if res, ok := p.DuplicateResult(4); !ok || !res.Duplicate || !res.Committed || res.Version != 4 {
		t.Fatalf("duplicate of 4: %+v %v", res, ok)
	}
	if res, ok := p.DuplicateResult(1); ok || res.Committed || res.Reason != api.ReasonOutcomeUnknown || !res.Duplicate {
		t.Fatalf("duplicate of a dropped outcome: %+v %v", res, ok)
	}
	// The log holds the committed transactions with operations: 1, 2, 4.
	sub, err := log.Subscribe(1, 1<<20)
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
	p := NewPersister(r, NewLog(1<<20, r), 10)
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
		ResolverMaxBytes: DefaultResolverMaxBytes, LogMaxBytes: 1 << 30, SubscriberMaxBehind: 1 << 30}
	if !reflect.DeepEqual(s.Options, want) {
		t.Fatalf("options %+v", s.Options)
	}
}
