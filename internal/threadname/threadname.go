// Package threadname names OS threads (prctl PR_SET_NAME) for ps -L, top -H
// and perf: the event loops and the commit stages both name theirs, and
// neither should import the other for it.
package threadname

import (
	"bytes"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxThreadName is the kernel's limit on a thread's name (TASK_COMM_LEN
// less its NUL): prctl truncates longer ones.
const maxThreadName = 15

// Name names the calling OS thread (prctl PR_SET_NAME), as ps -L,
// top -H, perf and /proc/PID/task/TID/comm show it, and returns the
// function that gives the thread its old name back.
//
// The caller's goroutine must be locked to that thread (runtime.LockOSThread)
// until it calls restore, and must call restore before it exits: the thread
// ends with a goroutine that exits locked, but on its way out it may start
// the thread that takes over its P, and a new thread inherits its creator's
// name. (While the goroutine runs locked, the runtime starts new threads
// from a template thread instead, so they do not inherit it.)
func Name(name string) (restore func(), err error) {
	var old [maxThreadName + 1]byte
	if err := unix.Prctl(unix.PR_GET_NAME, uintptr(unsafe.Pointer(&old[0])), 0, 0, 0); err != nil {
		return func() {}, fmt.Errorf("name thread %q: read the old name: %w", name, err)
	}
	if err := setThreadName(name); err != nil {
		return func() {}, err
	}
	oldName := string(old[:max(0, bytes.IndexByte(old[:], 0))])
	return func() { setThreadName(oldName) }, nil
}

func setThreadName(name string) error {
	if len(name) > maxThreadName {
		name = name[:maxThreadName]
	}
	b := append([]byte(name), 0)
	if err := unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0); err != nil {
		return fmt.Errorf("name thread %q: %w", name, err)
	}
	runtime.KeepAlive(b)
	return nil
}
