// Seed 001's two reactor details on the io_uring backend, both off by
// default (docs/io_uring.md has what they were measured to cost and gain):
//
//   - a completion peek: a loop about to block in io_uring_enter looks for
//     completions for Options.UringPeek first, with non-blocking enters
//     (the ring defers its task work to this thread, so a completion shows
//     up in the queue only when the thread enters the kernel: reading the
//     queue's tail alone would never see one), and blocks only if none
//     came;
//   - a round budget: a turn handles at most Options.UringRoundBudget
//     completions, then the loop serves its timers, its posts and the
//     turn's end (the pipeline's push) before it takes the rest, without
//     blocking.
//
// Owner: the loop goroutine, as for the rest of the backend.

package eventloop

import (
	"fmt"
	"time"
)

// roundTimeout is the turn's wait: none while completions are left from a
// round cut short by the budget, or once the peek found some.
func (u *uringBackend) roundTimeout(timeout time.Duration) time.Duration {
	if u.backlog {
		return 0
	}
	if timeout != 0 && u.l.opt.UringPeek > 0 && u.peek(u.l.opt.UringPeek) {
		return 0
	}
	return timeout
}

// peek submits what is queued and enters without waiting until a
// completion is ready or d passed; it says whether one is.
func (u *uringBackend) peek(d time.Duration) bool {
	deadline := monoNow() + int64(d)
	for {
		if _, err := u.ring.Submit(); err != nil {
			panic(fmt.Sprintf("io_uring_enter: %v", err))
		}
		if u.ring.Ready() > 0 {
			return true
		}
		if monoNow() >= deadline {
			return false
		}
	}
}
