package serverproc

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"weaseldb/internal/affinity"
	"weaseldb/internal/syncbuf"
)

// The test binary doubles as a fake weaseldb: run through a symlink named
// "fakeweaseldb", TestMain hands it to fakeMain. It speaks weaseldb's
// start-up contract (docs/CONTRACTS.md) and misbehaves as its config's
// [fake] table says.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "fakeweaseldb" {
		os.Exit(fakeMain(os.Args[1:]))
	}
	// The fakes are this test binary: built with -race, each would sleep
	// a second at exit (the race runtime's atexit_sleep_ms default), which
	// was most of this package's test time.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	os.Exit(m.Run())
}

type fakeConfig struct {
	Server struct {
		Interfaces []struct {
			Type, Address, Path string
			Port                int
		}
	}
	Fake struct {
		ExitBeforeReady int    `toml:"exit_before_ready"` // exit with this status before ready
		NeverReady      bool   `toml:"never_ready"`
		IgnoreTerm      bool   `toml:"ignore_term"`   // SIGTERM does nothing
		ExitOnTerm      int    `toml:"exit_on_term"`  // status after SIGTERM
		Child           bool   `toml:"child"`         // start a child that holds stdout open
		Echo            string `toml:"echo"`          // printed as "fake: echo=<value>"
		NoNewlineLast   string `toml:"no_newline"`    // printed on stderr without a newline before exiting
		DieAfterReady   int    `toml:"die_after_ms"`  // exit 3 this long after ready
		StderrLine      string `toml:"stderr_line"`   // printed on stderr before ready
		PrintCPUs       bool   `toml:"print_cpus"`    // "fake: cpus=<Cpus_allowed_list>"
		ReadyOnStderr   bool   `toml:"ready_stderr"`  // the ready line on stderr (not a ready line)
		SlowStartMillis int    `toml:"slow_start_ms"` // sleep before listening
		PrintEnv        string `toml:"print_env"`     // "fake: env=<value of that variable>"
	}
}

func fakeMain(args []string) int {
	fs := flag.NewFlagSet("fakeweaseldb", flag.ContinueOnError)
	cfgPath := fs.String("config", "", "")
	extra := fs.String("extra", "", "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var cfg fakeConfig
	if *cfgPath != "" {
		if _, err := toml.DecodeFile(*cfgPath, &cfg); err != nil {
			fmt.Fprintln(os.Stderr, "fakeweaseldb:", err)
			return 1
		}
	}
	f := cfg.Fake
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	if f.SlowStartMillis > 0 {
		time.Sleep(time.Duration(f.SlowStartMillis) * time.Millisecond)
	}
	if *extra != "" {
		fmt.Println("fake: extra=" + *extra)
	}
	if f.Echo != "" {
		fmt.Printf("fake: echo=%s\n", strconv.Quote(f.Echo))
	}
	if f.PrintEnv != "" {
		fmt.Println("fake: env=" + os.Getenv(f.PrintEnv))
	}
	if f.PrintCPUs {
		status, _ := os.ReadFile("/proc/self/status")
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				fmt.Println("fake: cpus=" + strings.TrimSpace(v))
			}
		}
	}
	if f.StderrLine != "" {
		fmt.Fprintln(os.Stderr, f.StderrLine)
	}
	if f.ExitBeforeReady != 0 {
		fmt.Fprintln(os.Stderr, "fakeweaseldb: bind: address already in use")
		return f.ExitBeforeReady
	}
	fmt.Println("weaseldb: GOMAXPROCS=7")
	for _, iface := range cfg.Server.Interfaces {
		network, addr := "unix", iface.Path
		if iface.Type == "tcp" {
			network, addr = "tcp", net.JoinHostPort(iface.Address, strconv.Itoa(iface.Port))
		}
		l, err := net.Listen(network, addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakeweaseldb:", err)
			return 1
		}
		defer l.Close()
		fmt.Printf("weaseldb: listening on %s %s\n", network, l.Addr())
	}
	if f.Child {
		child := exec.Command("sleep", "60")
		child.Stdout = os.Stdout // holds the supervisor's pipe open
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fakeweaseldb:", err)
			return 1
		}
		fmt.Printf("fake: child=%d\n", child.Process.Pid)
	}
	switch {
	case f.NeverReady:
	case f.ReadyOnStderr:
		fmt.Fprintln(os.Stderr, "weaseldb: ready")
	default:
		fmt.Println("weaseldb: ready")
	}
	if f.DieAfterReady > 0 {
		time.Sleep(time.Duration(f.DieAfterReady) * time.Millisecond)
		fmt.Fprint(os.Stderr, "fakeweaseldb: crashing as told")
		return 3
	}
	for range sigs {
		if !f.IgnoreTerm {
			break
		}
	}
	if f.NoNewlineLast != "" {
		fmt.Fprint(os.Stderr, f.NoNewlineLast)
	}
	fmt.Println("weaseldb: stopped")
	return f.ExitOnTerm
}

