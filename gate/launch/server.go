// Package launch starts what the gate measures: a server under test on a
// fresh address (over internal/serverproc, the one supervisor) and a
// load_tester run against it (over internal/loadrun, the one load run). The
// time tier (gate) and the cost tier (gate/cost) both launch through it;
// it knows neither tier.
package launch

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"weaseldb/internal/serverproc"
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

// NewTarget picks a fresh listening address in dir: a unix socket path (no
// port races), or loopback TCP port 0, for which the server binds a port the
// kernel chooses and says which (StartServer reads it back): no other
// process can take the port between choosing and binding.
func NewTarget(network, dir, name string) (Target, error) {
	switch network {
	case "unix":
		return Target{Network: "unix", Path: filepath.Join(dir, name+".sock")}, nil
	case "tcp":
		return Target{Network: "tcp", Host: "127.0.0.1", Port: 0}, nil
	default:
		return Target{}, fmt.Errorf("network %q: want unix or tcp", network)
	}
}

// ServerConfig is the user's config with its [server] interfaces replaced
// by the single target, every other key kept as it was (unknown keys
// included: the server, not the gate, validates them).
func ServerConfig(data []byte, t Target) (map[string]any, error) {
	doc, err := serverproc.ParseConfig(data)
	if err != nil {
		return nil, err
	}
	iface := serverproc.UnixInterface(t.Path)
	if t.Network == "tcp" {
		iface = serverproc.TCPInterface(t.Host, t.Port)
	}
	if err := serverproc.SetInterfaces(doc, iface); err != nil {
		return nil, err
	}
	return doc, nil
}

// RewriteConfig is ServerConfig as TOML text.
func RewriteConfig(data []byte, t Target) ([]byte, error) {
	doc, err := ServerConfig(data, t)
	if err != nil {
		return nil, err
	}
	return serverproc.EncodeConfig(doc)
}

// Server is a running server process started by the gate.
type Server struct {
	Name   string
	Binary string
	Target Target
	proc   *serverproc.Process
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
	// Scenario names the scenario the server is started for (scenario
	// mode): its socket and config file names carry it, so servers of
	// several scenarios kept alive at once (--restart=false) never share one.
	Scenario string
}

// StartServer writes the server's config with a fresh address, starts it and
// waits for the ready line. On failure the process is gone and the error is
// one line naming the cause (the server's last output line when it has one).
func StartServer(spec ServerSpec) (*Server, error) {
	name := strings.ToLower(spec.Name)
	if spec.Scenario != "" {
		name += "-" + spec.Scenario
	}
	target, err := NewTarget(spec.Network, spec.Dir, name)
	if err != nil {
		return nil, err
	}
	doc, err := ServerConfig(spec.ConfigData, target)
	if err != nil {
		return nil, err
	}
	proc, err := serverproc.Start(serverproc.Spec{Name: "server " + spec.Name, Binary: spec.Binary,
		Config: doc, ConfigFile: filepath.Join(spec.Dir, name+".toml"), Dir: spec.Dir, CPUs: spec.CPUs,
		ReadyLine: spec.ReadyLine, StartTimeout: spec.StartTimeout})
	if err != nil {
		return nil, err
	}
	s := &Server{Name: spec.Name, Binary: spec.Binary, Target: target, proc: proc}
	if target.Network == "tcp" {
		if s.Target, err = boundTCP(proc); err != nil {
			_ = proc.Stop(2 * time.Second)
			return nil, fmt.Errorf("server %s: %w", spec.Name, err)
		}
	}
	return s, nil
}

// boundTCP is the TCP address the server said it listens on.
func boundTCP(p *serverproc.Process) (Target, error) {
	for _, l := range p.Listeners() {
		if l.Network != "tcp" {
			continue
		}
		host, port, err := net.SplitHostPort(l.Address)
		if err != nil {
			return Target{}, fmt.Errorf("listening line %q: %w", l.Address, err)
		}
		n, err := strconv.Atoi(port)
		if err != nil || n <= 0 {
			return Target{}, fmt.Errorf("listening line %q: no port", l.Address)
		}
		return Target{Network: "tcp", Host: host, Port: n}, nil
	}
	return Target{}, errors.New("no \"weaseldb: listening on tcp ...\" line before the ready line")
}

// Alive reports whether the process is still running.
func (s *Server) Alive() bool { return s.proc.Alive() }

// ExitedWithin reports whether the process has exited or exits within d:
// after a failed run, a dying server may still be on its way out.
func (s *Server) ExitedWithin(d time.Duration) bool { return s.proc.ExitedWithin(d) }

// DiedReason is a one-line description of an unexpected exit.
func (s *Server) DiedReason() string {
	return fmt.Sprintf("server %s exited during the runs (status %d)%s", s.Name, s.proc.ExitCode(), s.proc.LastLine())
}

// Pid is the server's process id.
func (s *Server) Pid() int { return s.proc.Pid() }

// Stop sends SIGTERM, waits up to grace for a clean exit, then kills the
// process group. It returns the exit error when the server did not exit 0.
func (s *Server) Stop(grace time.Duration) error { return s.proc.Stop(grace) }
