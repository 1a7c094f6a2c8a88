package commit

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"weaseldb/server/api"
	"weaseldb/server/metrics"
	"weaseldb/server/pipeline"
	"weaseldb/server/store"
)

// Every entry passes every stage once, with more entries than ring slots,
// several producers and several release threads; Close joins every stage.
func TestEveryEntryReleasedOnceAndCloseJoins(t *testing.T) {
	for _, strategy := range pipeline.Strategies() {
		for _, threads := range []int{1, 3} {
			t.Run(fmt.Sprintf("%v/%d", strategy, threads), func(t *testing.T) {
				m := metrics.New()
				cp, err := New(Options{WaitStrategy: strategy, ReleaseThreads: threads, LgSlotCount: 4, OkResolveIterations: 10, Metrics: m})
				if err != nil {
					t.Fatal(err)
				}
				var wg sync.WaitGroup
				for p := 0; p < 3; p++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						batch := make([]Entry, 50)
						for i := range batch {
							batch[i] = Entry{Kind: KindOK, KeepAlive: true, Route: metrics.RouteOK, Start: time.Now()}
						}
						for r := 0; r < 10; r++ {
							cp.Submit(batch)
						}
					}()
				}
				wg.Wait()
				done := make(chan struct{})
				go func() { cp.Close(); close(done) }()
				select {
				case <-done:
				case <-time.After(20 * time.Second):
					t.Fatal("Close did not return")
				}
				out, err := m.Encode()
				if err != nil {
					t.Fatal(err)
				}
				if want := `weaseldb_http_requests_total{code="200",route="ok"} 1500`; !strings.Contains(string(out), want) {
					t.Fatalf("want %s in\n%s", want, grep(string(out), "requests_total"))
				}
			})
		}
	}
}

func grep(s, sub string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func TestOkResponse(t *testing.T) {
	if !strings.HasPrefix(string(okResponse), "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(string(okResponse), "\r\n\r\n{\"status\":\"ok\"}") {
		t.Fatalf("%q", okResponse)
	}
}

// Commits pass the three deciding stages in version order: a write is
// applied, a stale read conflicts and applies nothing, a repeated request
// id is answered as a duplicate; publishes are once per batch.
func TestCommitStagesApplyInOrder(t *testing.T) {
	st := store.New(store.Options{})
	m := metrics.New()
	var publishes atomic.Int64
	cp, err := New(Options{WaitStrategy: pipeline.WaitIfStageEmpty, ReleaseThreads: 2, Metrics: m, Store: st,
		OnPublish: func() { publishes.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	commit := func(id string, readVersion int64, pre []api.Precondition, ops ...api.Operation) Entry {
		d := &Data{Commit: api.CommitRequest{RequestID: id, ReadVersion: readVersion, Preconditions: pre, Operations: ops}}
		return Entry{Kind: KindCommit, KeepAlive: true, Route: metrics.RouteCommit, Start: time.Now(), Data: d}
	}
	write := api.Operation{Type: api.Write, Key: []byte("k"), Value: []byte("v1")}
	cp.Submit([]Entry{
		commit("request-0000000000000001", 0, nil, write),
		commit("", 0, []api.Precondition{{Type: api.PointRead, Key: []byte("k")}},
			api.Operation{Type: api.Write, Key: []byte("k"), Value: []byte("stale")}),
		commit("request-0000000000000001", 0, nil, write),
		commit("", 1, []api.Precondition{{Type: api.RangeRead, Begin: []byte("a"), End: []byte("z")}},
			api.Operation{Type: api.Write, Key: []byte("k"), Value: []byte("v3")}),
	})
	cp.Close()
	if v := cp.CommittedVersion(); v != 3 {
		t.Fatalf("version %d, want 3 (the duplicate takes none)", v)
	}
	if value, version, ok := st.Persister.Get([]byte("k")); !ok || string(value) != "v3" || version != 3 {
		t.Fatalf("k = %q at %d (%v)", value, version, ok)
	}
	out, _ := m.Encode()
	for _, want := range []string{`route="commit"} 3`, `code="409",route="commit"} 1`} {
		if !strings.Contains(grep(string(out), "requests_total"), want) {
			t.Errorf("want %s in\n%s", want, grep(string(out), "requests_total"))
		}
	}
	if n := publishes.Load(); n < 1 || n > 4 {
		t.Fatalf("%d publishes for one push of 4 commits", n)
	}
}

// OkResolveSpin is spent once per /ok in the (single) resolve stage, so n
// requests take at least n times the spin: a lower bound, which cannot be
// met by skipping the spin and does not depend on the machine's speed.
func TestOkResolveSpinIsPerRequest(t *testing.T) {
	const n, spin = 20, 2 * time.Millisecond
	cp, err := New(Options{WaitStrategy: pipeline.WaitIfStageEmpty, ReleaseThreads: 1, OkResolveSpin: spin, Metrics: metrics.New()})
	if err != nil {
		t.Fatal(err)
	}
	batch := make([]Entry, n)
	for i := range batch {
		batch[i] = Entry{Kind: KindOK, KeepAlive: true, Route: metrics.RouteOK, Start: time.Now()}
	}
	start := time.Now()
	cp.Submit(batch)
	cp.Close()
	if got := time.Since(start); got < n*spin {
		t.Fatalf("%d requests with %v of spin each passed in %v", n, spin, got)
	}
}
