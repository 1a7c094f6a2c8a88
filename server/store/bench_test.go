package store

import (
	"fmt"
	"testing"
	"time"

	"weaseldb/server/api"
)

// BenchmarkCommitPath: the store work of one small write commit across the
// three stateful stages (sequence, resolve, persist), run on one goroutine.
func BenchmarkCommitPath(b *testing.B) {
	st := New(Options{})
	reqs := make([]*api.CommitRequest, 1024)
	for i := range reqs {
		reqs[i] = &api.CommitRequest{ReadVersion: 0, HasReadVersion: true,
			Preconditions: []api.Precondition{pointRead(fmt.Sprint("user:", i))},
			Operations:    []api.Operation{write(fmt.Sprint("user:", i), "0123456789abcdef0123456789abcdef")}}
	}
	now := time.Now()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		req := reqs[i%len(reqs)]
		req.RequestID = fmt.Sprint("bench-request-id-", i)
		v := st.Sequencer.Sequence(req.RequestID, req.ReadVersion, now).Version
		req.ReadVersion = v - 1
		res := st.Resolver.Resolve(v, req)
		st.Persister.Forget(st.Sequencer.Forgotten())
		st.Persister.Apply(req, res, now)
		if i%32 == 0 {
			st.Persister.PublishBatch()
		}
		i++
	}
}

// BenchmarkSequenceIDs: the sequence stage alone, for commits with a fresh
// request id (36-character UUID text, made per commit as the parser
// would), in the steady states the id memory can be in:
//
//   - grow: every id is kept (within retention, no cap reached);
//
//   - retention: each commit's id pushes the oldest out of a window of
//     2^16 versions (retention evicts one per commit);
//
//   - cap: each commit's id drops the oldest of 2^16 by the cap;
//
//   - duplicate: retries of ids remembered (a lookup, nothing added).
//
//     go test -run '^$' -bench SequenceIDs -count 6 ./server/store
func BenchmarkSequenceIDs(b *testing.B) {
	for _, c := range []struct {
		name   string
		lim    Limits
		maxIDs int
	}{
		{"grow", Limits{Versions: 1 << 40, Age: time.Hour}, 1 << 30},
		{"retention", Limits{Versions: 1 << 16}, 1 << 30},
		{"cap", Limits{Versions: 1 << 40, Age: time.Hour}, 1 << 16},
		{"duplicate", Limits{Versions: 1 << 40, Age: time.Hour}, 1 << 30},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := NewSequencer(NewRetention(c.lim), c.maxIDs)
			now := time.Now()
			buf := make([]byte, 36)
			const held = 1 << 16
			if c.name == "duplicate" {
				for i := range held {
					s.Sequence(string(uuidText(buf, uint64(i))), 0, now)
				}
			}
			b.ReportAllocs()
			i := uint64(0)
			for b.Loop() {
				n := i
				if c.name == "duplicate" {
					n = i % held
				}
				s.Sequence(string(uuidText(buf, n)), int64(held+i), now)
				i++
			}
		})
	}
}

// uuidText writes i into buf (36 bytes) as "%08x-0000-4000-8000-%012x"
// would, without fmt's cost: ten million of them take a while.
func uuidText(buf []byte, i uint64) []byte {
	const hex = "0123456789abcdef"
	copy(buf, "00000000-0000-4000-8000-000000000000")
	for p, v := 7, i; p >= 0; p, v = p-1, v>>4 {
		buf[p] = hex[v&15]
	}
	for p, v := 35, i; p >= 24; p, v = p-1, v>>4 {
		buf[p] = hex[v&15]
	}
	return buf
}
