package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"weaseldb/internal/nettest"
	"weaseldb/internal/procstat"
	"weaseldb/internal/serverproc"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "weaseldb-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "weaseldb")
	out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	body = withTestBackend(body)
	p := filepath.Join(t.TempDir(), "c.toml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runBinary(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, binary, args...).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

func TestBadConfigExitsNamingKey(t *testing.T) {
	for _, tc := range []struct{ body, key string }{
		{"[commit]\npipeline_wait_strategy = \"Sometimes\"\n", "pipeline_wait_strategy"},
		{"[server]\nio_threadz = 2\n", "io_threadz"},
		{"[commit]\npipeline_release_threads = 0\n", "pipeline_release_threads"},
	} {
		code, out := runBinary(t, "--config", writeConfig(t, tc.body))
		if code != 1 || !strings.Contains(out, tc.key) {
			t.Errorf("config %q: exit %d, output %q: want exit 1 naming %s", tc.body, code, out, tc.key)
		}
	}
}

func TestHelp(t *testing.T) {
	code, out := runBinary(t, "--help")
	if code != 0 || !strings.Contains(out, "--config") {
		t.Fatalf("exit %d: %s", code, out)
	}
}

func TestUnbindablePortExits1(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	cfg := fmt.Sprintf("[server]\ninterfaces = [{ type = \"tcp\", address = \"127.0.0.1\", port = %d }]\n", port)
	code, out := runBinary(t, "--config", writeConfig(t, cfg))
	if code != 1 || !strings.Contains(out, "bind") || !strings.Contains(out, fmt.Sprint(port)) {
		t.Fatalf("exit %d, output %q: want exit 1 with a bind error naming the port", code, out)
	}
}

// running is a server started through the tree's one supervisor.
type running struct {
	*serverproc.Process
	addrs []string // "tcp 127.0.0.1:PORT", "unix /path"
}

// startBinary runs the server with cfg and waits for its ready line.
func startBinary(t *testing.T, cfg string) *running {
	t.Helper()
	p, err := serverproc.Start(serverproc.Spec{Name: "weaseldb", Binary: binary, ConfigFile: writeConfig(t, cfg),
		StartTimeout: 15 * time.Second, Log: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(5 * time.Second) })
	r := &running{Process: p}
	for _, l := range p.Listeners() {
		r.addrs = append(r.addrs, l.Network+" "+l.Address)
	}
	return r
}

// SIGTERM: the server answers, exits 0 and removes its unix socket file.
func TestSIGTERMExits0AndRemovesSocket(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "w.sock")
	r := startBinary(t, fmt.Sprintf("[server]\ninterfaces = [{ type = \"tcp\", address = \"127.0.0.1\", port = 0 }, { type = \"unix\", path = %q }]\n[commit]\npipeline_wait_strategy = \"WaitIfStageEmpty\"\n", sock))
	c, err := net.DialTimeout("unix", sock, nettest.DialTimeout)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
	buf := make([]byte, 12)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "HTTP/1.1 200" {
		t.Fatalf("%q %v", buf, err)
	}
	// SIGTERM, then SIGKILL if it has not exited within 15 s.
	if err := r.Stop(15 * time.Second); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket file still there: %v", err)
	}
	if _, err := io.Copy(io.Discard, c); err != nil { // the rest of the response, then EOF
		t.Fatalf("connection not closed cleanly after exit: %v", err)
	}
}

func cpuTicks(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	u, _ := strconv.Atoi(f[11])
	s, _ := strconv.Atoi(f[12])
	return u + s
}

// Out of descriptors (EMFILE on accept): the server backs off instead of
// spinning on the readable listener, and serves the waiting clients once
// descriptors are available again.
func TestEMFILEBacksOffAndRecovers(t *testing.T) {
	r := startBinary(t, "[server]\ninterfaces = [{ type = \"tcp\", address = \"127.0.0.1\", port = 0 }]\n[commit]\npipeline_wait_strategy = \"WaitIfStageEmpty\"\n")
	addr := strings.TrimPrefix(r.addrs[0], "tcp ")
	pid := r.Pid()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Skipf("cannot count the server's descriptors: %v", err)
	}
	var old unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &old); err != nil {
		t.Skipf("prlimit: %v", err)
	}
	low := unix.Rlimit{Cur: uint64(len(fds)), Max: old.Max}
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &low, nil); err != nil {
		t.Skipf("prlimit: %v", err)
	}
	var conns []net.Conn
	for i := 0; i < 20; i++ {
		c, err := net.DialTimeout("tcp", addr, nettest.DialTimeout) // completes in the backlog
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(30 * time.Second))
		io.WriteString(c, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
		conns = append(conns, c)
	}
	// A loop spinning on the readable listener is runnable all the time,
	// on a CPU or queued for one, however loaded the machine is; one that
	// backs off is runnable only around its wake-ups (10 a second). CPU
	// time would not tell them apart on a loaded machine: a spinner gets
	// only its share of the CPUs, and a sleeper's wake-ups cost more.
	before, err := procstat.ThreadsRunnable(pid)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	time.Sleep(time.Second)
	after, err := procstat.ThreadsRunnable(pid)
	if err != nil {
		t.Fatal(err)
	}
	window := time.Since(start)
	for tid, d := range after {
		if busy := float64(d-before[tid]) / float64(window); busy > 0.7 {
			t.Errorf("server thread %d was runnable %.0f%% of the time while out of descriptors: spinning", tid, busy*100)
		}
	}
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &old, nil); err != nil {
		t.Fatal(err)
	}
	for i, c := range conns {
		buf := make([]byte, 12)
		if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "HTTP/1.1 200" {
			t.Fatalf("connection %d after recovery: %q %v", i, buf, err)
		}
	}
}

// With 100 idle keep-alive connections the server sleeps: no periodic
// wake-ups, no spinning stages (the bar is 0.5% of a core over 10 s;
// this shorter check allows 2% for a noisy machine).
func TestIdleServerUsesNoCPU(t *testing.T) {
	for _, strategy := range []string{"WaitIfStageEmpty", "WaitIfUpstreamIdle"} {
		t.Run(strategy, func(t *testing.T) {
			r := startBinary(t, fmt.Sprintf("[server]\ninterfaces = [{ type = \"tcp\", address = \"127.0.0.1\", port = 0 }]\n[commit]\npipeline_wait_strategy = %q\n", strategy))
			addr := strings.TrimPrefix(r.addrs[0], "tcp ")
			for i := 0; i < 100; i++ {
				c, err := net.DialTimeout("tcp", addr, nettest.DialTimeout)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				c.SetDeadline(time.Now().Add(20 * time.Second))
				io.WriteString(c, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
				buf := make([]byte, 12)
				if _, err := io.ReadFull(c, buf); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(300 * time.Millisecond) // past the stages' idle spin
			pid := r.Pid()
			t0 := cpuTicks(t, pid)
			start := time.Now()
			time.Sleep(2 * time.Second)
			frac := float64(cpuTicks(t, pid)-t0) / 100 / time.Since(start).Seconds()
			t.Logf("idle CPU: %.2f%% of one core", frac*100)
			if frac > 0.02 {
				t.Errorf("idle server used %.1f%% of a core", frac*100)
			}
		})
	}
}
