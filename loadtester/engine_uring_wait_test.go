package loadtester

import (
	"testing"
	"time"

	"weaseldb/loadtester/arrival"
)

// The io_uring engine's wait in the open loop, while the next send is near
// and a connection is free for it, asks for a completion per connection a
// response is due on (beside the turn's sends' own), so the thread wakes
// once for a pass's responses, or at its next send, not per response (the
// kernel side: internal/uring's TestWaitForMoreSleepsThroughCompletions).
// Once the kernel stamps its responses (multishot recvmsg), it sleeps
// through them all to its next send, as the epoll engine's lazy reads do.
// Otherwise, and always in the closed loop, the first completion beyond
// the turn's sends ends it.
func TestUringWaitWakesOncePerBatchOfResponses(t *testing.T) {
	const near = int64(100 * time.Microsecond)
	var stamping bool // set by a case's setup
	tests := []struct {
		name     string
		setup    func(th *netThread)
		timeout  int64
		awaiting int    // connections a response is due on
		sendsNow uint32 // this turn's sends to connections not awaiting one
		want     uint32 // beside the turn's 3 sends' completions
	}{
		{"open loop: every due response", nil, near, 5, 2, 7},
		{"open loop, nothing due: the next send", nil, near, 0, 0, 1},
		{"open loop, responses stamped by the kernel: the next send", func(th *netThread) { stamping = true }, near, 5, 2, lazyWaitCount - 3},
		{"closed loop, stamped", func(th *netThread) { stamping, th.pace.open = true, false }, near, 5, 2, 1},
		{"closed loop: the first", func(th *netThread) { th.pace.open = false }, near, 5, 2, 1},
		{"no wait", nil, 0, 5, 2, 1},
		{"next send beyond the lazy reads' bound", nil, maxLazyRead + 1, 5, 2, 1},
		{"no send pending", func(th *netThread) { th.pace.wakeAt = 0 }, near, 5, 2, 1},
		{"no connection free", func(th *netThread) { th.pace.free = nil }, near, 5, 2, 1},
		{"window closing", func(th *netThread) { th.acct.win.closing = true }, near, 5, 2, 1},
		{"a connection owed reads", func(th *netThread) { th.ready = append(th.ready, th.conns[0]) }, near, 5, 2, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stamping = false
			th := newRateTestThread(t, 1000, time.Second)
			th.pace.init(arrival.Constant(1000), arrival.Even, 0, 1, 0, near, 0)
			mine, _ := socketPair(t)
			th.adopt(handoff{fd: mine, connSlot: 0})
			c := th.conns[0]
			c.state = connActive
			th.offerFree(c)
			th.pace.begin(0)
			th.pace.wakeAt = near
			if tt.setup != nil {
				tt.setup(th)
			}
			e := &uringEngine{t: th, expect: 3, awaiting: tt.awaiting, sendsNow: tt.sendsNow, stamping: stamping}
			if got := e.waitCount(tt.timeout); got != 3+tt.want {
				t.Errorf("waits for %d completions, want %d", got, 3+tt.want)
			}
		})
	}
}

// The count of connections a response is due on follows their sends and
// input: up when a connection's bytes all went out, down when input (or
// its end) came or it closed, once per connection whatever the number of
// sends or receives.
func TestUringAwaitingFollowsSendsAndInput(t *testing.T) {
	th := newRateTestThread(t, 1000, time.Second)
	e := &uringEngine{t: th}
	a, b := &conn{}, &conn{}
	steps := []struct {
		do   func()
		want int
	}{
		{func() { e.sentAll(a) }, 1},
		{func() { e.sentAll(a) }, 1}, // a second send on a: still one response due
		{func() { e.sentAll(b) }, 2},
		{func() { e.answered(a) }, 1},
		{func() { e.answered(a) }, 1}, // more input on a: nothing more
		{func() { e.answered(b) }, 0},
	}
	for i, st := range steps {
		st.do()
		if e.awaiting != st.want {
			t.Fatalf("step %d: %d awaiting, want %d", i, e.awaiting, st.want)
		}
	}
}
