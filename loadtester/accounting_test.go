package loadtester

import (
	"weaseldb/loadtester/arrival"
	"weaseldb/loadtester/result"

	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Accounting (issue 12): every request due in the measured window ends in
// exactly one of answered, failed, unfinished and dropped, and a server
// that stops answering shows in the counts, the tail and the exit status.

// runJudged runs cfg as the command does (progress lines, then the
// summary and the verdict at cfg.MaxErrors; an HDR log streamed to hdrLog
// when given) and returns the verdict's outcome, the result as its JSON
// reads back, and what was printed.
func runJudged(t *testing.T, cfg Config, hdrLog string) (result.Outcome, *result.Result, string) {
	t.Helper()
	var out bytes.Buffer
	cfg.Progress = &out
	json := filepath.Join(t.TempDir(), "r.json")
	res := runToFiles(t, cfg, testFiles{json: json, hdrLog: hdrLog})
	res.PrintSummary(&out)
	outcome, verdict, reason := result.Verdict(res, cfg.MaxErrors)
	out.WriteString(verdict + "\n" + reason + "\n")
	back, err := result.ReadResult(json)
	if err != nil {
		t.Fatalf("no result: %v\n%s", err, out.String())
	}
	return outcome, back, out.String()
}

// checkAccounting asserts what every result must satisfy: the four counts
// add up to the due requests, each interval's counts add up to the totals,
// and the latency histogram holds each answered, unfinished and dropped
// request once.
func checkAccounting(t *testing.T, res *result.Result) {
	t.Helper()
	if sum := res.Answered + res.Failed + res.Unfinished + res.Dropped; sum != res.Due {
		t.Errorf("due %d, answered %d + failed %d + unfinished %d + dropped %d = %d",
			res.Due, res.Answered, res.Failed, res.Unfinished, res.Dropped, sum)
	}
	if res.Answered != res.Requests {
		t.Errorf("answered %d, requests %d: both count the responses to due requests", res.Answered, res.Requests)
	}
	var requests, unfinished, dropped int64
	for _, iv := range res.Intervals {
		requests += iv.Requests
		unfinished += iv.Unfinished
		dropped += iv.Dropped
	}
	if requests != res.Requests || unfinished != res.Unfinished || dropped != res.Dropped {
		t.Errorf("intervals add up to requests %d, unfinished %d, dropped %d; totals %d, %d, %d",
			requests, unfinished, dropped, res.Requests, res.Unfinished, res.Dropped)
	}
	if h := res.Hist(); h == nil || h.TotalCount()+res.RecordErrors != res.Answered+res.Unfinished+res.Dropped {
		n := int64(-1)
		if h != nil {
			n = h.TotalCount()
		}
		t.Errorf("histogram holds %d values (+%d out of range), want answered+unfinished+dropped = %d",
			n, res.RecordErrors, res.Answered+res.Unfinished+res.Dropped)
	}
	for _, w := range res.Warnings {
		if bytes.Contains([]byte(w), []byte("accounting")) {
			t.Errorf("warning: %s", w)
		}
	}
}

// A server that answers for the first part of the run, then holds every
// request: rate mode must show the held requests as unfinished + dropped,
// the stall in the tail, and fail the exit status.
func TestStallAtEndRateMode(t *testing.T) {
	const (
		rate     = 1000
		warmup   = 300 * time.Millisecond
		duration = 2 * time.Second
		answered = 800 * time.Millisecond // of the measured window
		interval = 500 * time.Millisecond
	)
	s := startTestServer(t, "tcp", nil)
	holdFrom := time.Now().Add(warmup + answered)
	s.holdFrom.Store(holdFrom.UnixNano())
	hlog := filepath.Join(t.TempDir(), "r.hlog")
	cfg := testConfig(s)
	cfg.Rate, cfg.Duration, cfg.Warmup, cfg.Concurrency = rate, duration, warmup, 50
	cfg.Timeout, cfg.StatsInterval = 30*time.Second, interval
	outcome, res, out := runJudged(t, cfg, hlog)
	checkAccounting(t, res)
	// The HDR log, written as the run went, is rewritten with the lower
	// bounds in the intervals they were due in: the last interval shows the
	// stall, and the log holds what the run's histogram holds.
	logged := readHDRLog(t, hlog)
	var total int64
	for _, h := range logged {
		total += h.TotalCount()
	}
	if total != res.Hist().TotalCount() || len(logged) != len(res.Intervals) {
		t.Errorf("HDR log: %d values in %d intervals; the run has %d in %d", total, len(logged), res.Hist().TotalCount(), len(res.Intervals))
	}
	if n := len(logged); n > 0 && time.Duration(logged[n-1].Max()) < time.Second {
		t.Errorf("HDR log's last interval max %v: the stall is not in it", time.Duration(logged[n-1].Max()))
	}
	if !strings.Contains(out, "lower bounds") || !strings.Contains(out, "unfinished 50") {
		t.Errorf("the summary does not name the held requests and their lower bounds:\n%s", out)
	}
	if w := res.Warmup; w == nil || w.Due == 0 || w.Due != w.Answered+w.Failed+w.Unfinished+w.Dropped {
		t.Errorf("warm-up accounting %+v", w)
	}
	// The hold began at a wall time chosen before the run; the window
	// opened when the run got there, later on a loaded machine. What the
	// window held is from the hold to the window's end.
	opened, err := time.Parse(time.RFC3339Nano, res.WindowStart)
	if err != nil {
		t.Fatalf("window_start %q: %v", res.WindowStart, err)
	}
	// A client behind its schedule (a loaded machine) sends requests due
	// before the hold after it, where they are held too: as many more as
	// fell due in its worst lateness.
	heldTime := min(max(opened.Add(duration).Sub(holdFrom), 0), duration)
	var late time.Duration
	if l := res.LateSendLateness; l != nil {
		late = time.Duration(l.Max)
	}
	least, most := heldTime.Seconds()*rate*0.95, min(heldTime+late, duration).Seconds()*rate*1.05
	if got := float64(res.Unfinished + res.Dropped); got < least || got > most {
		t.Errorf("unfinished %d + dropped %d = %.0f, want %.0f to %.0f (rate x the %v held in the window, and up to the %v the late sends were late)",
			res.Unfinished, res.Dropped, got, least, most, heldTime, late)
	}
	if res.Unfinished != 50 {
		t.Errorf("unfinished %d, want 50: one held request on each connection", res.Unfinished)
	}
	if p := time.Duration(res.Latency.P999); p < duration-answered-interval {
		t.Errorf("p99.9 %v, want at least the held time minus one interval (%v)", p, duration-answered-interval)
	}
	if due := float64(res.Due); due < rate*duration.Seconds()*0.99 || due > rate*duration.Seconds()*1.01 {
		t.Errorf("due %d, want rate x duration = %.0f within 1%%", res.Due, rate*duration.Seconds())
	}
	if outcome != result.OutcomeFail {
		t.Errorf("outcome %d, want a failure with the default --max-errors\n%s", outcome, out)
	}
}

// The closed loop: the held requests are the connections x pipeline depth.
func TestStallAtEndClosedLoop(t *testing.T) {
	const conns, depth = 8, 2
	s := startTestServer(t, "tcp", nil)
	s.holdFrom.Store(time.Now().Add(200*time.Millisecond + 700*time.Millisecond).UnixNano())
	cfg := testConfig(s)
	cfg.Concurrency, cfg.Pipeline = conns, depth
	cfg.Duration, cfg.Warmup, cfg.Timeout, cfg.StatsInterval = 1500*time.Millisecond, 200*time.Millisecond, 30*time.Second, 500*time.Millisecond
	outcome, res, out := runJudged(t, cfg, "")
	checkAccounting(t, res)
	if res.Unfinished != conns*depth || res.Dropped != 0 || res.Answered == 0 {
		t.Errorf("unfinished %d, dropped %d, answered %d: want %d unfinished (connections x depth), 0 dropped",
			res.Unfinished, res.Dropped, res.Answered, conns*depth)
	}
	if outcome != result.OutcomeFail {
		t.Errorf("outcome %d, want a failure\n%s", outcome, out)
	}
}

// A server that closes connections mid-response, and one that stalls
// 300 ms once a second: every due request is still accounted for.
func TestAccountingUnderMisbehaviour(t *testing.T) {
	const rate = 1000
	cases := []struct {
		name      string
		configure func(*testServer)
		during    func(*testServer, <-chan struct{})
	}{
		{"close mid-response", func(s *testServer) {
			s.decide = func(n int64) reply {
				if n%7 == 0 {
					return reply{act: actTruncate}
				}
				return reply{}
			}
		}, nil},
		{"stall 300ms each second", nil, func(s *testServer, done <-chan struct{}) {
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
					s.stallUntil.Store(time.Now().Add(300 * time.Millisecond).UnixNano())
				}
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := startTestServer(t, "tcp", tc.configure)
			done := make(chan struct{})
			defer close(done)
			if tc.during != nil {
				go tc.during(s, done)
			}
			cfg := testConfig(s)
			cfg.Rate, cfg.Duration, cfg.Warmup, cfg.Concurrency = rate, 2*time.Second, 300*time.Millisecond, 50
			cfg.Timeout, cfg.StatsInterval = 5*time.Second, 500*time.Millisecond
			_, res, _ := runJudged(t, cfg, "")
			checkAccounting(t, res)
			if due := float64(res.Due); due < rate*2*0.99 || due > rate*2*1.01 {
				t.Errorf("due %d, want rate x duration = %d within 1%%", res.Due, rate*2)
			}
			if tc.configure != nil && res.Failed == 0 {
				t.Errorf("no failed request from a server that closes mid-response: %v", res.ErrorsByKind)
			}
		})
	}
}