// fakeBinary is a symlink named fakeweaseldb to this test binary.
func fakeBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "fakeweaseldb")
	if err := os.Symlink(self, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// shortDir is a temp dir with a path short enough for a unix socket.
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "sp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// start starts the fake with a [fake] table and stops it at cleanup.
func start(t *testing.T, fake map[string]any, mutate ...func(*Spec)) (*Process, error) {
	t.Helper()
	dir := shortDir(t)
	doc := map[string]any{"fake": fake}
	if err := SetInterfaces(doc, UnixInterface(filepath.Join(dir, "w.sock")), TCPInterface("127.0.0.1", 0)); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Name: "server X", Binary: fakeBinary(t), Config: doc, ConfigFile: filepath.Join(dir, "c.toml"),
		StartTimeout: 10 * time.Second}
	for _, m := range mutate {
		m(&spec)
	}
	p, err := Start(spec)
	if p != nil {
		t.Cleanup(func() { p.Stop(time.Second) })
	}
	return p, err
}

func TestStartReadyListenersAndCleanStop(t *testing.T) {
	p, err := start(t, map[string]any{"echo": `a "quoted"` + "\nvalue"})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Alive() || p.ExitCode() != -1 || p.Exit() != nil {
		t.Fatalf("running process: alive %v exit %d %v", p.Alive(), p.ExitCode(), p.Exit())
	}
	ls := p.Listeners()
	if len(ls) != 2 || ls[0].Network != "unix" || !strings.HasSuffix(ls[0].Address, "w.sock") || ls[1].Network != "tcp" {
		t.Fatalf("listeners %+v", ls)
	}
	// Port 0 in the config: the bound port comes back, and it accepts.
	host, port, err := net.SplitHostPort(ls[1].Address)
	if err != nil || host != "127.0.0.1" || port == "0" {
		t.Fatalf("tcp listener %q: %v", ls[1].Address, err)
	}
	c, err := net.DialTimeout("tcp", ls[1].Address, 5*time.Second)
	if err != nil {
		t.Fatalf("dial the reported port: %v", err)
	}
	c.Close()
	if v, ok := p.StartupValue("weaseldb: GOMAXPROCS="); !ok || v != "7" {
		t.Errorf("GOMAXPROCS %q %v", v, ok)
	}
	// The encoder wrote the value so that the server read it back exactly.
	if v, _ := p.StartupValue("fake: echo="); v != strconv.Quote(`a "quoted"`+"\nvalue") {
		t.Errorf("config value read back as %s", v)
	}
	if err := p.Stop(5 * time.Second); err != nil {
		t.Fatalf("clean stop: %v", err)
	}
	if p.Alive() || p.ExitCode() != 0 {
		t.Errorf("after stop: alive %v exit %d", p.Alive(), p.ExitCode())
	}
	if err := p.Stop(5 * time.Second); err != nil {
		t.Errorf("second stop: %v", err)
	}
	if tail := p.Tail(); len(tail) == 0 || tail[len(tail)-1] != "weaseldb: stopped" {
		t.Errorf("tail %q", tail)
	}
}

