package loadtester

import (
	"weaseldb/loadtester/arrival"

	"bytes"
	"math"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The pacer sends every request that has come due in one pass per wake,
// and sleeps on its own clock until the last request within the send slack
// of the next one: on injected times, each pass sends batch+1 requests
// (batch = slack / interval, whole; the first pass, when the schedule
// starts, sends the one request due then), no request goes more than the slack
// after it was due, the last of a pass goes on time, and nothing goes
// early.
func TestPacerBatchesWithinTheSlack(t *testing.T) {
	tests := []struct {
		name      string
		rate      float64
		slack     time.Duration
		wantBatch uint64 // later requests a wake waits for
	}{
		{"no slack: a wake per request", 50_000, 0, 0},
		{"50 µs at 50k/s: three a pass", 50_000, 50 * time.Microsecond, 2},
		{"slack shorter than the interval: on time", 10_000, 50 * time.Microsecond, 0},
		{"100 µs at 200k/s: 21 a pass", 200_000, 100 * time.Microsecond, 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := newRateTestThread(t, tt.rate, time.Second)
			th.pace.init(arrival.Constant(tt.rate), arrival.Even, 0, 1, 0, int64(tt.slack), 0)
			if th.pace.batch != tt.wantBatch {
				t.Fatalf("batch %d, want %d", th.pace.batch, tt.wantBatch)
			}
			var conns []*conn
			for i := range 4 {
				mine, _ := socketPair(t)
				th.adopt(handoff{fd: mine, connSlot: i})
				c := th.conns[i]
				c.state = connActive
				th.acct.books.open++
				th.offerFree(c)
				conns = append(conns, c)
			}
			th.pace.begin(0)
			const n = 600 // requests to send, a whole number of passes in every case
			now, passes := int64(0), 0
			for th.pace.k < n {
				k0 := th.pace.k
				th.schedule(now)
				passes++
				sent := th.pace.k - k0
				for _, c := range conns {
					for j := range c.inflight {
						i := (c.head + j) & c.mask
						due, at := c.sendTimes[i], c.sentAt[i]
						if at < due || at-due > int64(tt.slack) {
							t.Fatalf("a request due at %d went at %d: want no earlier and at most %v late", due, at, tt.slack)
						}
					}
					for c.inflight > 0 {
						completeHead(th, c, now)
					}
					th.offerFree(c)
				}
				if want := tt.wantBatch + 1; passes == 1 && sent != 1 || passes > 1 && sent != want && th.pace.k < n {
					t.Fatalf("pass %d at %d sent %d requests, want %d (1 on the first)", passes, now, sent, want)
				}
				if last := th.pace.dueAt(th.pace.k - 1); last != now && sent > 0 {
					t.Fatalf("the last request of the pass at %d was due at %d: want it on time", now, last)
				}
				next := th.pace.wakeAt
				if want := th.pace.dueAt(th.pace.k + tt.wantBatch); next != want {
					t.Fatalf("wakes at %d, want %d (the due time of request k+%d)", next, want, tt.wantBatch)
				}
				now = next
			}
			if want := 1 + int(math.Ceil(float64(n-1)/float64(tt.wantBatch+1))); passes != want {
				t.Errorf("%d passes for %d requests, want %d", passes, n, want)
			}
		})
	}
}

// Where the kernel lacks epoll_pwait2 (before 5.11) a timerfd wakes the
// loop for its sends and waits time out in milliseconds: the open loop
// still keeps its schedule and accounts for every due request.
func TestOpenLoopTimerfdFallback(t *testing.T) {
	probePwait2 = func(int) bool { return false }
	defer func() { probePwait2 = havePwait2 }()
	s := startTestServer(t, "tcp", nil)
	cfg := testConfig(s)
	cfg.Rate, cfg.Warmup, cfg.Duration, cfg.NetworkThreads = 400, 200*time.Millisecond, 500*time.Millisecond, 2
	res := runOK(t, cfg)
	if res.Due != 200 || res.Answered != res.Due || !res.Clean() {
		t.Errorf("due %d (want 200) = answered %d + failed %d + unfinished %d + dropped %d", res.Due, res.Answered, res.Failed, res.Unfinished, res.Dropped)
	}
}

// --burst N: requests fall due N at a time, N/rate apart, so one pass
// sends a whole burst and, on one connection with room, in one write
// (the gate's cost tier: the server reads each burst at once).
func TestPacerBursts(t *testing.T) {
	const rate, burst = 1600.0, 16
	th := newRateTestThread(t, rate, time.Second)
	th.pace.init(arrival.Constant(rate), arrival.Even, 0, 1, 0, 0, burst)
	mine, peer := socketPair(t)
	th.adopt(handoff{fd: mine, connSlot: 0})
	c := th.conns[0]
	c.state = connActive
	th.acct.books.open++
	th.offerFree(c)
	th.pace.begin(0)
	interval := int64(1e9 / rate)
	buf := make([]byte, 1<<16)
	now := int64(0)
	for pass := range 4 {
		k0 := th.pace.k
		th.schedule(now)
		if sent := th.pace.k - k0; sent != burst {
			t.Fatalf("pass %d at %d sent %d, want a burst of %d", pass, now, sent, burst)
		}
		if want := now + burst*interval; th.pace.wakeAt != want {
			t.Fatalf("pass %d wakes at %d, want %d (the next burst's due time)", pass, th.pace.wakeAt, want)
		}
		n, err := unix.Read(peer, buf)
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.Count(buf[:n], []byte("GET ")); got != burst {
			t.Fatalf("pass %d: the first read holds %d requests, want all %d (one write)", pass, got, burst)
		}
		for c.inflight > 0 {
			completeHead(th, c, now)
		}
		th.offerFree(c)
		now = th.pace.wakeAt
	}
}