// A property over random schedules of answers, holds, truncated responses
// and resets, closed loop and open loop: the counts always add up, and each
// request is recorded once (the histogram and, when nothing is sampled,
// vegeta's results, hold each due request at most once).
func TestAccountingProperty(t *testing.T) {
	runs := 6
	if testing.Short() {
		runs = 2
	}
	for i := range runs {
		seed := uint64(i + 1)
		rng := rand.New(rand.NewPCG(seed, 42))
		rate := 0.0
		if i%2 == 1 {
			rate = float64(300 + rng.IntN(1200))
		}
		conc, depth := 1+rng.IntN(8), 1+rng.IntN(4)
		pHold, pTrunc, pReset := rng.Float64()*0.05, rng.Float64()*0.05, rng.Float64()*0.05
		name := fmt.Sprintf("seed%d/rate%.0f/c%d/p%d", seed, rate, conc, depth)
		t.Run(name, func(t *testing.T) {
			var mu = make(chan struct{}, 1)
			srvRng := rand.New(rand.NewPCG(seed, 7))
			s := startTestServer(t, "tcp", func(s *testServer) {
				s.decide = func(n int64) reply {
					mu <- struct{}{}
					x := srvRng.Float64()
					d := time.Duration(srvRng.IntN(3)) * time.Millisecond
					<-mu
					switch {
					case x < pHold:
						return reply{act: actHold}
					case x < pHold+pTrunc:
						return reply{act: actTruncate, delay: d}
					case x < pHold+pTrunc+pReset:
						return reply{act: actReset, delay: d}
					}
					return reply{delay: d}
				}
			})
			cfg := testConfig(s)
			cfg.Rate, cfg.Concurrency, cfg.Pipeline = rate, conc, depth
			cfg.Warmup, cfg.Duration = 200*time.Millisecond, 600*time.Millisecond
			cfg.Timeout = 300 * time.Millisecond
			cfg.VegetaMax = 1_000_000
			res := runOK(t, cfg)
			checkAccounting(t, res)
			results := vegetaOf(t, res)
			if int64(len(results)) != res.Due {
				t.Errorf("vegeta holds %d results for %d due requests", len(results), res.Due)
			}
			if rate > 0 {
				want := rate * cfg.Duration.Seconds()
				if due := float64(res.Due); due < want*0.99-2 || due > want*1.01+2 {
					t.Errorf("due %d, want rate x duration = %.0f", res.Due, want)
				}
			}
		})
	}
}

