package commit

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"weaseldb/internal/monoclock"
	"weaseldb/server/api"
	"weaseldb/server/http1"
	"weaseldb/server/metrics"
	"weaseldb/server/pipeline"
	"weaseldb/server/store"
)

// Every entry passes every stage once, with more entries than ring slots,
// several producers and several release threads; Close joins every stage.
func TestEveryEntryReleasedOnceAndCloseJoins(t *testing.T) {
	for _, strategy := range pipeline.Strategies() {
		for _, threads := range []int{1, 3} {
			for _, inline := range []bool{false, true} {
				t.Run(fmt.Sprintf("%v/%d/inline=%v", strategy, threads, inline), func(t *testing.T) {
					m := metrics.New()
					cp, err := New(Options[*testConn]{Responder: testResponder{}, WaitStrategy: strategy, ReleaseThreads: threads, LgSlotCount: 4, OkResolveIterations: 10, Metrics: m, RunToCompletion: inline})
					if err != nil {
						t.Fatal(err)
					}
					var wg sync.WaitGroup
					for p := 0; p < 3; p++ {
						wg.Add(1)
						go func() {
							defer wg.Done()
							batch := make([]tEntry, 50)
							for i := range batch {
								batch[i] = tEntry{Kind: KindOK, Reply: Reply[*testConn]{Framing: keepAlive}, Route: metrics.RouteOK, Start: monoclock.Now()}
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
					for _, stage := range metrics.StageNames {
						// Every stage saw every request and the shutdown entries.
						want := fmt.Sprintf(`weaseldb_pipeline_batch_size_sum{stage="%s"} %d`, stage, 1500+threads)
						if !strings.Contains(string(out), want) {
							t.Fatalf("want %s in\n%s", want, grep(string(out), "batch_size_sum"))
						}
					}
				})
			}
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
	cp, err := New(Options[*testConn]{Responder: testResponder{}, WaitStrategy: pipeline.WaitIfStageEmpty, ReleaseThreads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	// Nothing is submitted: this goroutine stands in for the persist stage.
	ok := cp.okResponse(&Reply[*testConn]{Framing: keepAlive})
	if !strings.HasPrefix(string(ok), "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(string(ok), "\r\n\r\n{\"status\":\"ok\"}") {
		t.Fatalf("%q", ok)
	}
	if again := cp.okResponse(&Reply[*testConn]{Framing: keepAlive}); &again[0] != &ok[0] {
		t.Fatal("the keep-alive answer is framed again, not shared")
	}
	// Each framing has its own shared answer, framed by the Responder.
	head := uint8(http1.FramingHead)
	for _, r := range []Reply[*testConn]{{Framing: head}, {Framing: keepAlive | head}, {Framing: uint8(http1.FramingHTTP10)},
		{Framing: keepAlive, RequestID: []byte("r-1")}} {
		want := testResponder{}.AppendResponse(nil, &r, 200, "application/json", cp.okBody)
		if got := cp.okResponse(&r); string(got) != string(want) {
			t.Fatalf("framing %b id %q: %q, want %q", r.Framing, r.RequestID, got, want)
		}
	}
	if _, err := New(Options[*testConn]{WaitStrategy: pipeline.WaitIfStageEmpty, ReleaseThreads: 1}); err == nil {
		t.Fatal("New without a Responder: no error")
	}
}

// Commits pass the three deciding stages in version order: a write is
// applied, a stale read conflicts and applies nothing, a repeated request
// id is answered as a duplicate; publishes are once per batch.
func TestCommitStagesApplyInOrder(t *testing.T) {
	st := store.New(store.Options{})
	m := metrics.New()
	var publishes atomic.Int64
	cp, err := New(Options[*testConn]{Responder: testResponder{}, WaitStrategy: pipeline.WaitIfStageEmpty, ReleaseThreads: 2, Metrics: m, Store: st,
		OnPublish: func() { publishes.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	commit := func(id string, readVersion int64, pre []api.Precondition, ops ...api.Operation) tEntry {
		d := &Data{Commit: api.CommitRequest{RequestID: id, ReadVersion: readVersion, Preconditions: pre, Operations: ops}}
		return tEntry{Kind: KindCommit, Reply: Reply[*testConn]{Framing: keepAlive}, Route: metrics.RouteCommit, Start: monoclock.Now(), Data: d}
	}
	write := api.Operation{Type: api.Write, Key: []byte("k"), Value: []byte("v1")}
	cp.Submit([]tEntry{
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
	cp, err := New(Options[*testConn]{Responder: testResponder{}, WaitStrategy: pipeline.WaitIfStageEmpty, ReleaseThreads: 1, OkResolveSpin: spin, Metrics: metrics.New()})
	if err != nil {
		t.Fatal(err)
	}
	batch := make([]tEntry, n)
	for i := range batch {
		batch[i] = tEntry{Kind: KindOK, Reply: Reply[*testConn]{Framing: keepAlive}, Route: metrics.RouteOK, Start: monoclock.Now()}
	}
	start := time.Now()
	cp.Submit(batch)
	cp.Close()
	if got := time.Since(start); got < n*spin {
		t.Fatalf("%d requests with %v of spin each passed in %v", n, spin, got)
	}
}

// knobEntries are the entries the knob tests submit: a GET /ok, a status
// lookup and a commit of the given id.
func knobEntries() (ok tEntry, status func() tEntry, commit func(id string) tEntry) {
	ok = tEntry{Kind: KindOK, Reply: Reply[*testConn]{Framing: keepAlive}, Route: metrics.RouteOK}
	status = func() tEntry {
		return tEntry{Kind: KindStatus, Reply: Reply[*testConn]{Framing: keepAlive}, Route: metrics.RouteStatus,
			Data: &Data{Status: api.StatusQuery{RequestID: "request-0000000000000001"}}}
	}
	commit = func(id string) tEntry {
		return tEntry{Kind: KindCommit, Reply: Reply[*testConn]{Framing: keepAlive}, Route: metrics.RouteCommit, Data: &Data{Commit: api.CommitRequest{RequestID: id}}}
	}
	return ok, status, commit
}

// submitCopiesAndClose submits a copy of entries (each with its own Data,
// which the stages write to) and closes the pipeline, so every stage has
// handled them all.
func submitCopiesAndClose(t *testing.T, cp *Pipeline[*testConn], entries []tEntry) {
	t.Helper()
	copies := make([]tEntry, len(entries))
	for i, e := range entries {
		if e.Data != nil {
			d := *e.Data
			e.Data = &d
		}
		copies[i] = e
	}
	if err := cp.Submit(copies); err != nil {
		t.Fatal(err)
	}
	cp.Close()
}

// The benchmark knobs spin once per request of their own route and never
// for another: a B slowed with commit_resolve_spin_ns must be slower on
// POST /v1/commit alone (the gate's commit scenario), and ok_resolve_spin_ns
// must leave commits alone. The spins are counted, not timed.
func TestResolveSpinKnobsPerRoute(t *testing.T) {
	const okSpin, commitSpin, statusSpin = 3 * time.Microsecond, 5 * time.Microsecond, 7 * time.Microsecond
	ok, status, commit := knobEntries()
	tests := []struct {
		name                  string
		okSpin, cSpin, stSpin time.Duration
		entries               []tEntry
		want                  map[time.Duration]int
	}{
		{"off by default", 0, 0, 0, []tEntry{ok, commit("request-0000000000000001"), status()}, map[time.Duration]int{}},
		{"commit knob: every commit, duplicates included, nothing else", 0, commitSpin, 0,
			[]tEntry{ok, commit("request-0000000000000001"), commit("request-0000000000000001"), commit(""), status(), ok},
			map[time.Duration]int{commitSpin: 3}},
		{"ok knob leaves commits alone", okSpin, 0, 0, []tEntry{ok, commit("request-0000000000000002"), status(), ok},
			map[time.Duration]int{okSpin: 2}},
		{"status knob: every lookup, nothing else", 0, 0, statusSpin,
			[]tEntry{ok, status(), commit("request-0000000000000004"), status()},
			map[time.Duration]int{statusSpin: 2}},
		{"all three", okSpin, commitSpin, statusSpin, []tEntry{ok, commit("request-0000000000000003"), status()},
			map[time.Duration]int{okSpin: 1, commitSpin: 1, statusSpin: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			got := map[time.Duration]int{}
			cp, err := New(Options[*testConn]{Responder: testResponder{}, WaitStrategy: pipeline.WaitIfStageEmpty, ReleaseThreads: 1, Metrics: metrics.New(),
				OkResolveSpin: tt.okSpin, CommitResolveSpin: tt.cSpin, StatusResolveSpin: tt.stSpin,
				spinFor: func(d time.Duration) { mu.Lock(); got[d]++; mu.Unlock() }})
			if err != nil {
				t.Fatal(err)
			}
			submitCopiesAndClose(t, cp, tt.entries)
			mu.Lock()
			defer mu.Unlock()
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("spins %v, want %v", got, tt.want)
			}
		})
	}
}

// The iteration knobs (a fixed instruction count, for the gate's cost
// tier) follow the same rule: each spends its iterations once per request
// of its own route and never for another.
func TestResolveIterationKnobsPerRoute(t *testing.T) {
	const okIt, commitIt, statusIt = 3, 5, 7
	ok, status, commit := knobEntries()
	tests := []struct {
		name            string
		okIt, cIt, stIt int
		entries         []tEntry
		want            map[int]int
	}{
		{"off by default", 0, 0, 0, []tEntry{ok, commit("request-0000000000000001"), status()}, map[int]int{}},
		{"commit knob: every commit, duplicates included, nothing else", 0, commitIt, 0,
			[]tEntry{ok, commit("request-0000000000000001"), commit("request-0000000000000001"), commit(""), status(), ok},
			map[int]int{commitIt: 3}},
		{"status knob: every lookup, nothing else", 0, 0, statusIt,
			[]tEntry{ok, status(), commit("request-0000000000000004"), status()}, map[int]int{statusIt: 2}},
		{"all three", okIt, commitIt, statusIt, []tEntry{ok, commit("request-0000000000000003"), status()},
			map[int]int{okIt: 1, commitIt: 1, statusIt: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			got := map[int]int{}
			cp, err := New(Options[*testConn]{Responder: testResponder{}, WaitStrategy: pipeline.WaitIfStageEmpty, ReleaseThreads: 1, Metrics: metrics.New(),
				OkResolveIterations: tt.okIt, CommitResolveIterations: tt.cIt, StatusResolveIterations: tt.stIt,
				spendIterations: func(n int) { mu.Lock(); got[n]++; mu.Unlock() }})
			if err != nil {
				t.Fatal(err)
			}
			submitCopiesAndClose(t, cp, tt.entries)
			mu.Lock()
			defer mu.Unlock()
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("iterations %v, want %v", got, tt.want)
			}
		})
	}
}

// A zeroed Entry is a no-op in every stage: it neither ends the pipeline
// (KindShutdown used to be Kind's zero value, so one zero slot stopped a
// stage early and Close never returned) nor counts as a request.
func TestZeroEntryIsNotShutdown(t *testing.T) {
	m := metrics.New()
	cp, err := New(Options[*testConn]{Responder: testResponder{}, WaitStrategy: pipeline.WaitIfStageEmpty, ReleaseThreads: 2, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	// Zero entries alone first (so the stages see them in a batch of their
	// own, as they did when they counted as shutdowns), then requests.
	if err := cp.Submit([]tEntry{{}, {}, {}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	batch := []tEntry{{}, {Kind: KindOK, Reply: Reply[*testConn]{Framing: keepAlive}, Route: metrics.RouteOK}, {}, {}}
	for range 5 {
		if err := cp.Submit(batch); err != nil {
			t.Fatal(err)
		}
	}
	closeWithin(t, cp, 20*time.Second)
	out, _ := m.Encode()
	var counted []string
	for _, l := range strings.Split(grep(string(out), "requests_total{"), "\n") {
		if l != "" && !strings.HasSuffix(l, " 0") {
			counted = append(counted, l)
		}
	}
	if len(counted) != 1 || counted[0] != `weaseldb_http_requests_total{code="200",route="ok"} 5` {
		t.Fatalf("requests counted: %q", counted)
	}
}

func closeWithin(t *testing.T, cp *Pipeline[*testConn], d time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() { cp.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatal("Close did not return")
	}
}

// Submit after Close queues nothing and says so; Submits racing with Close
// either land before the shutdown entries (and are answered) or get
// ErrClosed, never a hang.
func TestSubmitAfterClose(t *testing.T) {
	for _, threads := range []int{1, 3} {
		m := metrics.New()
		cp, err := New(Options[*testConn]{Responder: testResponder{}, WaitStrategy: pipeline.WaitIfStageEmpty, ReleaseThreads: threads, LgSlotCount: 3, Metrics: m})
		if err != nil {
			t.Fatal(err)
		}
		var accepted atomic.Int64
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				batch := make([]tEntry, 5)
				for {
					for i := range batch {
						batch[i] = tEntry{Kind: KindOK, Reply: Reply[*testConn]{Framing: keepAlive}, Route: metrics.RouteOK}
					}
					if err := cp.Submit(batch); err != nil {
						if !errors.Is(err, ErrClosed) {
							t.Errorf("Submit: %v", err)
						}
						return
					}
					accepted.Add(int64(len(batch)))
				}
			}()
		}
		time.Sleep(20 * time.Millisecond)
		closeWithin(t, cp, 20*time.Second)
		wg.Wait()
		if err := cp.Submit([]tEntry{{Kind: KindOK}}); !errors.Is(err, ErrClosed) {
			t.Fatalf("Submit after Close: %v", err)
		}
		out, _ := m.Encode()
		if want := fmt.Sprintf(`weaseldb_http_requests_total{code="200",route="ok"} %d`, accepted.Load()); !strings.Contains(string(out), want+"\n") {
			t.Fatalf("threads %d: want %s (every accepted entry answered) in\n%s", threads, want, grep(string(out), "requests_total{"))
		}
	}
}

// ResolveBatch bounds the resolve stage's batches; every entry still passes
// every stage once.
func TestResolveBatchOne(t *testing.T) {
	m := metrics.New()
	cp, err := New(Options[*testConn]{Responder: testResponder{}, WaitStrategy: pipeline.WaitIfStageEmpty, ReleaseThreads: 2, ResolveBatch: 1, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	batch := make([]tEntry, 40)
	for i := range batch {
		batch[i] = tEntry{Kind: KindOK, Reply: Reply[*testConn]{Framing: keepAlive}, Route: metrics.RouteOK}
	}
	cp.Submit(batch)
	closeWithin(t, cp, 20*time.Second)
	out, _ := m.Encode()
	if !strings.Contains(string(out), `weaseldb_http_requests_total{code="200",route="ok"} 40`) {
		t.Fatalf("%s", grep(string(out), "requests_total{"))
	}
	// 40 requests and 2 shutdown entries, one batch each.
	if !strings.Contains(string(out), `weaseldb_pipeline_batch_size_bucket{stage="resolve",le="1"} 42`) {
		t.Fatalf("resolve batches larger than 1:\n%s", grep(string(out), `stage="resolve"`))
	}
	if _, err := New(Options[*testConn]{Responder: testResponder{}, WaitStrategy: pipeline.WaitIfStageEmpty, ReleaseThreads: 1, ResolveBatch: -1}); err == nil {
		t.Fatal("negative ResolveBatch accepted")
	}
}

// The whole pipeline with an injected clock: the retry sequence of issue 18
// (retention 1 h and 5 versions, the retry after 6 commits) for each limit
// passed alone and both together, and a status not_found that bans a late
// commit. Responses are read from the entries the release stage handled.
func TestRetentionThroughThePipeline(t *testing.T) {
	type answer struct {
		status int
		body   string
	}
	run := func(t *testing.T, steps func(do func(tEntry) answer, advance func(time.Duration))) {
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var mu sync.Mutex
		answers := make(chan answer, 1)
		st := store.New(store.Options{RetentionVersions: 5, RetentionAge: time.Hour})
		cp, err := New(Options[*testConn]{Responder: testResponder{}, WaitStrategy: pipeline.WaitIfStageEmpty, ReleaseThreads: 1, Metrics: metrics.New(), Store: st,
			Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
			released: func(e *tEntry) {
				answers <- answer{e.Status, string(e.Resp[bytes.Index(e.Resp, []byte("\r\n\r\n"))+4:])}
			}})
		if err != nil {
			t.Fatal(err)
		}
		defer closeWithin(t, cp, 20*time.Second)
		do := func(e tEntry) answer {
			e.Reply.Framing = keepAlive
			if err := cp.Submit([]tEntry{e}); err != nil {
				t.Fatal(err)
			}
			select {
			case a := <-answers:
				return a
			case <-time.After(20 * time.Second):
				t.Fatal("no answer")
			}
			return answer{}
		}
		steps(do, func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() })
	}
	commitEntry := func(id string) tEntry {
		return tEntry{Kind: KindCommit, Route: metrics.RouteCommit, Data: &Data{Commit: api.CommitRequest{RequestID: id,
			Operations: []api.Operation{{Type: api.Write, Key: []byte("counter"), Value: []byte("1")}}}}}
	}
	statusEntry := func(id string) tEntry {
		return tEntry{Kind: KindStatus, Route: metrics.RouteStatus, Data: &Data{Status: api.StatusQuery{RequestID: id}}}
	}
	const id = "retry-after-6-commits-0001"
	for _, c := range []struct {
		name      string
		commits   int
		after     time.Duration
		wantRetry string
	}{
		{"versions passed, age not", 6, time.Minute, `{"status":"committed","version":1,"request_id":"` + id + `","duplicate":true}`},
		{"age passed, versions not", 2, 2 * time.Hour, `{"status":"committed","version":1,"request_id":"` + id + `","duplicate":true}`},
		{"both passed", 6, 2 * time.Hour, `{"status":"committed","version":8,"request_id":"` + id + `"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			run(t, func(do func(tEntry) answer, advance func(time.Duration)) {
				if a := do(commitEntry(id)); a.body != `{"status":"committed","version":1,"request_id":"`+id+`"}` {
					t.Fatalf("first: %+v", a)
				}
				for range c.commits {
					do(tEntry{Kind: KindCommit, Route: metrics.RouteCommit, Data: &Data{}})
				}
				advance(c.after)
				if a := do(commitEntry(id)); a.body != c.wantRetry {
					t.Fatalf("retry: %s\nwant   %s", a.body, c.wantRetry)
				}
			})
		})
	}
	t.Run("not_found bans the late commit", func(t *testing.T) {
		run(t, func(do func(tEntry) answer, advance func(time.Duration)) {
			const late = "late-commit-000000000001"
			if a := do(statusEntry(late)); a.body != `{"status":"not_found","request_id":"`+late+`"}` {
				t.Fatalf("status: %+v", a)
			}
			if a := do(commitEntry(late)); a.status != 409 || a.body != `{"status":"not_committed","reason":"request_id_banned","request_id":"`+late+`"}` {
				t.Fatalf("late commit: %+v", a)
			}
		})
	})
}
