// Package serverproc starts, supervises and stops one weaseldb process: the
// one supervisor of the tree, used by the gate, the report's wait-strategy
// runs and the server's own tests.
//
// It writes the process's config with the TOML encoder, starts it (pinned to
// CPUs of its own when asked), waits for its ready line, keeps the last lines
// of its output (and copies all of it to a log when asked), stops it with
// SIGTERM and then SIGKILL after a grace, and reports its exit code with the
// tail of its output when something went wrong.
//
// Who owns what: Start's caller owns the Process. Its output is written by
// os/exec's copying goroutines into an output (mutex inside); the exit status
// is written once by the waiting goroutine before it closes done, and read
// only after done is closed. Stop may be called from any goroutine, any
// number of times.
package serverproc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultReadyLine is the stdout line weaseldb prints once every listener
// accepts (docs/CONTRACTS.md).
const DefaultReadyLine = "weaseldb: ready"

// DefaultStartTimeout is how long Start waits for the ready line when the
// spec does not say.
const DefaultStartTimeout = 15 * time.Second

// listeningPrefix starts weaseldb's line for each bound listener:
// "weaseldb: listening on tcp 127.0.0.1:8080" or "... unix /path".
const listeningPrefix = "weaseldb: listening on "

// Spec says how to start one server process.
type Spec struct {
	Name   string // in messages, e.g. "server A"; default: the binary's base name
	Binary string // a path, or a name looked up in $PATH
	// Config, when not nil, is written to ConfigFile with the TOML encoder
	// before the start; when nil, ConfigFile (if any) is passed as it is.
	Config     map[string]any
	ConfigFile string   // passed as --config; "" passes no --config
	Args       []string // more flags, after --config
	Dir        string   // working directory; "" = the caller's
	CPUs       []int    // run the process (every thread) on these CPUs only; empty = unpinned
	ReadyLine  string   // default DefaultReadyLine
	// StartTimeout bounds the wait for the ready line; default DefaultStartTimeout.
	StartTimeout time.Duration
	// Log, when not nil, receives every line the process prints (stdout and
	// stderr), as it prints it. Nothing is written to it after Done.
	Log       io.Writer
	TailLines int // lines kept for error messages; default 20
	// Wrapper, when set, runs the binary under another program: its first
	// element is that program and the rest its flags, before the binary
	// (the gate's cost tier runs the server under valgrind).
	Wrapper []string
	// Env is added to the process's environment (KEY=value each).
	Env []string
}

// Listener is one address the server said it listens on.
type Listener struct {
	Network string // "tcp" or "unix"
	Address string // "127.0.0.1:43121" or "/tmp/x/weaseldb.sock"
}

// Process is a started server.
type Process struct {
	name    string
	cmd     *exec.Cmd
	out     *output
	exited  chan struct{} // closed once the process has exited
	done    chan struct{} // closed once, after exited, its output is read too
	waitErr error         // set before exited is closed

	stopOnce sync.Once
	stopErr  error
}

// Start writes the config, starts the process and waits for its ready line.
// On failure the process is gone and the error is one line naming the cause,
// ending with the process's last output line when it printed one.
func Start(spec Spec) (*Process, error) {
	name := spec.Name
	if name == "" {
		name = filepath.Base(spec.Binary)
	}
	if spec.Binary == "" {
		return nil, fmt.Errorf("%s: no binary given", name)
	}
	if spec.Config != nil {
		if spec.ConfigFile == "" {
			return nil, fmt.Errorf("%s: a config needs a ConfigFile to be written to", name)
		}
		if err := WriteConfig(spec.ConfigFile, spec.Config); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	bin := spec.Binary
	if strings.ContainsRune(bin, '/') && spec.Dir != "" {
		// The process runs in spec.Dir: a relative path must not move with it.
		abs, err := filepath.Abs(bin)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		bin = abs
	}
	var args []string
	if spec.ConfigFile != "" {
		cfg := spec.ConfigFile
		if spec.Dir != "" {
			if abs, err := filepath.Abs(cfg); err == nil {
				cfg = abs
			}
		}
		args = append(args, "--config", cfg)
	}
	args = append(args, spec.Args...)

	ready := spec.ReadyLine
	if ready == "" {
		ready = DefaultReadyLine
	}
	tail := spec.TailLines
	if tail <= 0 {
		tail = 20
	}
	p := &Process{name: name, exited: make(chan struct{}), done: make(chan struct{}), out: newOutput(tail, ready, spec.Log)}
	if len(spec.Wrapper) > 0 {
		args = append(append(append([]string(nil), spec.Wrapper[1:]...), bin), args...)
		bin = spec.Wrapper[0]
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = spec.Dir
	if len(spec.Env) > 0 {
		p.cmd.Env = append(os.Environ(), spec.Env...)
	}
	// Its own process group: a SIGKILL reaches whatever it started too.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.startAndWatch(spec.CPUs); err != nil {
		return nil, fmt.Errorf("%s: starting %s: %w", name, spec.Binary, err)
	}
	timeout := spec.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-p.out.ready:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("%s exited with status %d before it was ready%s", name, exitCode(p.waitErr), p.out.lastLine())
	case <-timer.C:
		last := p.out.lastLine() // what it said while it was waited for, not its goodbye
		_ = p.Stop(2 * time.Second)
		return nil, fmt.Errorf("%s: no %q line within %v%s", name, ready, timeout, last)
	}
}