// --timeout runs from each request's own send: on a pipelined connection
// whose first response comes late, the second request times out at its own
// deadline, not at the first response's arrival plus --timeout.
func TestTimeoutPerRequestPipelined(t *testing.T) {
	const timeout = 600 * time.Millisecond
	s := startTestServer(t, "tcp", func(s *testServer) {
		s.decide = func(n int64) reply {
			if n == 1 {
				return reply{delay: timeout * 6 / 10}
			}
			return reply{act: actHold}
		}
	})
	cfg := testConfig(s)
	cfg.Concurrency, cfg.Pipeline = 1, 2
	cfg.Duration = 1500 * time.Millisecond
	cfg.Timeout = timeout
	cfg.VegetaMax = 1_000_000
	res := runOK(t, cfg)
	if res.ErrorsByKind["timeout"] == 0 {
		t.Fatalf("no timeout: %v", res.ErrorsByKind)
	}
	var longest time.Duration
	for _, r := range vegetaOf(t, res) {
		if r.Error == "timeout" {
			longest = max(longest, r.Latency)
		}
	}
	// Its own deadline plus a sweep period (timeout/10) and scheduling
	// slack; the old rule (from the last progress) fires at 1.6 x timeout
	// or later. TestSweepTimesOutFromEachRequestsOwnSend checks the exact
	// boundary on an injected clock.
	if longest < timeout || longest > timeout*145/100 {
		t.Errorf("longest wait of a timed-out request %v, want %v to %v", longest, timeout, timeout*145/100)
	}
}

