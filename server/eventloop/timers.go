// The loop's clock and deadlines: one monotonic clock read per turn, and
// the backend's wait timeout computed from the nearest deadline, so an idle loop
// sleeps until an event or its next deadline and never polls. Loop
// goroutine only.

package eventloop

import (
	"time"

	"weaseldb/internal/monoclock"
)

// SetTimer makes the loop run a turn at or soon after at (loop goroutine
// only; it replaces the previous timer; the zero time clears it). The
// handler re-arms it from OnTurnEnd: a loop without a timer sleeps until an
// event, so a handler with nothing due costs no wake-ups.
func (l *Loop) SetTimer(at time.Time) {
	if at.IsZero() {
		l.timerAt = 0
		return
	}
	l.timerAt = max(1, int64(at.Sub(monoBase)))
}

// monoNow is the loop's clock: monotonic nanoseconds since monoBase, read
// once a turn and once a response a Sender writes, so one plain reading
// of the runtime's clock (internal/monoclock) rather than a time.Since.
func monoNow() int64 { return monoclock.Now() - monoOrigin }

// monoBase is the loop clock's zero as a time (SetTimer converts with it);
// monoOrigin is the same instant on monoclock's scale, to within the few
// nanoseconds between the two reads that find it.
var (
	monoBase   = time.Now()
	monoOrigin = monoclock.Now() - int64(time.Since(monoBase))
)

// waitTimeout is -1 (sleep until an event) unless work is queued or a
// deadline (connection timeouts, linger, accept back-off, shutdown, the
// handler's timer) is due: no periodic wake-ups.
func (l *Loop) waitTimeout() int {
	if len(l.ready) > 0 || l.wakePending.Load() != 0 {
		return 0
	}
	next := int64(-1)
	consider := func(t int64) {
		if t > 0 && (next < 0 || t < next) {
			next = t
		}
	}
	for i, t := range l.lnResume {
		if !l.lnActive[i] && !l.stopSeen {
			consider(t)
		}
	}
	if l.stopSeen {
		consider(l.deadline)
	}
	consider(l.timerAt)
	consider(l.nextTimeout())
	if next < 0 {
		return -1
	}
	ms := (next-monoNow())/int64(time.Millisecond) + 1
	if ms < 0 {
		ms = 0
	}
	return int(min(ms, 1<<30))
}

func (l *Loop) runTimers() {
	if len(l.timeouts) > 0 && l.timeouts[0].filedAt <= l.now {
		l.expireTimeouts()
	}
	if !l.anyListenerPaused() && !l.stopSeen {
		return
	}
	now := l.now
	if !l.stopSeen {
		for i, t := range l.lnResume {
			if !l.lnActive[i] && t > 0 && now >= t {
				l.lnResume[i] = 0
				if err := l.addListener(i); err != nil {
					l.lnResume[i] = now + int64(l.opt.AcceptBackoff)
				}
			}
		}
	}
	if l.stopSeen && l.deadline > 0 && now >= l.deadline {
		for _, c := range l.conns {
			if c != nil {
				l.closeConn(c)
			}
		}
	}
}
