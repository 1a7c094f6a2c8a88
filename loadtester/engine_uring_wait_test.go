package loadtester

import (
	"testing"
	"time"

	"weaseldb/loadtester/arrival"
)

// The io_uring engine's wait in the open loop asks for more completions
// than can come while the next send is near and a connection is free for
// it, so the thread sleeps through the responses to its next send (the
// kernel side: internal/uring's TestWaitForMoreSleepsThroughCompletions);
// otherwise, and always in the closed loop, it ends at the first
// completion beyond the turn's sends.
func TestUringWaitSleepsThroughResponsesInTheOpenLoop(t *testing.T) {
	const ms = int64(time.Millisecond)
	tests := []struct {
		name    string
		setup   func(th *netThread)
		timeout int64
		lazy    bool
	}{
		{"open loop, next send near, a connection free", nil, ms / 10, true},
		{"closed loop", func(th *netThread) { th.pace.open = false }, ms / 10, false},
		{"no wait", nil, 0, false},
		{"next send too far", nil, maxLazyRead + 1, false},
		{"no send pending", func(th *netThread) { th.pace.wakeAt = 0 }, ms / 10, false},
		{"no connection free", func(th *netThread) { th.pace.free = nil }, ms / 10, false},
		{"window closing", func(th *netThread) { th.win.closing = true }, ms / 10, false},
		{"a connection owed reads", func(th *netThread) { th.ready = append(th.ready, th.conns[0]) }, ms / 10, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := newRateTestThread(t, 1000, time.Second)
			th.pace.init(arrival.Constant(1000), arrival.Even, 0, 1, 0, 0, 0)
			mine, _ := socketPair(t)
			th.adopt(handoff{fd: mine, connSlot: 0})
			c := th.conns[0]
			c.state = connActive
			th.offerFree(c)
			th.pace.begin(0)
			th.pace.wakeAt = ms / 10
			if tt.setup != nil {
				tt.setup(th)
			}
			e := &uringEngine{t: th, expect: 3}
			got := e.waitCount(tt.timeout)
			want := uint32(4) // the turn's 3 sends, plus one
			if tt.lazy {
				want = lazyWaitCount
			}
			if got != want {
				t.Errorf("waits for %d completions, want %d", got, want)
			}
		})
	}
}
