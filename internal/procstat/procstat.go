// Package procstat reads the kernel's CPU accounting for this process, for
// another process, for the calling OS thread and for the whole machine.
// Benchmarks, tests and the report use it to give CPU per item and idle CPU
// from what the kernel measured, not from wall-clock guesses. It also names
// the machine's CPU (cpuinfo.go: the gate's machine description and the
// report's manifest read it here), and where each CPU sits: its physical
// core, hyper-thread siblings and NUMA node (topology.go, from sysfs). It
// is the tree's one reader of /proc and sysfs:
// every /proc file goes through github.com/prometheus/procfs (proc.go) but
// /proc/cpuinfo, which cpuinfo.go parses itself; this file holds the
// system calls.
package procstat

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// ClockTick is the unit of /proc/<pid>/stat's utime and stime (USER_HZ). Linux
// fixes USER_HZ at 100 on every architecture Go supports, so PidCPU has a
// resolution of 10 ms; SelfCPU and ThreadCPU are much finer.
const ClockTick = 10 * time.Millisecond

// SelfCPU returns the user+system CPU time this process has used, all threads
// together (getrusage RUSAGE_SELF).
func SelfCPU() (time.Duration, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("procstat: getrusage(RUSAGE_SELF): %w", err)
	}
	return timevalDuration(ru.Utime) + timevalDuration(ru.Stime), nil
}

// ThreadCPU returns the CPU time of the calling OS thread
// (CLOCK_THREAD_CPUTIME_ID). A goroutine may move between threads, so call it
// between runtime.LockOSThread and UnlockOSThread when the figure matters.
func ThreadCPU() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, fmt.Errorf("procstat: clock_gettime(CLOCK_THREAD_CPUTIME_ID): %w", err)
	}
	return time.Duration(ts.Nano()), nil
}

func timevalDuration(tv unix.Timeval) time.Duration {
	return time.Duration(tv.Sec)*time.Second + time.Duration(tv.Usec)*time.Microsecond
}