func TestStartFailures(t *testing.T) {
	tests := []struct {
		name   string
		fake   map[string]any
		mutate func(*Spec)
		want   []string
	}{
		{name: "exits before ready", fake: map[string]any{"exit_before_ready": 4},
			want: []string{"server X exited with status 4 before it was ready", "bind: address already in use"}},
		{name: "never ready", fake: map[string]any{"never_ready": true, "stderr_line": "still thinking"},
			// Long enough for the fake (this test binary, under -race) to
			// start and say its line on a loaded machine: at 300 ms it had
			// not, and the error had no last line to name.
			mutate: func(s *Spec) { s.StartTimeout = 3 * time.Second },
			// Its last line, whichever stream it came on (they are read
			// apart, so which of its two lines is last is not fixed).
			want: []string{`no "weaseldb: ready" line within 3s: `}},
		{name: "ready line on stderr does not count", fake: map[string]any{"ready_stderr": true},
			mutate: func(s *Spec) { s.StartTimeout = 300 * time.Millisecond }, want: []string{"no \"weaseldb: ready\" line"}},
		{name: "missing binary", mutate: func(s *Spec) { s.Binary = "/nonexistent/weaseldb" },
			want: []string{"server X: starting /nonexistent/weaseldb"}},
		{name: "no binary", mutate: func(s *Spec) { s.Binary = "" }, want: []string{"no binary given"}},
		{name: "config without a file", mutate: func(s *Spec) { s.ConfigFile = "" }, want: []string{"needs a ConfigFile"}},
		{name: "config file not writable", mutate: func(s *Spec) { s.ConfigFile = "/nonexistent/dir/c.toml" },
			want: []string{"writing /nonexistent/dir/c.toml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mutate := func(*Spec) {}
			if tt.mutate != nil {
				mutate = tt.mutate
			}
			p, err := start(t, tt.fake, mutate)
			if err == nil || p != nil {
				t.Fatalf("want an error, got a process")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// A process that never gets ready is stopped by Start: no orphan is left.
func TestStartTimeoutLeavesNoProcess(t *testing.T) {
	dir := shortDir(t)
	pidFile := filepath.Join(dir, "pid")
	_, err := start(t, map[string]any{"never_ready": true, "child": true}, func(s *Spec) {
		// Long enough for the fake to start its child and say its pid on
		// a loaded machine (at 500 ms it had not, at load 15).
		s.StartTimeout = 3 * time.Second
		s.Log = &pidLog{path: pidFile}
	})
	if err == nil {
		t.Fatal("want a timeout")
	}
	assertGone(t, readPid(t, pidFile))
}

func TestStopKillsAfterGrace(t *testing.T) {
	dir := shortDir(t)
	pidFile := filepath.Join(dir, "pid")
	p, err := start(t, map[string]any{"ignore_term": true, "child": true}, func(s *Spec) { s.Log = &pidLog{path: pidFile} })
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	err = p.Stop(300 * time.Millisecond)
	var ee *ExitError
	if !errors.As(err, &ee) || !ee.Killed || ee.Code != 128+int(syscall.SIGKILL) {
		t.Fatalf("stop of a server ignoring SIGTERM: %v (%+v)", err, ee)
	}
	if !strings.Contains(err.Error(), "did not exit within 300ms of SIGTERM; killed") {
		t.Errorf("message %q", err)
	}
	// The child in its process group went too, and Wait did not hang on
	// the stdout it held open.
	assertGone(t, readPid(t, pidFile))
	if took := time.Since(began); took > 8*time.Second {
		t.Errorf("stop took %v", took)
	}
}

func TestExitCodesAndLog(t *testing.T) {
	t.Run("non-zero status after SIGTERM", func(t *testing.T) {
		p, err := start(t, map[string]any{"exit_on_term": 5, "no_newline": "unterminated last words"})
		if err != nil {
			t.Fatal(err)
		}
		err = p.Stop(5 * time.Second)
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Killed || ee.Code != 5 || p.ExitCode() != 5 {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("dies on its own", func(t *testing.T) {
		var log syncbuf.Buffer
		p, err := start(t, map[string]any{"die_after_ms": 100, "stderr_line": "to stderr"}, func(s *Spec) { s.Log = &log })
		if err != nil {
			t.Fatal(err)
		}
		if !p.ExitedWithin(10 * time.Second) {
			t.Fatal("did not die")
		}
		<-p.Done() // its output is all read
		if p.ExitCode() != 3 || p.Exit() == nil || !strings.Contains(p.Exit().Error(), "status 3: fakeweaseldb: crashing as told") {
			t.Fatalf("exit %d: %v", p.ExitCode(), p.Exit())
		}
		if p.LastLine() != ": fakeweaseldb: crashing as told" {
			t.Errorf("last line %q", p.LastLine())
		}
		for _, want := range []string{"to stderr\n", "weaseldb: GOMAXPROCS=7\n", "weaseldb: ready\n", "crashing as told\n"} {
			if !strings.Contains(log.String(), want) {
				t.Errorf("log lacks %q:\n%s", want, log.String())
			}
		}
	})
	t.Run("killed by a signal", func(t *testing.T) {
		p, err := start(t, nil)
		if err != nil {
			t.Fatal(err)
		}
		syscall.Kill(p.Pid(), syscall.SIGKILL)
		<-p.Done()
		if p.ExitCode() != 137 {
			t.Errorf("exit %d, want 137", p.ExitCode())
		}
	})
}

func TestArgsDirAndRelativeBinary(t *testing.T) {
	bin := fakeBinary(t)
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, bin)
	if err != nil {
		t.Skip(err)
	}
	dir := shortDir(t)
	p, err := Start(Spec{Binary: rel, Dir: dir, Args: []string{"--extra", "x y"}, StartTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	if v, _ := p.StartupValue("fake: extra="); v != "x y" {
		t.Errorf("extra %q", v)
	}
	if p.Name() != "fakeweaseldb" {
		t.Errorf("default name %q", p.Name())
	}
}

// A wrapper runs the binary under another program (the gate's cost tier:
// valgrind), Env reaches the process, and Kill ends it at once, without
// the SIGTERM a wrapper such as valgrind may abort on.
func TestWrapperEnvAndKill(t *testing.T) {
	env, err := exec.LookPath("env")
	if err != nil {
		t.Skip("no env(1)")
	}
	dir := shortDir(t)
	cfg := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(cfg, []byte("[fake]\nprint_env = \"SERVERPROC_TEST\"\nignore_term = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Start(Spec{Binary: fakeBinary(t), ConfigFile: cfg, Dir: dir, Wrapper: []string{env, "SERVERPROC_TEST=wrapped"},
		Env: []string{"SERVERPROC_OTHER=1"}, StartTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := p.StartupValue("fake: env="); v != "wrapped" {
		t.Errorf("the wrapper's variable: %q, want wrapped", v)
	}
	begin := time.Now()
	err = p.Kill()
	var exit *ExitError
	if !errors.As(err, &exit) || exit.Code != 128+int(syscall.SIGKILL) {
		t.Errorf("Kill: %v, want an exit by SIGKILL", err)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("Kill took %v: it must not wait for a SIGTERM the process ignores", d)
	}
	if p.Alive() || p.Stop(time.Second) != err {
		t.Error("after Kill the process must be gone and Stop must return what Kill did")
	}

	// Env alone, without a wrapper.
	if err := os.WriteFile(cfg, []byte("[fake]\nprint_env = \"SERVERPROC_OTHER\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	q, err := Start(Spec{Binary: fakeBinary(t), ConfigFile: cfg, Dir: dir, Env: []string{"SERVERPROC_OTHER=plain"}, StartTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Stop(time.Second)
	if v, _ := q.StartupValue("fake: env="); v != "plain" {
		t.Errorf("Env: %q, want plain", v)
	}
}

func TestPinnedStart(t *testing.T) {
	allowed, err := affinity.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	want := allowed[len(allowed)-1:]
	p, err := start(t, map[string]any{"print_cpus": true}, func(s *Spec) { s.CPUs = want })
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := p.StartupValue("fake: cpus="); v != affinity.FormatCPUList(want) {
		t.Errorf("server's CPUs %q, want %q", v, affinity.FormatCPUList(want))
	}
}

// A process started with StartOn runs on exactly the given CPUs, and the
// caller's own goroutines keep the full mask.
func TestStartOnPinsTheChild(t *testing.T) {
	allowed, err := affinity.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	want := allowed[len(allowed)-1:] // one CPU; works on a 1-CPU machine too
	cmd := exec.Command("sh", "-c", "grep Cpus_allowed_list /proc/self/status")
	var out strings.Builder
	cmd.Stdout = &out
	if err := StartOn(cmd, want); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(out.String()), "Cpus_allowed_list:"))
	if got != affinity.FormatCPUList(want) {
		t.Errorf("child's CPUs %q, want %q", got, affinity.FormatCPUList(want))
	}
	// The thread that forked was pinned and never unlocked, so the runtime
	// ended it (or, if it was the main thread, parked it for good): no
	// goroutine may run on a narrowed mask afterwards.
	for range 20 {
		mask := make(chan []int)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpus, _ := affinity.CurrentThreadCPUs()
			mask <- cpus
		}()
		if got := <-mask; !reflect.DeepEqual(got, allowed) {
			t.Fatalf("a goroutine runs on CPUs %v after StartOn, want %v", got, allowed)
		}
	}
	if err := StartOn(exec.Command("true"), []int{1 << 20}); err == nil {
		t.Error("an impossible CPU should be an error")
	}
}

func TestConfigHelpers(t *testing.T) {
	doc, err := ParseConfig([]byte("[server]\nio_threads = 3\ninterfaces = [{ type = \"tcp\", address = \"0.0.0.0\", port = 1 }]\n[x]\nkept = \"yes\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := SetInterfaces(doc, UnixInterface("/tmp/a.sock")); err != nil {
		t.Fatal(err)
	}
	out, err := EncodeConfig(doc)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseConfig(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	server := back["server"].(map[string]any)
	ifaces := server["interfaces"].([]map[string]any)
	if len(ifaces) != 1 || ifaces[0]["path"] != "/tmp/a.sock" || server["io_threads"] != int64(3) ||
		back["x"].(map[string]any)["kept"] != "yes" {
		t.Errorf("round trip:\n%s", out)
	}
	if _, err := ParseConfig([]byte("[server")); err == nil {
		t.Error("broken TOML should be an error")
	}
	if err := SetInterfaces(map[string]any{"server": 3}, UnixInterface("x")); err == nil {
		t.Error("a [server] that is not a table should be an error")
	}
	empty, err := ParseConfig(nil)
	if err != nil || SetInterfaces(empty, TCPInterface("127.0.0.1", 0)) != nil {
		t.Errorf("empty config: %v", err)
	}
}

// TOML strings are UTF-8: a document holding anything else is refused with
// where it is, rather than written as a file the server cannot parse.
func TestEncodeConfigRefusesInvalidUTF8(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  map[string]any
		want string // in the error; "" for no error
	}{
		{"valid path", map[string]any{"server": map[string]any{"interfaces": []map[string]any{UnixInterface("/tmp/é.sock")}}}, ""},
		{"path", map[string]any{"server": map[string]any{"interfaces": []map[string]any{TCPInterface("x", 1), UnixInterface("/tmp/\xfc.sock")}}},
			`server.interfaces[1].path: "/tmp/\xfc.sock" is not valid UTF-8`},
		{"key", map[string]any{"x": map[string]any{"k\xff": 1}}, `key "x.k\xff" is not valid UTF-8`},
		{"list", map[string]any{"a": []any{"ok", "\xc3"}}, `a[1]: "\xc3" is not valid UTF-8`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := EncodeConfig(tc.doc)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := ParseConfig(out); err != nil {
					t.Fatalf("written config does not parse: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if err := WriteConfig(filepath.Join(t.TempDir(), "c.toml"), tc.doc); err == nil {
				t.Error("WriteConfig wrote it")
			}
		})
	}
}

func FuzzConfigRoundTrip(f *testing.F) {
	f.Add([]byte("[server]\nio_threads = 1\n"), "/tmp/x.sock")
	f.Add([]byte("server = 1"), "a\"b")
	f.Fuzz(func(t *testing.T, data []byte, path string) {
		doc, err := ParseConfig(data)
		if err != nil || SetInterfaces(doc, UnixInterface(path)) != nil {
			return
		}
		out, err := EncodeConfig(doc)
		if err != nil {
			// A parsed document is valid UTF-8 throughout, so only a path
			// TOML cannot hold may be refused.
			if utf8.ValidString(path) {
				t.Fatalf("path %q refused: %v", path, err)
			}
			return
		}
		back, err := ParseConfig(out)
		if err != nil {
			t.Fatalf("accepted config written as invalid TOML: %v\n%s", err, out)
		}
		got := back["server"].(map[string]any)["interfaces"].([]map[string]any)[0]["path"]
		if got != path && strings.ToValidUTF8(path, "\uFFFD") == path {
			t.Fatalf("path %q read back as %q", path, got)
		}
	})
}

func TestOutputLines(t *testing.T) {
	o := newOutput(3, "ready", nil)
	w := o.stream(true)
	w.Write([]byte("one\r\ntw"))
	w.Write([]byte("o\n\nthree\nready\nfour\nfi"))
	if got := o.tailLines(); !reflect.DeepEqual(got, []string{"three", "ready", "four"}) {
		t.Errorf("tail %q", got)
	}
	if o.lastLine() != ": fi" {
		t.Errorf("last line with a partial %q", o.lastLine())
	}
	if got := o.startupLines(); !reflect.DeepEqual(got, []string{"one", "two", "", "three", "ready"}) {
		t.Errorf("startup %q", got)
	}
	o.flush()
	if got := o.tailLines(); got[len(got)-1] != "fi" {
		t.Errorf("flushed tail %q", got)
	}
	long := strings.Repeat("x", maxLine+10)
	w.Write([]byte(long))
	if got := o.tailLines(); got[len(got)-1] != long {
		t.Error("an over-long line is kept, not lost")
	}
	if l := o.lastLine(); len(l) > 210 || !strings.HasSuffix(l, "...") {
		t.Errorf("last line not cut: %d bytes", len(l))
	}
}

// pidLog watches the log for the fake's "fake: child=PID" line.
type pidLog struct {
	path string
	mu   sync.Mutex
}

func (l *pidLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if v, ok := strings.CutPrefix(strings.TrimSpace(string(p)), "fake: child="); ok {
		os.WriteFile(l.path, []byte(v), 0o644)
	}
	return len(p), nil
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the fake's child pid: %v", err)
	}
	pid, err := strconv.Atoi(string(data))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// assertGone waits a little for pid to disappear (it may be a zombie of
// its reaped parent for a moment).
func assertGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return
		}
		if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("process %d outlived its server", pid)
}
