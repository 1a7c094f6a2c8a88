package procstat

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// PidCPU returns the user+system CPU time of another process, all its
// threads, read from /proc/<pid>/stat (resolution ClockTick).
func PidCPU(pid int) (time.Duration, error) {
	user, system, err := PidCPUTimes(pid)
	return user + system, err
}

// PidCPUTimes returns the user and the system CPU time of another process
// apart: the system share is the kernel's part of what a request costs
// (its system calls and the network stack), which user-space work cannot
// reduce.
func PidCPUTimes(pid int) (user, system time.Duration, err error) {
	return procRoot(procfs.DefaultMountPoint).pidCPU(pid)
}

// MachineBusy returns the CPU time all of the machine's cores have spent busy
// since boot: /proc/stat's aggregate user+nice+system+irq+softirq+steal (idle
// and iowait left out; guest time is already inside user). Two readings
// around a window give how many cores the whole machine kept busy, other
// users included.
func MachineBusy() (time.Duration, error) { return procRoot(procfs.DefaultMountPoint).machineBusy() }

// MachineSteal returns the time the machine's CPUs have been ready to run
// but not run since boot: /proc/stat's aggregate steal, the hypervisor's
// report of time it gave the virtual CPUs' host threads to something else.
// 0 on bare metal, and in a guest without a paravirtual steal clock (QEMU's
// TCG emulation has none: there it says nothing about sharing).
func MachineSteal() (time.Duration, error) { return procRoot(procfs.DefaultMountPoint).machineSteal() }

// MachineCPUs returns how many CPUs /proc/stat accounts for (its per-CPU
// lines): what MachineBusy's busy time is shared among, which may be more
// than this process is allowed to use.
func MachineCPUs() (int, error) { return procRoot(procfs.DefaultMountPoint).machineCPUs() }

// procRoot is a /proc mount point: the real one, or a directory a test
// filled with files of its own.
type procRoot string

func (root procRoot) fs() (procfs.FS, error) {
	fs, err := procfs.NewFS(string(root))
	if err != nil {
		return procfs.FS{}, fmt.Errorf("procstat: %w", err)
	}
	return fs, nil
}

func (root procRoot) pidCPU(pid int) (user, system time.Duration, err error) {
	fs, err := root.fs()
	if err != nil {
		return 0, 0, err
	}
	path := fmt.Sprintf("%s/%d/stat", root, pid)
	// procfs slices the file around the command name's parentheses without
	// checking their order, so a malformed file can panic inside it: that is
	// an error here, never a crash. (The kernel never writes such a file.)
	defer func() {
		if p := recover(); p != nil {
			user, system, err = 0, 0, fmt.Errorf("procstat: parse %s: malformed (%v)", path, p)
		}
	}()
	proc, err := fs.Proc(pid)
	if err != nil {
		return 0, 0, fmt.Errorf("procstat: read %s: %w", path, err)
	}
	st, err := proc.Stat()
	if err != nil {
		return 0, 0, fmt.Errorf("procstat: read %s: %w", path, err)
	}
	return time.Duration(st.UTime) * ClockTick, time.Duration(st.STime) * ClockTick, nil
}

// stat reads /proc/stat.
func (root procRoot) stat() (procfs.Stat, error) {
	fs, err := root.fs()
	if err != nil {
		return procfs.Stat{}, err
	}
	st, err := fs.Stat()
	if err != nil {
		return procfs.Stat{}, fmt.Errorf("procstat: read %s/stat: %w", root, err)
	}
	return st, nil
}

func (root procRoot) machineBusy() (time.Duration, error) {
	st, err := root.stat()
	if err != nil {
		return 0, err
	}
	c := st.CPUTotal
	if c == (procfs.CPUStat{}) {
		return 0, fmt.Errorf("procstat: %s/stat has no aggregate cpu line", root)
	}
	busy := c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal // seconds
	return time.Duration(math.Round(busy * float64(time.Second))), nil
}

func (root procRoot) machineSteal() (time.Duration, error) {
	st, err := root.stat()
	if err != nil {
		return 0, err
	}
	return time.Duration(math.Round(st.CPUTotal.Steal * float64(time.Second))), nil
}

func (root procRoot) machineCPUs() (int, error) {
	st, err := root.stat()
	if err != nil {
		return 0, err
	}
	if len(st.CPU) == 0 {
		return 0, fmt.Errorf("procstat: %s/stat has no per-CPU lines", root)
	}
	return len(st.CPU), nil
}

// PidRunTime returns the time every live thread of another process has
// spent on a CPU, in nanoseconds: the sum of /proc/<pid>/task/*/schedstat's
// first field. Finer than PidCPU's clock ticks (10 ms), so a window of a
// few hundred milliseconds can be measured; a thread that has exited is no
// longer counted (the Go runtime keeps its threads).
func PidRunTime(pid int) (time.Duration, error) {
	return procRoot(procfs.DefaultMountPoint).pidRunTime(pid)
}

func (root procRoot) pidRunTime(pid int) (time.Duration, error) {
	dir := fmt.Sprintf("%s/%d/task", root, pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("procstat: %w", err)
	}
	var sum time.Duration
	for _, task := range tasks {
		data, err := os.ReadFile(filepath.Join(dir, task.Name(), "schedstat"))
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			continue // the thread exited since the listing
		}
		if err != nil {
			return 0, fmt.Errorf("procstat: %w", err)
		}
		first, _, _ := strings.Cut(strings.TrimSpace(string(data)), " ")
		ns, err := strconv.ParseInt(first, 10, 64)
		if err != nil || ns < 0 {
			return 0, fmt.Errorf("procstat: %s/%s/schedstat: %q is not a run time", dir, task.Name(), first)
		}
		sum += time.Duration(ns)
	}
	return sum, nil
}

// ThreadsRunnable returns, for each live thread of another process, the
// time it has been runnable: on a CPU or waiting in a run queue for one
// (/proc/<pid>/task/*/schedstat's first two fields). A thread that spins
// is runnable all the time however loaded the machine is, where its CPU
// time shrinks with its share of the CPUs; a thread that sleeps is
// runnable only between its wake-ups and its next sleep.
func ThreadsRunnable(pid int) (map[int]time.Duration, error) {
	return procRoot(procfs.DefaultMountPoint).threadsRunnable(pid)
}

func (root procRoot) threadsRunnable(pid int) (map[int]time.Duration, error) {
	dir := fmt.Sprintf("%s/%d/task", root, pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("procstat: %w", err)
	}
	out := map[int]time.Duration{}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, task.Name(), "schedstat"))
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			continue // the thread exited since the listing
		}
		if err != nil {
			return nil, fmt.Errorf("procstat: %w", err)
		}
		f := strings.Fields(string(data))
		if len(f) < 2 {
			return nil, fmt.Errorf("procstat: %s/%s/schedstat: %q has no run and wait times", dir, task.Name(), data)
		}
		run, err1 := strconv.ParseInt(f[0], 10, 64)
		wait, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil || run < 0 || wait < 0 {
			return nil, fmt.Errorf("procstat: %s/%s/schedstat: %q is not run and wait times", dir, task.Name(), data)
		}
		out[tid] = time.Duration(run + wait)
	}
	return out, nil
}
