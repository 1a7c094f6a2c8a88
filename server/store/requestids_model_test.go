package store

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// modelIDs is the request-id memory as it was before ids were kept by
// hash: a Go map from the id's text and a FIFO of records holding the
// text. It is slow and large but plain, and it is the oracle
// TestRequestIDsMatchModel and FuzzRequestIDs hold requestIDs to.
type modelIDs struct {
	entries        map[string]idEntry
	order          deque[modelRecord]
	maxIDs         int
	commits, bans  int
	forgotten      int64
	forgottenByCap bool
	early          modelRecord
	proof          int64
	droppedByCap   int64
}

type modelRecord struct {
	id          string
	version, at int64
}

func (m *modelIDs) addCommit(id string, version int64, now time.Time) {
	at := storeClock(now)
	m.entries[id] = idEntry{v: version, at: at}
	m.commits++
	m.order.push(modelRecord{id, version, at})
}

func (m *modelIDs) ban(id string, version int64, now time.Time) {
	at := storeClock(now)
	if e, ok := m.entries[id]; ok && e.banned() {
		m.entries[id] = idEntry{v: ^version, at: at}
		return
	}
	m.entries[id] = idEntry{v: ^version, at: at}
	m.bans++
	m.order.push(modelRecord{id, version, at})
}

func (m *modelIDs) evict(lim Limits, last int64, now time.Time) {
	for m.order.len() > 0 {
		r := m.order.front()
		switch {
		case past(lim, r.version, r.at, last, now):
			r := m.order.popFront()
			e := m.entries[r.id]
			if (e.version() != r.version || e.at != r.at) && !past(lim, e.version(), e.at, last, now) {
				m.order.push(modelRecord{r.id, e.version(), e.at})
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

func (m *modelIDs) forget(id string, e idEntry, byCap bool) {
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
		m.early = modelRecord{id, version, e.at}
	}
	proof := version
	if e.banned() {
		proof = version + 1
	}
	m.proof = max(m.proof, proof)
}

// collidingHash keys the ids "id-N" so that homes collide: h1 takes one of
// eight values, half of them in the last slots of any table (clusters that
// wrap past its end); h2 keeps the ids apart.
func collidingHash(id string) idKey {
	n, err := strconv.Atoi(id[len("id-"):])
	if err != nil {
		panic(err) // the tests only make ids of that form
	}
	h1 := uint64(n%4) << 60
	if n%8 >= 4 {
		h1 = ^h1
	}
	return idKey{h1: h1, h2: uint64(n)}
}

// modelRun applies one sequence of operations, read from ops two bytes at a
// time, to a requestIDs and to the model, the way the sequence stage calls
// them, and compares everything either can tell after each step.
func modelRun(t *testing.T, ops []byte, maxIDs int, span uint64, n int) {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprint("id-", i)
	}
	m := newRequestIDs(maxIDs)
	m.hash = collidingHash
	m.idx.span = span
	model := &modelIDs{entries: make(map[string]idEntry), maxIDs: m.limit()}
	lim := Limits{Versions: 8, Age: time.Minute}
	var last int64
	now := t0
	evict := func() {
		m.evict(lim, last, now)
		model.evict(lim, last, now)
	}
	for i := 0; i+1 < len(ops); i += 2 {
		op, arg := ops[i]%8, int(ops[i+1])
		id := ids[arg%n]
		k := m.key(id)
		switch op {
		case 0, 1, 2: // a commit with an id (Sequencer.Sequence)
			evict()
			if _, ok := model.entries[id]; !ok {
				last++
				m.addCommit(k, last, now)
				model.addCommit(id, last, now)
				evict()
			}
		case 3, 4: // a status request (Sequencer.LookupStatus, not truncated)
			evict()
			e, ok := model.entries[id]
			if !ok || e.banned() {
				m.ban(k, last, now)
				model.ban(id, last, now)
				if !ok {
					evict()
				}
			}
		case 5: // a commit without an id
			last++
		case 6: // time passes
			now = now.Add(time.Duration(arg) * time.Second)
		case 7: // a retention policy changes the limits
			lim = Limits{Versions: int64(arg % 16), Age: time.Duration(arg%5) * 30 * time.Second}
		}
		compareModel(t, i/2, m, model, ids)
	}
}

func compareModel(t *testing.T, step int, m *requestIDs, model *modelIDs, ids []string) {
	t.Helper()
	for _, id := range ids {
		got, gok := m.get(m.key(id))
		want, wok := model.entries[id]
		if gok != wok || got != want {
			t.Fatalf("step %d: %s: got %+v %v, model %+v %v", step, id, got, gok, want, wok)
		}
	}
	if m.idx.len() != model.order.len() {
		t.Fatalf("step %d: %d records, model %d", step, m.idx.len(), model.order.len())
	}
	for i := range m.idx.len() {
		if got, want := m.idx.rec(m.idx.head+uint64(i)).key, m.key(model.order.at(i).id); got != want {
			t.Fatalf("step %d: record %d is %v, model %v (eviction order)", step, i, got, want)
		}
	}
	got := [...]int64{int64(m.commits), int64(m.bans), m.forgotten, m.earlyVersion, m.earlyAt, m.proof, m.droppedByCap}
	want := [...]int64{int64(model.commits), int64(model.bans), model.forgotten, model.early.version, model.early.at, model.proof, model.droppedByCap}
	if got != want || m.forgottenByCap != model.forgottenByCap {
		t.Fatalf("step %d: commits, bans, forgotten, early, at, proof, dropped %v (by cap %v); model %v (%v)",
			step, got, m.forgottenByCap, want, model.forgottenByCap)
	}
	checkIndex(t, &m.idx)
}

// Random operation sequences: requestIDs answers exactly as the model,
// with no cap, with small caps, and with the slot numbers rebased often.
func TestRequestIDsMatchModel(t *testing.T) {
	runs := 200
	if testing.Short() || raceEnabled {
		runs = 20
	}
	for _, c := range []struct {
		name   string
		maxIDs int
		span   uint64
		ids    int
	}{
		{"no cap", 0, 0, 64},
		{"cap 5", 5, 0, 64},
		{"cap 20", 20, 0, 200},
		{"no cap, small span", 0, 24, 64},
		{"cap 9, small span", 9, 12, 32},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(c.maxIDs), c.span))
			for range runs {
				ops := make([]byte, 600)
				for i := range ops {
					ops[i] = byte(rng.Uint32())
				}
				modelRun(t, ops, c.maxIDs, c.span, c.ids)
			}
		})
	}
}

// FuzzRequestIDs is the same comparison over sequences the fuzzer picks:
//
//	go test -run '^$' -fuzz FuzzRequestIDs -fuzztime 60s ./server/store
func FuzzRequestIDs(f *testing.F) {
	f.Add(uint16(0), uint8(0), []byte{0, 1, 0, 2, 3, 1, 6, 200, 5, 0, 0, 3})
	f.Add(uint16(3), uint8(8), []byte{3, 1, 3, 1, 0, 2, 6, 90, 3, 1, 0, 4, 0, 5, 6, 90, 0, 6})
	f.Fuzz(func(t *testing.T, maxIDs uint16, span uint8, ops []byte) {
		var s uint64
		if span > 0 {
			s = uint64(span)%64 + 2
		}
		modelRun(t, ops, int(maxIDs%64), s, 48)
	})
}
