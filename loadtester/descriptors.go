package loadtester

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// ErrTooFewDescriptors: the process may not open as many descriptors as the
// run needs. Without this check it would run with the connections it could
// open and count the rest as connect errors (EMFILE), a smaller load than
// asked whose cause is one line among the errors.
var ErrTooFewDescriptors = errors.New("too few file descriptors")

// descriptorReserve is what the process holds besides the connections and
// the network threads' own descriptors: stdio, the result and HDR log files,
// the preflight connection, the Go runtime's and a margin.
const descriptorReserve = 32

// descriptorsPerThread: each network thread's epoll, eventfd and timerfd.
const descriptorsPerThread = 3

// checkDescriptors makes sure the run can hold its connections: it raises
// the soft RLIMIT_NOFILE when the hard limit allows (Go raises it to the
// hard limit at startup already, but a library caller may have lowered
// it), and refuses the run, naming the numbers, when it cannot.
func checkDescriptors(concurrency, threads int) error {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return nil // unknown: the connects will say
	}
	raise, err := descriptorPlan(concurrency, threads, lim)
	if err != nil || raise == 0 {
		return err
	}
	was := lim.Cur
	lim.Cur = raise
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("%w: --concurrency %d needs about %d, and raising the limit from %d failed: %w", ErrTooFewDescriptors, concurrency, raise, was, err)
	}
	return nil
}

// descriptorPlan is the soft limit to raise to (0: none needed), or an
// error when even the hard limit is too low.
func descriptorPlan(concurrency, threads int, lim unix.Rlimit) (raise uint64, err error) {
	need := uint64(concurrency + descriptorsPerThread*threads + descriptorReserve)
	switch {
	case lim.Cur >= need:
		return 0, nil
	case lim.Max >= need:
		return need, nil
	}
	return 0, fmt.Errorf("%w: --concurrency %d needs about %d file descriptors, and this process may open %d (hard limit %d): raise it (ulimit -n %d) or lower --concurrency",
		ErrTooFewDescriptors, concurrency, need, lim.Cur, lim.Max, need)
}
