// Package procstat reads the kernel's CPU accounting for this process, for
// another process, and for the calling OS thread. Benchmarks and tests use it
// to report CPU per item and idle CPU from what the kernel measured, not from
// wall-clock guesses.
package procstat

import (
	"fmt"
	"os"
	"strconv"
	"strings"
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

// PidCPU returns the user+system CPU time of another process, read from
// /proc/<pid>/stat (resolution ClockTick).
func PidCPU(pid int) (time.Duration, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("procstat: read %s: %w", path, err)
	}
	ticks, err := parseStatTicks(data)
	if err != nil {
		return 0, fmt.Errorf("procstat: parse %s: %w", path, err)
	}
	return time.Duration(ticks) * ClockTick, nil
}

// parseStatTicks returns utime+stime (fields 14 and 15) from the text of a
// /proc/<pid>/stat file. The command name (field 2) is in parentheses and may
// itself hold spaces and parentheses, so fields are counted from the last ')'.
func parseStatTicks(data []byte) (uint64, error) {
	s := string(data)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return 0, fmt.Errorf("no ')' closing the command name")
	}
	// After ") " come fields 3 (state), 4 (ppid), ... so field k is at index k-3.
	fields := strings.Fields(s[end+1:])
	const utimeIdx, stimeIdx = 14 - 3, 15 - 3
	if len(fields) <= stimeIdx {
		return 0, fmt.Errorf("only %d fields after the command name, want > %d", len(fields), stimeIdx)
	}
	utime, err := strconv.ParseUint(fields[utimeIdx], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("utime %q: %w", fields[utimeIdx], err)
	}
	stime, err := strconv.ParseUint(fields[stimeIdx], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stime %q: %w", fields[stimeIdx], err)
	}
	return utime + stime, nil
}

func timevalDuration(tv unix.Timeval) time.Duration {
	return time.Duration(tv.Sec)*time.Second + time.Duration(tv.Usec)*time.Microsecond
}
