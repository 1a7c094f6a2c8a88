package gate

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/BurntSushi/toml"
)

// Target is where a started server listens, in the load tester's terms.
type Target struct {
	Network string // "unix" or "tcp"
	Path    string // unix socket path
	Host    string // tcp
	Port    int    // tcp
}

// LoadArgs are the load tester flags that aim it at the target.
func (t Target) LoadArgs() []string {
	if t.Network == "unix" {
		return []string{"--unix-socket", t.Path}
	}
	return []string{"--host", t.Host, "--port", fmt.Sprint(t.Port)}
}

func (t Target) String() string {
	if t.Network == "unix" {
		return "unix:" + t.Path
	}
	return fmt.Sprintf("%s:%d", t.Host, t.Port)
}

// newTarget picks a fresh listening address in dir: a unix socket path (no
// port races) or a free loopback TCP port.
func newTarget(network, dir, name string) (Target, error) {
	switch network {
	case "unix":
		return Target{Network: "unix", Path: filepath.Join(dir, name+".sock")}, nil
	case "tcp":
		port, err := freePort()
		if err != nil {
			return Target{}, err
		}
		return Target{Network: "tcp", Host: "127.0.0.1", Port: port}, nil
	default:
		return Target{}, fmt.Errorf("network %q: want unix or tcp", network)
	}
}

// freePort asks the kernel for a free loopback port. Another process could
// take it before the server binds; the server then fails to start and the
// gate says so (exit 2), which is why unix sockets are the default.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// rewriteConfig returns the TOML config with its [server] interfaces
// replaced by the single target, every other key kept as it was (unknown
// keys included: the server, not the gate, validates them).
func rewriteConfig(data []byte, t Target) ([]byte, error) {
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parsing config: %w", err)
	}
	if doc == nil {
		doc = map[string]any{}
	}
	server, ok := doc["server"].(map[string]any)
	if !ok {
		if _, exists := doc["server"]; exists {
			return nil, errors.New("config: [server] is not a table")
		}
		server = map[string]any{}
		doc["server"] = server
	}
	iface := map[string]any{"type": t.Network}
	if t.Network == "unix" {
		iface["path"] = t.Path
	} else {
		iface["address"] = t.Host
		iface["port"] = t.Port
	}
	server["interfaces"] = []map[string]any{iface}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(doc); err != nil {
		return nil, fmt.Errorf("writing config: %w", err)
	}
	return buf.Bytes(), nil
}

// Server is a running server process started by the gate.
type Server struct {
	Name   string
	Binary string
	Target Target
	cmd    *exec.Cmd
	output *tailBuffer // the last lines of stdout and stderr, for reasons
	exited chan struct{}
	err    error // the process's exit, valid once exited is closed
}

// ServerSpec says how to start one server.
type ServerSpec struct {
	Name         string // "A" or "B"
	Binary       string
	ConfigData   []byte // the user's config; interfaces are replaced
	Network      string
	Dir          string // temp dir for the config and the socket
	ReadyLine    string // stdout line that says the server accepts
	StartTimeout time.Duration
	CPUs         []int // run the server on these CPUs only (empty: unpinned)
}

