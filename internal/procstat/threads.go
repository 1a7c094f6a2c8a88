package procstat

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// Thread is one thread of a process as the kernel sees it at the moment it
// is read: where it may run and where it last ran. A dedicated-core run
// reads its pinned threads back with it instead of taking the pinning on
// faith.
type Thread struct {
	TID  int
	Comm string // the thread's name (/proc/<pid>/task/<tid>/comm, as in stat)
	// AllowedCPUs is Cpus_allowed_list of /proc/<pid>/task/<tid>/status:
	// the CPUs the scheduler may run the thread on, sorted.
	AllowedCPUs []int
	// LastCPU is field 39 of /proc/<pid>/task/<tid>/stat ("processor"):
	// the CPU the thread last ran on, or runs on now.
	LastCPU int
	CPU     time.Duration // user+system CPU time (resolution ClockTick)
	State   string        // stat field 3: R running, S sleeping, D disk sleep, ...
	// VoluntarySwitches counts the times the thread gave up its CPU to
	// sleep (status voluntary_ctxt_switches); NonvoluntarySwitches the
	// times the kernel took the CPU from it.
	VoluntarySwitches, NonvoluntarySwitches uint64
}

// Threads lists the threads of process pid, sorted by thread id. A thread
// that ends while they are read is left out; a process that is gone is an
// error.
func Threads(pid int) ([]Thread, error) { return procRoot(procfs.DefaultMountPoint).threads(pid) }

func (root procRoot) threads(pid int) (out []Thread, err error) {
	fsys, err := root.fs()
	if err != nil {
		return nil, err
	}
	tasks, err := fsys.AllThreads(pid)
	if err != nil {
		return nil, fmt.Errorf("procstat: threads of %d: %w", pid, err)
	}
	for _, task := range tasks {
		th, err := readThread(task)
		switch {
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ESRCH):
			continue // it ended between the listing and the read
		case err != nil:
			return nil, fmt.Errorf("procstat: thread %d of %d: %w", task.PID, pid, err)
		}
		out = append(out, th)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("procstat: threads of %d: none readable (%w)", pid, fs.ErrNotExist)
	}
	slices.SortFunc(out, func(a, b Thread) int { return a.TID - b.TID })
	return out, nil
}

// readThread reads one task's stat and status. procfs slices stat around the
// command name's parentheses without checking their order, so a malformed
// file is an error here, never a panic.
func readThread(task procfs.Proc) (th Thread, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("malformed stat (%v)", p)
		}
	}()
	st, err := task.Stat()
	if err != nil {
		return th, err
	}
	status, err := task.NewStatus()
	if err != nil {
		return th, err
	}
	if len(status.CpusAllowedList) == 0 {
		return th, errors.New("status has no Cpus_allowed_list")
	}
	th = Thread{TID: task.PID, Comm: st.Comm, LastCPU: int(st.Processor), State: st.State,
		CPU:               time.Duration(st.UTime+st.STime) * ClockTick,
		VoluntarySwitches: status.VoluntaryCtxtSwitches, NonvoluntarySwitches: status.NonVoluntaryCtxtSwitches}
	for _, c := range status.CpusAllowedList {
		th.AllowedCPUs = append(th.AllowedCPUs, int(c))
	}
	slices.Sort(th.AllowedCPUs)
	return th, nil
}