// Requests due during the warm-up belong to it, whenever they end: none is
// lost or counted twice at the edge, closed loop and open loop.
func TestWarmupEdgeCountsEachRequestOnce(t *testing.T) {
	for _, rate := range []float64{0, 200} {
		t.Run(fmt.Sprintf("rate%.0f", rate), func(t *testing.T) {
			// Every response takes 150 ms, so requests sent just before
			// the window opens are answered inside it.
			s := startTestServer(t, "tcp", func(s *testServer) { s.delay = 150 * time.Millisecond })
			cfg := testConfig(s)
			cfg.Rate = rate
			cfg.Concurrency = 40 // 40 / 150 ms: room for the rate
			cfg.Warmup, cfg.Duration = 400*time.Millisecond, 600*time.Millisecond
			res := runOK(t, cfg)
			checkAccounting(t, res)
			w := res.Warmup
			if w == nil || w.Answered == 0 || res.Answered == 0 {
				t.Fatalf("warm-up %+v, measured answered %d", w, res.Answered)
			}
			if w.Unfinished+w.Dropped+w.Failed+res.Unfinished+res.Dropped+res.Failed != 0 {
				t.Fatalf("a healthy server left requests unanswered: warm-up %+v, measured %+v", w, res)
			}
			s.kill()
			if got, want := s.requests.Load(), w.Answered+res.Answered; got != want {
				t.Errorf("server read %d requests; warm-up %d + measured %d answered = %d", got, w.Answered, res.Answered, want)
			}
		})
	}
}

// The sweep times a request out from its own send, however recently its
// connection made progress, and within one sweep of its deadline.
func TestSweepTimesOutFromEachRequestsOwnSend(t *testing.T) {
	th := newTestThread(t)
	th.r.cfg.Timeout = time.Second
	th.r.cfg.Pipeline = 4
	mine, _ := socketPair(t)
	th.adopt(handoff{fd: mine})
	c := th.conns[0]
	c.state = connActive
	th.acct.books.open++
	const t0 = int64(time.Hour) // any time after the window opened
	for i, at := range []int64{t0, t0 + int64(100*time.Millisecond), t0 + int64(900*time.Millisecond)} {
		c.sendTimes[i] = at
		c.inflight++
	}
	// The first response comes late, 950 ms after its send: progress, but
	// the next request's clock has been running since t0+100ms.
	completeHead(th, c, t0+int64(950*time.Millisecond))
	th.sweep(t0 + int64(1100*time.Millisecond))
	if c.state != connActive {
		t.Fatalf("timed out at exactly the deadline of the oldest request")
	}
	th.sweep(t0 + int64(1100*time.Millisecond) + 1)
	if c.state != connClosed {
		t.Fatalf("the oldest request in flight is past its own deadline but its connection is still open")
	}
	if got := th.acct.books.measured.failedBy[errTimeout]; got != 2 {
		t.Errorf("%d requests failed as timeout, want the 2 in flight", got)
	}
}

// firstDueAtOrAfter finds the schedule index whose due time is the first at
// or after a given time, for any rate and offset.
func TestFirstDueAtOrAfter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var p pacer
		rate := 100 + rng.Float64()*1e6
		p.init(arrival.Constant(rate), arrival.Kind(rng.IntN(2)), 1, 1+rng.IntN(4), 0, 0, 1+rng.IntN(3))
		p.begin(rng.Int64N(1e9))
		ns := rng.Int64N(1e10)
		k := p.firstDueAtOrAfter(ns)
		if p.dueAt(k) < ns || (k > 0 && p.dueAt(k-1) >= ns) {
			t.Fatalf("start %d rate %g: k %d for %d (due %d, previous %d)", p.start, rate, k, ns, p.dueAt(k), p.dueAt(k-1))
		}
	}
}

