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
