package loadtester

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Accounting (issue 12): every request due in the measured window ends in
// exactly one of answered, failed, unfinished and dropped, and a server
// that stops answering shows in the counts, the tail and the exit status.

// mainJSON runs Main with args plus --json and returns its exit status and
// the result it wrote.
func mainJSON(t *testing.T, args ...string) (int, *Result, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "r.json")
	var out, errOut bytes.Buffer
	code := Main(append(args, "--json", path), &out, &errOut)
	res, err := ReadResult(path)
	if err != nil {
		t.Fatalf("exit %d, no result: %v\nstdout: %s\nstderr: %s", code, err, out.String(), errOut.String())
	}
	return code, res, out.String() + errOut.String()
}

// checkAccounting asserts what every result must satisfy: the four counts
// add up to the due requests, each interval's counts add up to the totals,
// and the latency histogram holds each answered, unfinished and dropped
// request once.
func checkAccounting(t *testing.T, res *Result) {
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
	s.holdFrom.Store(time.Now().Add(warmup + answered).UnixNano())
	hlog := filepath.Join(t.TempDir(), "r.hlog")
	code, res, out := mainJSON(t, "--port", strconv.Itoa(s.port()), "--rate", strconv.Itoa(rate),
		"--duration", duration.String(), "--warmup", warmup.String(), "--concurrency", "50",
		"--timeout", "30", "--stats-interval", interval.String(), "--hdr-log", hlog)
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
	held := (duration - answered).Seconds() * rate
	if got := float64(res.Unfinished + res.Dropped); got < held*0.95 || got > held*1.05 {
		t.Errorf("unfinished %d + dropped %d = %.0f, want about %.0f (rate x held time)", res.Unfinished, res.Dropped, got, held)
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
	if code != ExitFailure {
		t.Errorf("exit %d, want %d with the default --max-errors\n%s", code, ExitFailure, out)
	}
}

// The closed loop: the held requests are the connections x pipeline depth.
func TestStallAtEndClosedLoop(t *testing.T) {
	const conns, depth = 8, 2
	s := startTestServer(t, "tcp", nil)
	s.holdFrom.Store(time.Now().Add(200*time.Millisecond + 700*time.Millisecond).UnixNano())
	code, res, out := mainJSON(t, "--port", strconv.Itoa(s.port()), "--concurrency", strconv.Itoa(conns),
		"--pipeline", strconv.Itoa(depth), "--duration", "1.5", "--warmup", "0.2", "--timeout", "30",
		"--stats-interval", "0.5")
	checkAccounting(t, res)
	if res.Unfinished != conns*depth || res.Dropped != 0 || res.Answered == 0 {
		t.Errorf("unfinished %d, dropped %d, answered %d: want %d unfinished (connections x depth), 0 dropped",
			res.Unfinished, res.Dropped, res.Answered, conns*depth)
	}
	if code != ExitFailure {
		t.Errorf("exit %d, want %d\n%s", code, ExitFailure, out)
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
			_, res, _ := mainJSON(t, "--port", strconv.Itoa(s.port()), "--rate", strconv.Itoa(rate),
				"--duration", "2", "--warmup", "0.3", "--concurrency", "50", "--timeout", "5", "--stats-interval", "0.5")
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
			cfg.Vegeta = filepath.Join(t.TempDir(), "r.bin")
			res := runOK(t, cfg)
			checkAccounting(t, res)
			results := readVegeta(t, cfg.Vegeta)
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
	cfg.Vegeta = filepath.Join(t.TempDir(), "r.bin")
	res := runOK(t, cfg)
	if res.ErrorsByKind["timeout"] == 0 {
		t.Fatalf("no timeout: %v", res.ErrorsByKind)
	}
	var longest time.Duration
	for _, r := range readVegeta(t, cfg.Vegeta) {
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
	th.open++
	const t0 = int64(time.Hour) // any time after the window opened
	for i, at := range []int64{t0, t0 + int64(100*time.Millisecond), t0 + int64(900*time.Millisecond)} {
		c.sendTimes[i] = at
		c.inflight++
	}
	// The first response comes late, 950 ms after its send: progress, but
	// the next request's clock has been running since t0+100ms.
	th.complete(c, t0+int64(950*time.Millisecond))
	th.sweep(t0 + int64(1100*time.Millisecond))
	if c.state != connActive {
		t.Fatalf("timed out at exactly the deadline of the oldest request")
	}
	th.sweep(t0 + int64(1100*time.Millisecond) + 1)
	if c.state != connClosed {
		t.Fatalf("the oldest request in flight is past its own deadline but its connection is still open")
	}
	if got := th.stats.failedBy[errTimeout]; got != 2 {
		t.Errorf("%d requests failed as timeout, want the 2 in flight", got)
	}
}

// firstDueAtOrAfter finds the schedule index whose due time is the first at
// or after a given time, for any rate and offset.
func TestFirstDueAtOrAfter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		th := &netThread{schedStart: rng.Int64N(1e9), interval: 1 + rng.Float64()*1e7}
		ns := rng.Int64N(1e10)
		k := th.firstDueAtOrAfter(ns)
		if th.dueAt(k) < ns || (k > 0 && th.dueAt(k-1) >= ns) {
			t.Fatalf("start %d interval %g: k %d for %d (due %d, previous %d)", th.schedStart, th.interval, k, ns, th.dueAt(k), th.dueAt(k-1))
		}
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
		res      Result
		max      int64
		code     int
		verdict  string
		inReason string
	}{
		{"clean", Result{Requests: 10, Answered: 10, Due: 10}, 0, ExitOK, "ok: every due request answered", ""},
		{"within", Result{Requests: 10, Answered: 10, Unfinished: 2, Due: 12}, 5, ExitOK, "not clean", ""},
		{"unfinished over", Result{Requests: 10, Answered: 10, Unfinished: 2, Dropped: 1, Due: 13}, 0, ExitFailure, "FAILED", "unfinished 2 + dropped 1"},
		{"failed over", Result{Requests: 10, Answered: 10, Failed: 3, Errors: 3, Due: 13}, 2, ExitFailure, "FAILED", "failed 3"},
		{"non-2xx over", Result{Requests: 10, Answered: 10, Errors: 10, Due: 10}, 0, ExitFailure, "FAILED", "other errors 10"},
		{"no responses", Result{}, 0, ExitFailure, "no responses", "no responses"},
		{"interrupted", Result{Interrupted: true, Unfinished: 5}, 0, ExitInterrupted, "interrupted", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, verdict, reason := Verdict(&tt.res, tt.max)
			if code != tt.code || !strings.Contains(verdict, tt.verdict) || !strings.Contains(reason, tt.inReason) || (tt.inReason == "") != (reason == "") {
				t.Errorf("Verdict = %d, %q, %q", code, verdict, reason)
			}
		})
	}
}