// newRateTestThread builds an open-loop network thread without a target,
// its window [0, window) on a clock already an hour past it, for driving
// the window's close by hand with injected times.
func newRateTestThread(t *testing.T, rate float64, window time.Duration) *netThread {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Rate, cfg.Pipeline = rate, 16
	kinds, table, err := newKinds(&cfg, "run")
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{cfg: cfg, tmpl: kinds[0].tmpl, kinds: kinds, table: table, base: time.Now().Add(-time.Hour), connReqs: make(chan connRequest, 16)}
	r.windowEnd.Store(int64(window))
	th, err := newNetThread(r, 0)
	if err != nil {
		t.Fatal(err)
	}
	r.threads = []*netThread{th}
	t.Cleanup(th.shutdown)
	return th
}

// The window's close in rate mode, on injected times (issue 24): requests
// due in the window that still wait for a connection keep the drain open,
// are sent when a connection frees up, with their latency from when they
// were due, and are dropped only if the drain ends first. A thread that
// never had a connection in the window drops its whole share.
func TestDrainSendsRequestsWaitingForAConnection(t *testing.T) {
	const (
		rate    = 1000 // one request a millisecond
		window  = time.Second
		closeAt = int64(window)
		ms      = int64(time.Millisecond)
		share   = 1000 // due in the window
	)
	tests := []struct {
		name              string
		scheduling        bool   // the schedule had started (a connection was up in the window)
		k                 uint64 // the next request of the schedule when the window closes
		freeConn          bool   // a connection with room frees up 1 ms into the drain
		connectAfterClose bool   // the thread's first connection completes after the window's end
		finishesAtClose   bool   // the drain is over on the turn that closes the window
		sent, dropped     int64
	}{
		{"nothing waits", true, share, false, false, true, 0, 0},
		{"waiting requests hold the drain open to its end", true, share - 10, false, false, false, 0, 10},
		{"waiting requests are sent when a connection frees up", true, share - 10, true, false, false, 10, 0},
		{"no connection in the whole window", false, 0, false, false, true, 0, share},
		{"first connection after the window's end", false, 0, false, true, true, 0, share},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			th := newRateTestThread(t, rate, window)
			th.pace.scheduling, th.pace.k = tc.scheduling, tc.k
			th.pace.lastNoConn = closeAt - 1 // the waiting requests found every connection busy
			var c *conn
			if tc.freeConn || tc.connectAfterClose {
				mine, _ := socketPair(t)
				th.adopt(handoff{fd: mine})
				c = th.conns[0]
			}
			if tc.connectAfterClose {
				th.finishConnect(c) // the thread's clock is an hour past the window
			}
			th.closeWindow(closeAt) // the turn that finds the window closed
			if th.acct.win.finished != tc.finishesAtClose {
				t.Fatalf("finished %v on the turn that closed the window, want %v", th.acct.win.finished, tc.finishesAtClose)
			}
			m := &th.acct.books.measured
			switch {
			case th.acct.win.finished:
			case tc.freeConn:
				now := closeAt + ms
				c.state = connActive
				th.acct.books.open++
				th.offerFree(c)
				th.schedule(now)
				if th.pace.k != share || c.inflight != 10 {
					t.Fatalf("k %d, %d in flight: want the 10 waiting requests sent and nothing due after the window", th.pace.k, c.inflight)
				}
				th.closeWindow(now)
				if th.acct.win.finished {
					t.Fatalf("the drain ended with requests in flight")
				}
				answered := now + ms
				for c.inflight > 0 {
					completeHead(th, c, answered)
				}
				th.closeWindow(answered)
				if !th.acct.win.finished {
					t.Fatalf("the drain went on with nothing in flight or waiting")
				}
				// Latency from when due (2 to 11 ms), the service time from
				// the send (1 ms).
				if lo, svc := time.Duration(m.hist.Min()), time.Duration(th.acct.books.svc.Max()); m.hist.TotalCount() != 10 || lo < 1900*time.Microsecond || svc > 1100*time.Microsecond {
					t.Errorf("%d latencies, least %v, service time at most %v: want 10 latencies from their due times (>= 2 ms), service 1 ms",
						m.hist.TotalCount(), lo, svc)
				}
				if m.waitedForConn != 10 {
					t.Errorf("waited_for_connection %d, want 10", m.waitedForConn)
				}
			default:
				th.closeWindow(th.acct.win.drainEnd - 1)
				if th.acct.win.finished {
					t.Fatalf("the drain ended before its end with requests waiting")
				}
				th.closeWindow(th.acct.win.drainEnd)
				if !th.acct.win.finished {
					t.Fatalf("the drain outlasted --drain")
				}
			}
			tl := &th.acct.win.tail
			if got := int64(tl.dropTo - tl.dropFrom); got != tc.dropped || m.sent != tc.sent || tl.scheduled != share || len(tl.unfinished) != 0 {
				t.Errorf("dropped %d, sent %d, scheduled %d, unfinished %d; want dropped %d, sent %d, scheduled %d, unfinished 0",
					got, m.sent, tl.scheduled, len(tl.unfinished), tc.dropped, tc.sent, share)
			}
		})
	}
}

