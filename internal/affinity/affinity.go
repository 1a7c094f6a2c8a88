// Package affinity pins OS threads to CPUs for dedicated-core runs (the
// server's I/O loops and pipeline stages, and bench_pipeline --cpus), checks
// CPU lists against the set this process may use, and plans dedicated runs.
//
// Rules it follows (see docs/bench_pipeline.md, "Pinning"):
//   - A pinned goroutine locks its OS thread first, then sets that thread's
//     affinity, and never unlocks it: when the goroutine exits the runtime
//     ends the thread, so no mask leaks to other goroutines.
//   - CPU lists are checked against sched_getaffinity, not 0..NumCPU-1,
//     with masks larger than 1024 CPUs handled.
//   - GOMAXPROCS must cover every pinned thread plus the rest (GOMAXPROCSFor).
package affinity

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// maxMaskCPUs bounds the kernel mask sizes tried when 1024 CPUs are not enough.
const maxMaskCPUs = 1 << 20

// startupCPUs is the allowed set seen at package initialisation, on the
// thread running init, before this process could pin anything.
var startupCPUs, startupErr = threadCPUs()

// AllowedCPUs returns the CPUs this process may run on (sched_getaffinity),
// sorted. It is read once at start-up, so threads pinned since then do not
// narrow it.
func AllowedCPUs() ([]int, error) {
	if startupErr != nil {
		return nil, startupErr
	}
	return slices.Clone(startupCPUs), nil
}

// CurrentThreadCPUs returns the calling OS thread's affinity now. Call it
// from a goroutine locked to its thread for a meaningful answer.
func CurrentThreadCPUs() ([]int, error) { return threadCPUs() }

// threadCPUs reads the calling thread's mask: the fixed 1024-CPU set first,
// then ever larger dynamic sets while the kernel says EINVAL (its mask is
// bigger than the buffer, on hosts with more than 1024 CPUs).
func threadCPUs() ([]int, error) {
	var set unix.CPUSet
	err := unix.SchedGetaffinity(0, &set)
	if err == nil {
		var cpus []int
		for cpu := range 1024 {
			if set.IsSet(cpu) {
				cpus = append(cpus, cpu)
			}
		}
		return cpus, nil
	}
	if !errors.Is(err, unix.EINVAL) {
		return nil, fmt.Errorf("affinity: sched_getaffinity: %w", err)
	}
	for n := 2048; n <= maxMaskCPUs; n *= 2 {
		dyn := unix.NewCPUSet(n)
		err := unix.SchedGetaffinityDynamic(0, dyn)
		if errors.Is(err, unix.EINVAL) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("affinity: sched_getaffinity (%d-CPU mask): %w", n, err)
		}
		return dynamicSetCPUs(dyn, n), nil
	}
	return nil, fmt.Errorf("affinity: sched_getaffinity: kernel mask larger than %d CPUs", maxMaskCPUs)
}

func dynamicSetCPUs(set unix.CPUSetDynamic, n int) []int {
	var cpus []int
	for cpu := range n {
		if set.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	return cpus
}

// dynamicSet builds a mask big enough for the largest CPU in cpus.
func dynamicSet(cpus []int) unix.CPUSetDynamic {
	set := unix.NewCPUSet(slices.Max(cpus) + 1)
	for _, cpu := range cpus {
		set.Set(cpu)
	}
	return set
}

// PinCurrentThread locks the calling goroutine to its OS thread and
// restricts that thread to cpus. It never unlocks after pinning: let the
// goroutine exit and the runtime ends the thread. On error the thread is
// left unpinned and unlocked.
func PinCurrentThread(cpus []int) error {
	if err := checkList(cpus); err != nil {
		return err
	}
	runtime.LockOSThread()
	if err := unix.SchedSetaffinityDynamic(0, dynamicSet(cpus)); err != nil {
		runtime.UnlockOSThread() // the mask did not change: safe to hand back
		return fmt.Errorf("affinity: pin thread to CPUs %s: %w", FormatCPUList(cpus), err)
	}
	return nil
}

func checkList(cpus []int) error {
	if len(cpus) == 0 {
		return errors.New("affinity: empty CPU list")
	}
	for _, cpu := range cpus {
		if cpu < 0 || cpu >= maxMaskCPUs {
			return fmt.Errorf("affinity: CPU %d out of range 0..%d", cpu, maxMaskCPUs-1)
		}
	}
	return nil
}

// Validate checks that cpus is a non-empty list of distinct CPUs, each in
// allowed. The error names the allowed set.
func Validate(cpus, allowed []int) error {
	if err := checkList(cpus); err != nil {
		return err
	}
	seen := map[int]bool{}
	for _, cpu := range cpus {
		if seen[cpu] {
			return fmt.Errorf("affinity: CPU %d listed twice", cpu)
		}
		seen[cpu] = true
		if !slices.Contains(allowed, cpu) {
			return fmt.Errorf("affinity: CPU %d is not available to this process (allowed: %s)", cpu, FormatCPUList(allowed))
		}
	}
	return nil
}

// GOMAXPROCSFor returns the GOMAXPROCS a process needs when pinnedThreads
// goroutines are locked to threads (each holds a P while it runs, and a
// spinning one holds it always): one P per pinned thread plus at least one
// for every other goroutine, and never fewer than current.
func GOMAXPROCSFor(pinnedThreads, current int) int {
	return max(current, pinnedThreads+1)
}

// ParseCPUList parses the kernel's list format ("0-3,8,10-11"), as in
// Cpus_allowed_list or taskset -c.
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("affinity: empty CPU list")
	}
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		first, err := strconv.Atoi(lo)
		if err != nil || first < 0 {
			return nil, fmt.Errorf("affinity: CPU list %q: bad CPU %q", s, lo)
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil || last < first {
				return nil, fmt.Errorf("affinity: CPU list %q: bad range %q", s, part)
			}
		}
		if last >= maxMaskCPUs {
			return nil, fmt.Errorf("affinity: CPU list %q: CPU %d out of range", s, last)
		}
		for cpu := first; cpu <= last; cpu++ {
			cpus = append(cpus, cpu)
		}
	}
	return cpus, nil
}

// FormatCPUList writes cpus in the kernel's list format, ranges collapsed.
func FormatCPUList(cpus []int) string {
	if len(cpus) == 0 {
		return "(none)"
	}
	sorted := slices.Clone(cpus)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	var b strings.Builder
	for i := 0; i < len(sorted); {
		j := i
		for j+1 < len(sorted) && sorted[j+1] == sorted[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(sorted[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(sorted[j]))
		}
		i = j + 1
	}
	return b.String()
}

// ThreadAllowedCPUs reads Cpus_allowed_list of one thread of this process
// from /proc/self/task/<tid>/status: what the kernel will let it run on.
func ThreadAllowedCPUs(tid int) ([]int, error) {
	path := fmt.Sprintf("/proc/self/task/%d/status", tid)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("affinity: %w", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return ParseCPUList(v)
		}
	}
	return nil, fmt.Errorf("affinity: no Cpus_allowed_list in %s", path)
}
