package procstat

import (
	"fmt"

	"github.com/prometheus/procfs"
)

// PidRSS is process pid's resident memory in bytes (/proc/PID/status VmRSS).
func PidRSS(pid int) (int64, error) { return procRoot(procfs.DefaultMountPoint).pidRSS(pid) }

func (root procRoot) pidRSS(pid int) (int64, error) {
	fs, err := root.fs()
	if err != nil {
		return 0, err
	}
	proc, err := fs.Proc(pid)
	if err != nil {
		return 0, fmt.Errorf("procstat: read %s/%d/status: %w", root, pid, err)
	}
	st, err := proc.NewStatus()
	if err != nil {
		return 0, fmt.Errorf("procstat: read %s/%d/status: %w", root, pid, err)
	}
	return int64(st.VmRSS), nil
}