// A connection lost during the drain is replaced only while requests due
// in the window wait for one: nothing else is sent after the window.
func TestDrainReplacesConnectionsOnlyForWaitingRequests(t *testing.T) {
	for _, tc := range []struct {
		name    string
		waiting bool
	}{{"requests wait", true}, {"nothing waits", false}} {
		t.Run(tc.name, func(t *testing.T) {
			th := newRateTestThread(t, 1000, time.Second)
			th.r.afterBackoff = func(_ time.Duration, queue func()) { queue() } // the back-off is not under test: ask at once
			th.pace.scheduling, th.pace.k = true, 1000
			if tc.waiting {
				th.pace.k = 990
			}
			mine, _ := socketPair(t)
			th.adopt(handoff{fd: mine, connSlot: 3})
			c := th.conns[0]
			c.state = connActive
			th.acct.books.open++
			c.sendTimes[0], c.sentAt[0] = int64(time.Second)-1, int64(time.Second)-1
			c.inflight = 1 // the drain waits for it
			th.closeWindow(int64(time.Second))
			if th.acct.win.finished {
				t.Fatalf("the drain ended with a request in flight")
			}
			th.failConn(c, int64(time.Second)+1, errReset)
			if got := len(th.r.connReqs); got != map[bool]int{true: 1, false: 0}[tc.waiting] {
				t.Errorf("%d replacements asked, want one only while requests wait", got)
			}
		})
	}
}

func readHDRLog(t *testing.T, path string) []*hdrhistogram.Histogram {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reader := hdrhistogram.NewHistogramLogReader(f)
	var out []*hdrhistogram.Histogram
	for {
		h, err := reader.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("hdr log: %v", err)
		}
		if h == nil {
			return out
		}
		out = append(out, h)
	}
}

// The drain lets the requests in flight when the window closes finish
// (counted as answered, with their real latency); what is still in flight
// when it ends is unfinished. It never outlasts --timeout.
func TestDrain(t *testing.T) {
	const delay = 300 * time.Millisecond
	for _, tc := range []struct {
		drain          time.Duration
		wantUnfinished bool
	}{{time.Second, false}, {50 * time.Millisecond, true}} {
		t.Run(tc.drain.String(), func(t *testing.T) {
			s := startTestServer(t, "tcp", func(s *testServer) { s.delay = delay })
			cfg := testConfig(s)
			cfg.Drain = tc.drain
			cfg.Duration = 700 * time.Millisecond
			res := runOK(t, cfg)
			checkAccounting(t, res)
			if got := res.Unfinished > 0; got != tc.wantUnfinished || (!got && res.Unfinished != 0) {
				t.Errorf("--drain %v with %v responses: unfinished %d", tc.drain, delay, res.Unfinished)
			}
			if tc.wantUnfinished && res.Unfinished > int64(cfg.Concurrency) {
				t.Errorf("unfinished %d, more than the %d requests in flight", res.Unfinished, cfg.Concurrency)
			}
		})
	}
	cfg := DefaultConfig()
	cfg.Drain, cfg.Timeout = 5*time.Second, 2*time.Second
	if cfg.drain() != 2*time.Second {
		t.Errorf("drain %v with --drain 5s --timeout 2s, want the timeout", cfg.drain())
	}
}

