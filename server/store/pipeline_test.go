package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"weaseldb/server/api"
)

// item is what a pipeline slot would carry between the stages.
type item struct {
	req      *api.CommitRequest
	statusID string // a status request when set
	version  int64
	seq      Sequenced
	forget   int64 // Sequencer.Forgotten, carried to persist
	res      api.CommitResult
	lookup   Lookup
	status   api.StatusResult
	done     chan struct{}
}

// runStages runs the three stateful stages as goroutines joined by channels
// of batches, each calling only its own piece of st, as the server's
// pipeline stages do. It returns the input and a stop function.
func runStages(t *testing.T, st *Store) (chan<- *item, func()) {
	in := make(chan *item, 64)
	toResolve := make(chan []*item, 4)
	toPersist := make(chan []*item, 4)
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { // sequence: owns st.Sequencer
		defer wg.Done()
		defer close(toResolve)
		for first := range in {
			batch := []*item{first}
			for len(batch) < 16 && len(in) > 0 {
				batch = append(batch, <-in)
			}
			now := time.Now()
			for _, it := range batch {
				if it.statusID != "" {
					it.lookup = st.Sequencer.LookupStatus(it.statusID, 0, now)
				} else {
					it.seq = st.Sequencer.Sequence(it.req.RequestID, it.req.ReadVersion, now)
					it.version = it.seq.Version
				}
				it.forget = st.Sequencer.Forgotten()
			}
			toResolve <- batch
		}
	}()
	go func() { // resolve: owns st.Resolver
		defer wg.Done()
		defer close(toPersist)
		for batch := range toResolve {
			for _, it := range batch {
				if it.statusID == "" && it.seq.Verdict == Accepted {
					it.res = st.Resolver.Resolve(it.version, it.req)
				}
			}
			toPersist <- batch
		}
	}()
	go func() { // persist: owns st.Persister; release is done()
		defer wg.Done()
		for batch := range toPersist {
			now := time.Now()
			for _, it := range batch {
				st.Persister.Forget(it.forget)
				switch {
				case it.statusID != "":
					it.status = st.Persister.Status(it.statusID, it.lookup)
				case it.seq.Verdict == Duplicate:
					it.res = st.Persister.DuplicateResult(it.version)
				case it.seq.Verdict == Accepted:
					st.Persister.Apply(it.req, it.res, now)
				}
			}
			st.Persister.PublishBatch()
			for _, it := range batch {
				close(it.done)
			}
		}
	}()
	return in, func() { close(in); wg.Wait() }
}

func submit(in chan<- *item, it *item) *item {
	it.done = make(chan struct{})
	in <- it
	<-it.done
	return it
}

