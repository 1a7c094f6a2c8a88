package loadtester

import (
	"math"

	"golang.org/x/sys/unix"

	"weaseldb/loadtester/arrival"
)

// Open loop (--rate), hand-written like the rest of the loop. Each thread
// owns an even share of the rate: its k-th request is due at
// start + k*interval, whatever happened before. A request that finds no
// free connection waits, and its latency still counts from its due time, so
// a stalled server shows up as latency (no coordinated omission).
//
// What the open loop costs the client is wake-ups, not sends: profiled
// against weaseldb, the time went to the context switch of each blocking
// epoll wait (finish_task_switch, the socket wake-up) and to the timerfd
// re-armed and read on every wake, not to anything spinning in user space.
// A loop that woke for each request's exact due time paid a wake per
// request on top of the one its response costs. So the loop sleeps on its
// own clock (epoll_pwait2's nanosecond timeout, no timerfd), and a wake
// that the next request alone would trigger is put off by up to the send
// slack (Config.SendSlack) when later requests fall due within it: they all
// go in one pass. No request is sent more than the slack after it was due
// while a connection is free (plus the kernel's own wake-up delay), and
// its latency is still counted from its due time, so the slack shows in
// the corrected latency and never flatters it.
//
// When each request falls due is the arrival package's: a constant rate or
// a ramp (--stages), evenly spaced or Poisson (--arrival), each thread
// with its share of the schedule.

// pacer is one network thread's open-loop schedule and the connections it
// may send on (loop thread only). In the closed loop it is off.
type pacer struct {
	open       bool              // the open loop: requests are paced
	tfd        int               // timerfd, only where epoll_pwait2 is missing (kernel < 5.11); -1: none
	start      int64             // the schedule's origin once scheduling (the loop's clock)
	scheduling bool              // the first connection is up: requests are being scheduled
	sched      *arrival.Schedule // this thread's intended sends, ns from start
	slack      int64             // Config.SendSlack, ns
	batch      uint64            // how many later requests a wake may wait for: floor(slack × peak rate per thread)
	burst      uint64            // requests falling due together (Config.Burst; at least 1)
	k          uint64            // index of the next intended send
	free       []*conn           // connections that had room when last seen (stale entries dropped on pick)
	dirty      []*conn           // connections with requests queued this turn, to flush
	lastNoConn int64             // when the schedule last found every connection busy
	wakeAt     int64             // when the loop must next wake to send (0: no send pending)
	armedFor   int64             // timerfd fallback: the time the timer is set for (0: none)
}

// init sets thread id's share of the schedule (prof's rate over threads,
// arriving as kind from seed), how far a wake may be put off (slack ns) and
// how many requests fall due together (burst).
func (p *pacer) init(prof *arrival.Profile, kind arrival.Kind, seed uint64, threads, id int, slack int64, burst int) {
	p.open = true
	p.burst = uint64(max(burst, 1))
	p.sched = arrival.NewSchedule(prof, kind, seed, threads, id)
	p.slack = max(slack, 0)
	p.batch = uint64(float64(p.slack) * prof.Peak() / 1e9 / float64(threads))
}

// on reports whether this is the open loop.
func (p *pacer) on() bool { return p.open }

// begin starts the schedule at now.
func (p *pacer) begin(now int64) {
	p.scheduling = true
	p.start = now
}

// dueAt is the intended send time of this thread's k-th request: the
// first of its burst's (math.MaxInt64 past the schedule's end).
func (p *pacer) dueAt(k uint64) int64 {
	if p.burst > 1 {
		k -= k % p.burst
	}
	at := p.sched.At(k)
	if at == arrival.Never {
		return math.MaxInt64
	}
	return p.start + at
}

// firstDueAtOrAfter is the index of the schedule's first request due at or
// after ns.
func (p *pacer) firstDueAtOrAfter(ns int64) uint64 {
	if ns <= p.start {
		return 0
	}
	k := p.sched.Index(ns - p.start) // exact but for bursts, which start earlier
	for k > 0 && p.dueAt(k-1) >= ns {
		k--
	}
	for p.dueAt(k) < ns {
		k++
	}
	return k
}

// nextWake is when the loop wakes to send request k, due at due: the due
// time of the last request within the slack of it, so that one pass sends
// them all (request k then goes at most the slack late, the last on time
// at a constant rate), but never after closeAt, where the window closes.
// Where the rate is below its peak (a ramp, Poisson gaps) the batch's last
// request may lie past the slack: the wake is then at the slack's end.
func (p *pacer) nextWake(due, closeAt int64) int64 {
	at := due
	if p.batch > 0 {
		at = min(p.dueAt(p.k+p.batch), due+p.slack)
	}
	return max(due, min(at, closeAt))
}

// arm makes the timerfd fire at due (relative: the loop's clock and
// CLOCK_MONOTONIC share no origin). Only where epoll_pwait2 is missing.
func (p *pacer) arm(due, now int64) {
	if p.armedFor == due {
		return
	}
	p.armedFor = due
	if due == 0 {
		unix.TimerfdSettime(p.tfd, 0, &unix.ItimerSpec{}, nil)
		return
	}
	wait := max(due-now, 1000)
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(wait)}
	unix.TimerfdSettime(p.tfd, 0, &spec, nil)
}