// StartServer writes the server's config with a fresh address, starts it and
// waits for the ready line. On failure the process is gone and the error is
// one line naming the cause (the server's last output line when it has one).
func StartServer(spec ServerSpec) (*Server, error) {
	target, err := newTarget(spec.Network, spec.Dir, strings.ToLower(spec.Name))
	if err != nil {
		return nil, err
	}
	cfg, err := rewriteConfig(spec.ConfigData, target)
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(spec.Dir, strings.ToLower(spec.Name)+".toml")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		return nil, fmt.Errorf("writing %s: %w", cfgPath, err)
	}
	s := &Server{Name: spec.Name, Binary: spec.Binary, Target: target,
		output: newTailBuffer(20), exited: make(chan struct{})}
	bin := spec.Binary
	if strings.ContainsRune(bin, '/') {
		// The server runs in spec.Dir: a relative path must not move with it.
		if bin, err = filepath.Abs(bin); err != nil {
			return nil, fmt.Errorf("server %s: %w", spec.Name, err)
		}
	}
	s.cmd = exec.Command(bin, "--config", cfgPath)
	s.cmd.Dir = spec.Dir
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Stdout goes through a writer (not StdoutPipe) so that Wait returns only
	// after the last line was read: the reason for an early exit is complete.
	ready := make(chan struct{})
	var once sync.Once
	s.output.onLine = func(line string) {
		if strings.Contains(line, spec.ReadyLine) {
			once.Do(func() { close(ready) })
		}
	}
	s.cmd.Stdout = s.output
	s.cmd.Stderr = s.output
	s.cmd.WaitDelay = 2 * time.Second // a child holding stdout open cannot hang Wait
	if err := startOn(s.cmd, spec.CPUs); err != nil {
		return nil, fmt.Errorf("server %s: starting %s: %w", spec.Name, spec.Binary, err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.exited)
	}()
	select {
	case <-ready:
		return s, nil
	case <-s.exited:
		return nil, fmt.Errorf("server %s exited before it was ready (%v)%s", spec.Name, s.err, s.output.lastLine())
	case <-time.After(spec.StartTimeout):
		s.Stop(2 * time.Second)
		return nil, fmt.Errorf("server %s: no %q line within %v%s", spec.Name, spec.ReadyLine, spec.StartTimeout, s.output.lastLine())
	}
}

// Alive reports whether the process is still running.
func (s *Server) Alive() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// exitedWithin reports whether the process has exited or exits within d:
// after a failed run, a dying server may still be on its way out.
func (s *Server) exitedWithin(d time.Duration) bool {
	select {
	case <-s.exited:
		return true
	case <-time.After(d):
		return false
	}
}

// DiedReason is a one-line description of an unexpected exit.
func (s *Server) DiedReason() string {
	return fmt.Sprintf("server %s exited during the runs (%v)%s", s.Name, s.err, s.output.lastLine())
}

// Pid is the server's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Stop sends SIGTERM, waits up to grace for a clean exit, then kills the
// process group. It returns the exit error when the server did not exit 0.
func (s *Server) Stop(grace time.Duration) error {
	if !s.Alive() {
		return s.err
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		return s.err
	case <-time.After(grace):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
		return fmt.Errorf("server %s did not exit within %v of SIGTERM; killed", s.Name, grace)
	}
}

// tailBuffer keeps the last lines written to it.
type tailBuffer struct {
	onLine  func(string) // called with each complete line, under mu
	mu      sync.Mutex
	max     int
	lines   []string
	partial []byte
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.partial = append(b.partial, p...)
	for {
		i := bytes.IndexByte(b.partial, '\n')
		if i < 0 {
			break
		}
		b.addLocked(string(b.partial[:i]))
		b.partial = b.partial[i+1:]
	}
	if len(b.partial) > 4096 {
		b.addLocked(string(b.partial))
		b.partial = nil
	}
	return len(p), nil
}

func (b *tailBuffer) addLocked(line string) {
	if b.onLine != nil {
		b.onLine(line)
	}
	if strings.TrimSpace(line) == "" {
		return
	}
	b.lines = append(b.lines, line)
	if len(b.lines) > b.max {
		b.lines = b.lines[len(b.lines)-b.max:]
	}
}

// lastLine is ": <last output line>" or "" when there was none.
func (b *tailBuffer) lastLine() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	last := strings.TrimSpace(string(b.partial))
	if last == "" && len(b.lines) > 0 {
		last = b.lines[len(b.lines)-1]
	}
	if last == "" {
		return ""
	}
	if len(last) > 200 {
		last = last[:200] + "..."
	}
	return ": " + last
}