// TestConcurrentCommitters: optimistic read-modify-write of one key from
// many goroutines through the stages, with every request sent twice (a
// retry) and a subscriber following along. Checks serializability of the
// committed history, dedupe, status answers and the subscription stream.
func TestConcurrentCommitters(t *testing.T) {
	const clients, perClient = 6, 40
	st := New(Options{})
	sub, err := st.Subscribe(1)
	if err != nil {
		t.Fatal(err)
	}
	in, stop := runStages(t, st)

	type attempt struct {
		rv  int64
		res api.CommitResult
		id  string
	}
	var mu sync.Mutex
	var attempts []attempt
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var rv int64
			for i := range perClient {
				id := fmt.Sprintf("client-%02d-request-%04d", c, i)
				mk := func() *api.CommitRequest {
					return &api.CommitRequest{RequestID: id, ReadVersion: rv, HasReadVersion: true,
						Preconditions: []api.Precondition{pointRead("counter")},
						Operations:    []api.Operation{write("counter", id)}}
				}
				first := submit(in, &item{req: mk()})
				retry := submit(in, &item{req: mk()})
				want := first.res
				want.Duplicate = true
				// The conflict is compared by value: the retry's points at
				// the store's copy, the first's into its request.
				if first.res.Conflict != nil && retry.res.Conflict != nil && reflect.DeepEqual(*first.res.Conflict, *retry.res.Conflict) {
					want.Conflict = retry.res.Conflict
				}
				if first.seq.Verdict != Accepted || retry.seq.Verdict != Duplicate || retry.res != want {
					t.Errorf("%s: first %+v (%+v), retry %+v", id, first.res, first.seq, retry.res)
				}
				mu.Lock()
				attempts = append(attempts, attempt{rv: rv, res: first.res, id: id})
				mu.Unlock()
				rv = first.res.Version // read "now" for the next attempt
			}
		}()
	}
	wg.Wait()

	// Serializability: ordered by version, each committed write read a
	// version at or after the previous committed write of the key; every
	// refused one read before some committed write it could not see.
	slices.SortFunc(attempts, func(a, b attempt) int { return int(a.res.Version - b.res.Version) })
	var lastWrite int64
	var committed []int64
	for i, a := range attempts {
		if a.res.Version != int64(i+1) {
			t.Fatalf("versions not dense: %d at %d", a.res.Version, i)
		}
		if a.res.Committed {
			if a.rv < lastWrite {
				t.Fatalf("v%d committed reading %d, but v%d wrote the key", a.res.Version, a.rv, lastWrite)
			}
			lastWrite = a.res.Version
			committed = append(committed, a.res.Version)
		} else if a.res.Reason != api.ReasonConflict || a.rv >= lastWrite {
			t.Fatalf("v%d refused (%v) reading %d, last write v%d", a.res.Version, a.res.Reason, a.rv, lastWrite)
		}
	}
	if len(committed) == 0 {
		t.Fatal("nothing committed")
	}

	// Status of every request id matches its outcome.
	for _, a := range attempts {
		s := submit(in, &item{statusID: a.id}).status
		want := api.StatusCommitted
		if !a.res.Committed {
			want = api.StatusNotCommitted
		}
		if s.Kind != want || s.Version != a.res.Version {
			t.Fatalf("status of %s: %+v, outcome %+v", a.id, s, a.res)
		}
	}
	if s := submit(in, &item{statusID: "never-sent-request-id"}).status; s.Kind != api.StatusNotFound {
		t.Fatalf("unknown id: %+v", s)
	}
	stop()

	// The subscription saw exactly the committed versions, in order.
	buf, err := sub.Next(nil, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	var seen []int64
	for _, ln := range bytes.Split(bytes.TrimSuffix(buf, []byte("\n")), []byte("\n")) {
		var tx struct {
			Version int64 `json:"version"`
		}
		if err := json.Unmarshal(ln, &tx); err != nil {
			t.Fatalf("bad line %q: %v", ln, err)
		}
		seen = append(seen, tx.Version)
	}
	if !slices.Equal(seen, committed) {
		t.Fatalf("subscription saw %v, committed %v", seen, committed)
	}
	if v, _, ok := st.Persister.Get([]byte("counter")); !ok || len(v) == 0 || st.Persister.Version() != int64(len(attempts)) {
		t.Fatalf("final store: %q %v version %d", v, ok, st.Persister.Version())
	}
}

// TestRetentionPoliciesWhileCommitting changes policies from another
// goroutine while the stages read the limits (-race).
func TestRetentionPoliciesWhileCommitting(t *testing.T) {
	st := New(Options{RetentionVersions: 1000})
	in, stop := runStages(t, st)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			st.Retention.Put(fmt.Sprint("p", i%7), api.RetentionPolicy{Versions: int64(1 + i%50)})
			_ = st.Retention.List()
			st.Retention.Delete(fmt.Sprint("p", (i+3)%7))
		}
	}()
	for i := range 300 {
		submit(in, &item{req: &api.CommitRequest{RequestID: fmt.Sprintf("retention-test-%06d", i), Operations: []api.Operation{write("k", "v")}}})
	}
	<-done
	stop()
}