// startAndWatch starts the process with its stdout and stderr on pipes of
// our own, read by two goroutines, and a third that waits for the exit.
// Not os/exec's pipes: with those, Wait also waits for the output to end,
// which a child holding stdout open delays, and an exit would look late.
func (p *Process) startAndWatch(cpus []int) error {
	outR, outW, err := os.Pipe()
	if err != nil {
		return err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return err
	}
	p.cmd.Stdout, p.cmd.Stderr = outW, errW
	err = StartOn(p.cmd, cpus)
	outW.Close() // the child has its own copies
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return err
	}
	var readers sync.WaitGroup
	for _, r := range []struct {
		f *os.File
		w io.Writer
	}{{outR, p.out.stream(true)}, {errR, p.out.stream(false)}} {
		readers.Add(1)
		go func() {
			defer readers.Done()
			_, _ = io.Copy(r.w, r.f)
		}()
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		// Whatever the server started and left in its process group goes
		// with it; then its output ends.
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		close(p.exited)
		read := make(chan struct{})
		go func() { readers.Wait(); close(read) }()
		select {
		case <-read:
		case <-time.After(2 * time.Second):
			// Something outside the group holds the pipes: stop reading.
			outR.Close()
			errR.Close()
			<-read
		}
		outR.Close()
		errR.Close()
		p.out.flush()
		close(p.done)
	}()
	return nil
}

// Name is the name used in messages.
func (p *Process) Name() string { return p.name }

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Listeners are the addresses from the "weaseldb: listening on" lines the
// process printed before it was ready, in order: with port 0 in the config,
// this is where the kernel's chosen port is read, race-free.
func (p *Process) Listeners() []Listener {
	var out []Listener
	for _, line := range p.out.startupLines() {
		rest, ok := strings.CutPrefix(line, listeningPrefix)
		if !ok {
			continue
		}
		network, addr, ok := strings.Cut(strings.TrimSpace(rest), " ")
		if !ok {
			// A listener line without a network word: an address alone.
			network, addr = "", strings.TrimSpace(rest)
		}
		out = append(out, Listener{Network: network, Address: addr})
	}
	return out
}

// StartupValue returns the rest of the first line printed before the ready
// line that starts with prefix (e.g. "weaseldb: GOMAXPROCS=").
func (p *Process) StartupValue(prefix string) (string, bool) {
	for _, line := range p.out.startupLines() {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			return rest, true
		}
	}
	return "", false
}

// Done is closed once the process has exited and its output is read.
func (p *Process) Done() <-chan struct{} { return p.done }

// Alive reports whether the process is still running.
func (p *Process) Alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// ExitedWithin reports whether the process has exited or exits within d: a
// failing server may still be on its way out when its client notices.
func (p *Process) ExitedWithin(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-p.exited:
		return true
	case <-timer.C:
		return false
	}
}

// ExitCode is the exit status once the process has exited: its code, or 128
// plus the signal that ended it (as a shell reports it); -1 while it runs or
// when the status is unknown.
func (p *Process) ExitCode() int {
	if p.Alive() {
		return -1
	}
	return exitCode(p.waitErr)
}

// Exit describes how the process ended, once it has: nil for status 0, an
// *ExitError otherwise. Nil while it runs.
func (p *Process) Exit() error {
	if p.Alive() || p.ExitCode() == 0 {
		return nil
	}
	return &ExitError{Name: p.name, Code: p.ExitCode(), LastLine: strings.TrimPrefix(p.out.lastLine(), ": ")}
}

// Tail is the last lines the process printed (stdout and stderr), oldest first.
func (p *Process) Tail() []string { return p.out.tailLines() }

// LastLine is ": <the last line printed>", or "" when there was none: ready
// to end an error message with.
func (p *Process) LastLine() string { return p.out.lastLine() }

// Stop sends SIGTERM, waits up to grace for the process to exit, then kills
// its process group. It returns nil when the process exited with status 0,
// and an *ExitError otherwise (Killed when the grace ran out). Later calls
// return what the first one did.
func (p *Process) Stop(grace time.Duration) error {
	p.stopOnce.Do(func() { p.stopErr = p.stop(grace) })
	return p.stopErr
}

// Kill ends the process group with SIGKILL at once, without a SIGTERM
// first (a program such as valgrind may abort on SIGTERM), and waits for
// its output. Later calls, and Stop's, return what the first one did.
func (p *Process) Kill() error {
	p.stopOnce.Do(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
		p.stopErr = p.Exit()
	})
	return p.stopErr
}

func (p *Process) stop(grace time.Duration) error {
	if p.Alive() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	if p.ExitedWithin(grace) {
		<-p.done // the last lines, for the reason
		return p.Exit()
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
	return &ExitError{Name: p.name, Code: p.ExitCode(), Killed: true, Grace: grace, LastLine: strings.TrimPrefix(p.out.lastLine(), ": ")}
}

// ExitError is a process that did not exit cleanly.
type ExitError struct {
	Name     string
	Code     int           // exit status (128+N for signal N)
	Killed   bool          // Stop's grace ran out and the process was killed
	Grace    time.Duration // with Killed
	LastLine string        // the last line it printed, if any
}

func (e *ExitError) Error() string {
	var msg string
	if e.Killed {
		msg = fmt.Sprintf("%s did not exit within %v of SIGTERM; killed", e.Name, e.Grace)
	} else {
		msg = fmt.Sprintf("%s exited with status %d", e.Name, e.Code)
	}
	if e.LastLine != "" {
		msg += ": " + e.LastLine
	}
	return msg
}

// exitCode turns Wait's error into a shell-style exit status.
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return -1
}

// StartOn starts cmd restricted to cpus (all of them when cpus is empty),
// so that it cannot outlive this process (spawn.go). exec.Cmd has no
// affinity attribute, but a forked child inherits the mask of the thread
// that forked it, and so do all its threads and children.
func StartOn(cmd *exec.Cmd, cpus []int) error { return spawn(cmd, cpus) }
