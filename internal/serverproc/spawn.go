// Starting children so that none outlives this process. Who owns what: the
// spawner goroutine owns its OS thread (locked for the life of the
// process) and that thread's CPU mask; callers hand it a command through
// its channel and wait for the start's error.

package serverproc

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	"weaseldb/internal/affinity"
)

// Every child the harness starts gets Pdeathsig = SIGKILL: killed by the
// kernel when its parent dies, even by SIGKILL (a test run cut by its time
// limit left a server running for 16 minutes in its own process group).
// The kernel sends that signal when the *thread* that forked the child
// exits, not the process, and Go ends threads (a goroutine locked to its
// thread that returns without unlocking, as a pinned fork used to). So
// every fork is made on one thread kept for it: a goroutine locked to it
// for the life of the process. Pinning a child narrows that thread's mask
// for the fork (a child inherits it) and widens it again after.
var spawner struct {
	once sync.Once
	reqs chan spawnReq
}

type spawnReq struct {
	cmd  *exec.Cmd
	cpus []int
	done chan error
}

// spawn starts cmd on the spawner's thread, restricted to cpus (all the
// process's when empty), with Pdeathsig set.
func spawn(cmd *exec.Cmd, cpus []int) error {
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnReq)
		go spawnLoop()
	})
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	r := spawnReq{cmd: cmd, cpus: cpus, done: make(chan error, 1)}
	spawner.reqs <- r
	return <-r.done
}

func spawnLoop() {
	runtime.LockOSThread() // never unlocked: the thread lives as long as the process
	full, fullErr := affinity.AllowedCPUs()
	for r := range spawner.reqs {
		if len(r.cpus) == 0 {
			r.done <- r.cmd.Start()
			continue
		}
		if fullErr != nil {
			r.done <- fullErr
			continue
		}
		if err := affinity.PinCurrentThread(r.cpus); err != nil {
			r.done <- err
			continue
		}
		err := r.cmd.Start()
		if rerr := affinity.PinCurrentThread(full); rerr != nil && err == nil {
			// The thread could not be widened again: later unpinned
			// children would inherit the narrow mask. Refuse them rather
			// than run them on the wrong CPUs.
			fullErr = rerr
		}
		r.done <- err
	}
}

// Spawn starts cmd so that it cannot outlive this process (Pdeathsig):
// the way every child of the harness (servers, load testers, tools) is
// started.
func Spawn(cmd *exec.Cmd) error { return spawn(cmd, nil) }