func TestVerdict(t *testing.T) {
	tests := []struct {
		name     string
		res      result.Result
		max      int64
		outcome  result.Outcome
		verdict  string
		inReason string
	}{
		{"clean", result.Result{Requests: 10, Answered: 10, Due: 10}, 0, result.OutcomePass, "ok: every due request answered", ""},
		{"within", result.Result{Requests: 10, Answered: 10, Unfinished: 2, Due: 12}, 5, result.OutcomePass, "not clean", ""},
		{"unfinished over", result.Result{Requests: 10, Answered: 10, Unfinished: 2, Dropped: 1, Due: 13}, 0, result.OutcomeFail, "FAILED", "unfinished 2 + dropped 1"},
		{"failed over", result.Result{Requests: 10, Answered: 10, Failed: 3, Errors: 3, Due: 13}, 2, result.OutcomeFail, "FAILED", "failed 3"},
		{"non-2xx over", result.Result{Requests: 10, Answered: 10, Errors: 10, Due: 10}, 0, result.OutcomeFail, "FAILED", "other errors 10"},
		{"no responses", result.Result{}, 0, result.OutcomeFail, "no responses", "no responses"},
		{"interrupted", result.Result{Interrupted: true, Unfinished: 5}, 0, result.OutcomeInterrupted, "interrupted", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outcome, verdict, reason := result.Verdict(&tt.res, tt.max)
			if outcome != tt.outcome || !strings.Contains(verdict, tt.verdict) || !strings.Contains(reason, tt.inReason) || (tt.inReason == "") != (reason == "") {
				t.Errorf("Verdict = %d, %q, %q", outcome, verdict, reason)
			}
		})
	}
}

// A server stall that straddles the window's end (issue 24): the requests
// due in the window that still wait for a connection when it closes are
// sent during the drain, and their latency counts from when they were due.
// Only what the drain cannot send, or see answered, is dropped or
// unfinished. The window opens at --start-at so the stall can be placed
// around its end; nothing below depends on how fast the machine is: the
// first case's drain is far longer than sending a few dozen requests takes,
// and the second case's server never answers the held requests.
func TestStallAcrossWindowEnd(t *testing.T) {
	const (
		rate     = 200 // one request every 5 ms
		conns    = 4
		duration = 600 * time.Millisecond
		before   = 200 * time.Millisecond // of the stall, before the window's end
		stall    = 300 * time.Millisecond // so it ends 100 ms into the drain
		slack    = 10 * time.Millisecond  // the wall clock against the monotonic one (vegeta's timestamps)
	)
	tests := []struct {
		name  string
		drain time.Duration
		hold  bool // the stall outlasts the drain: the server never answers what arrives from the stall on
	}{
		{"answered within the drain", 5 * time.Second, false},
		{"stall outlasts the drain", 300 * time.Millisecond, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The load starts half a second before the window (the
			// warm-up), so the connections, and with them the schedule,
			// are up when it opens even on a loaded machine; the wait
			// before that leaves room for the preflight.
			startAt := time.Now().Add(1500 * time.Millisecond)
			windowEnd := startAt.Add(duration)
			stallFrom, stallTo := windowEnd.Add(-before), windowEnd.Add(stall-before)
			s := startTestServer(t, "tcp", func(s *testServer) {
				// By arrival: a request that arrives from stallFrom on is
				// answered no earlier than stallTo (never, with hold).
				s.decide = func(int64) reply {
					now := time.Now()
					switch {
					case now.Before(stallFrom):
						return reply{}
					case tc.hold:
						return reply{act: actHold}
					case now.Before(stallTo):
						return reply{delay: stallTo.Sub(now)}
					}
					return reply{}
				}
			})
			cfg := testConfig(s)
			cfg.Rate, cfg.Concurrency = rate, conns
			cfg.StartAt, cfg.Warmup, cfg.Duration, cfg.StatsInterval = startAt, 500*time.Millisecond, duration, 200*time.Millisecond
			cfg.Drain, cfg.Timeout = tc.drain, 10*time.Second
			cfg.VegetaMax = 1_000_000
			res := runOK(t, cfg)
			checkAccounting(t, res)
			// At most rate x duration (fewer only if the schedule started
			// late, which checkAccounting's books would still balance).
			if want := rate * duration.Seconds(); float64(res.Due) > want+2 {
				t.Errorf("due %d, more than rate x duration = %.0f", res.Due, want)
			}
			// The stall straddled the end: of the ~40 requests due in its
			// part of the window, at most one per connection could be sent
			// before the window closed.
			var stalled []vegeta.Result
			for _, r := range vegetaOf(t, res) {
				if !r.Timestamp.Before(stallFrom) && r.Timestamp.Before(windowEnd) {
					stalled = append(stalled, r)
				}
			}
			if len(stalled) < 30 {
				t.Fatalf("%d requests due between the stall's start and the window's end, want about %.0f",
					len(stalled), rate*before.Seconds())
			}
			outcome, verdict, _ := result.Verdict(res, 0)
			if tc.hold {
				// One held request on each connection; the rest never
				// found a connection before the drain ended.
				if res.Unfinished != conns || res.Dropped < int64(len(stalled))-conns-1 || res.Failed != 0 {
					t.Errorf("unfinished %d, dropped %d, failed %d: want %d unfinished and the other ~%d dropped",
						res.Unfinished, res.Dropped, res.Failed, conns, len(stalled)-conns)
				}
				if res.LowerBounds != res.Unfinished+res.Dropped {
					t.Errorf("lower bounds %d, want unfinished + dropped = %d", res.LowerBounds, res.Unfinished+res.Dropped)
				}
				if outcome != result.OutcomeFail {
					t.Errorf("outcome %d (%s), want a failure", outcome, verdict)
				}
				return
			}
			if res.Dropped != 0 || res.Unfinished != 0 || res.Failed != 0 || outcome != result.OutcomePass {
				t.Errorf("dropped %d, unfinished %d, failed %d, outcome %d (%s): the server answered everything within the drain",
					res.Dropped, res.Unfinished, res.Failed, outcome, verdict)
			}
			// Each stalled request was answered no earlier than the stall's
			// end, and its latency counts from when it was due, not from
			// its late send: intended time + latency reaches the stall's end.
			var bad int
			var first string
			for _, r := range stalled {
				var why string
				if r.Error != "" || r.Code != 200 {
					why = fmt.Sprintf("code %d, error %q", r.Code, r.Error)
				} else if end := r.Timestamp.Add(r.Latency); end.Before(stallTo.Add(-slack)) {
					why = fmt.Sprintf("latency %v ends %v before the stall did (measured from its send?)", r.Latency, stallTo.Sub(end))
				}
				if why != "" && bad == 0 {
					first = fmt.Sprintf("due %v after the stall began: %s", r.Timestamp.Sub(stallFrom), why)
				}
				if why != "" {
					bad++
				}
			}
			if bad > 0 {
				t.Errorf("%d of the %d requests due in the stall were not answered after it with their latency from when due; first: %s",
					bad, len(stalled), first)
			}
			// The first request due in the stall waited all of it, less
			// at most a schedule interval, and the histogram shows it.
			if maxLat := time.Duration(res.Latency.Max); maxLat < stall-2*time.Second/rate {
				t.Errorf("max latency %v, want the %v stall", maxLat, stall)
			}
			if res.WaitedForConn < int64(len(stalled))-conns-1 {
				t.Errorf("waited_for_connection %d, want the ~%d requests queued behind the stall", res.WaitedForConn, len(stalled)-conns)
			}
		})
	}
}

// A window of a few milliseconds (a run whose data file ran out at once)
// is too short to judge the client's CPU: its start's and drain's work
// would read as several cores busy. It says so instead of flagging the
// client as the bottleneck; a longer window is judged as always.
func TestClientCPUNotJudgedOverATinyWindow(t *testing.T) {
	for _, tc := range []struct {
		window float64
		bound  bool
	}{{0.003, false}, {1, true}} {
		c := &collector{r: &runner{cfg: DefaultConfig()}}
		res := &result.Result{DurationS: tc.window, Requests: 3, ClientCPUFraction: 3, BusiestThreadCPU: 0.3}
		c.judgeClient(res)
		short := strings.Contains(strings.Join(res.Warnings, "\n"), "too short to judge")
		if res.ClientBound != tc.bound || short == tc.bound {
			t.Errorf("window %gs: client bound %v, warnings %q; want bound %v", tc.window, res.ClientBound, res.Warnings, tc.bound)
		}
	}
}
