package gate

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"weaseldb/gate/cost"
	"weaseldb/gate/result"
)

// fakeValgrindMain behaves as valgrind 3.19 does on a CPU where its
// synthetic CPUID offers RDTSCP that its decoder cannot run: -v prints the
// hwcaps (FAKE_VALGRIND_HWCAPS, default without rdtscp), --version its
// version, and a program run under it dies with SIGILL in runtime.cputicks
// unless GODEBUG turns rdtscp off, in which case the program runs.
func fakeValgrindMain(args []string) int {
	if slices.Contains(args, "--version") {
		os.Stdout.WriteString("valgrind-3.19.0\n")
		return 0
	}
	if slices.Contains(args, "-v") {
		hw := os.Getenv("FAKE_VALGRIND_HWCAPS")
		if hw == "" {
			hw = "amd64-cx16-lzcnt-sse3-ssse3-avx-avx2-bmi-f16c-rdrand"
		}
		os.Stderr.WriteString("--1-- Arch and hwcaps: AMD64, LittleEndian, " + hw + "\n")
		return 0
	}
	var logPath string
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "--"); i++ {
		if v, ok := strings.CutPrefix(args[i], "--log-file="); ok {
			logPath = v
		}
	}
	if i == len(args) {
		os.Stderr.WriteString("valgrind: no program given\n")
		return 1
	}
	if strings.Contains(os.Getenv("GODEBUG"), "cpu.rdtscp=off") {
		err := syscall.Exec(args[i], args[i:], os.Environ())
		os.Stderr.WriteString("fakevalgrind: " + err.Error() + "\n")
		return 1
	}
	crash, err := os.ReadFile(filepath.Join(os.Getenv("FAKE_VALGRIND_TESTDATA"), "valgrind319_rdtscp.log"))
	if err == nil && logPath != "" {
		err = os.WriteFile(logPath, crash, 0o644)
	}
	if err != nil {
		os.Stderr.WriteString("fakevalgrind: " + err.Error() + "\n")
	}
	// What the Go runtime prints when valgrind delivers the SIGILL.
	os.Stderr.WriteString("SIGILL: illegal instruction\nPC=0x492fe9 m=2 sigcode=128\n\ngoroutine 0 gp=0xc000003340 m=2 mp=0xc000080008 [idle]:\nrip    0x492fe9\ngs     0x0\n")
	return 2
}

func fakeValgrind(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "fakevalgrind")
	if err := os.Symlink(self, p); err != nil {
		t.Fatal(err)
	}
	// The crash log is gate/valgrind's fixture (its ExplainLog test reads it).
	abs, err := filepath.Abs(filepath.Join("valgrind", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_VALGRIND_TESTDATA", abs)
	return p
}

// TestCostPreflight runs the preflight against a valgrind that cannot run
// RDTSCP: where it says so in its hwcaps, the gate turns rdtscp off and the
// server starts; where it does not (the features cannot be told apart),
// the preflight fails with the one explained line, and so does every
// scenario of the cost tier, before any cost run.
func TestCostPreflight(t *testing.T) {
	server, lt := fakeBinaries(t)
	valgrind := fakeValgrind(t)
	c := cost.DefaultOptions()
	c.Valgrind, c.Control, c.StartTimeout = valgrind, "true", 30*time.Second
	p := cost.Pair{BinA: server, BinB: server, CfgA: []byte("[fake]\n"), CfgB: []byte("[fake]\n"), LoadTester: lt, Dir: t.TempDir()}

	env, err := cost.Preflight(context.Background(), c, p)
	if err != nil {
		t.Fatalf("preflight with rdtscp off: %v", err)
	}
	if !slices.Equal(env.CPUOff, []string{"rdtscp"}) || env.Version != "valgrind-3.19.0" || !strings.Contains(env.Godebug(), "cpu.rdtscp=off") {
		t.Errorf("env %+v", env)
	}

	t.Setenv("FAKE_VALGRIND_HWCAPS", "amd64-cx16-lzcnt-rdtscp-sse3-ssse3-avx-avx2-bmi-f16c-rdrand")
	_, err = cost.Preflight(context.Background(), c, p)
	if err == nil || !strings.Contains(err.Error(), "RDTSCP") || !strings.Contains(err.Error(), "runtime.cputicks") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("preflight against a valgrind that dies: %v, want one line naming RDTSCP in runtime.cputicks", err)
	}
	scs := []cost.Scenario{{Name: "ok"}, {Name: "commit"}}
	out := cost.RunTier(context.Background(), c, scs, p, cost.ProcessLab{}, nil) // nil: --quiet
	for i, j := range out {
		if j.Verdict != result.CostCouldNotJudge || !strings.Contains(j.Reason, "RDTSCP") || j.Valgrind == nil || j.Valgrind.Version != "valgrind-3.19.0" {
			t.Errorf("scenario %s: %s %q valgrind %+v", scs[i].Name, j.Verdict, j.Reason, j.Valgrind)
		}
	}
	// The user's own GODEBUG is how to get past it.
	c.Godebug = "cpu.rdtscp=off"
	if _, err := cost.Preflight(context.Background(), c, p); err != nil {
		t.Errorf("preflight with --cost-godebug cpu.rdtscp=off: %v", err)
	}
}

// TestCostTierSaysWhatItTurnedOff: with progress, one line naming the
// options turned off; without (--quiet), none, and no crash.
func TestCostTierSaysWhatItTurnedOff(t *testing.T) {
	server, lt := fakeBinaries(t)
	c := cost.DefaultOptions()
	c.Valgrind, c.Control, c.StartTimeout = fakeValgrind(t), "true", 30*time.Second
	c.Requests, c.Runs, c.MaxRuns = 10, 2, 2
	p := cost.Pair{BinA: server, BinB: server, CfgA: []byte("[fake]\n"), CfgB: []byte("[fake]\n"), LoadTester: lt, Dir: t.TempDir()}
	var progress strings.Builder
	for _, w := range []io.Writer{nil, &progress} {
		out := cost.RunTier(context.Background(), c, []cost.Scenario{{Name: "ok"}}, p, cost.ProcessLab{}, w)
		if len(out) != 1 || out[0].Valgrind == nil || !slices.Equal(out[0].Valgrind.CPUOff, []string{"rdtscp"}) {
			t.Fatalf("%+v", out)
		}
	}
	if !strings.Contains(progress.String(), "cannot execute Go's [rdtscp] here; the servers run with GODEBUG=asyncpreemptoff=1,memprofilerate=0,cpu.rdtscp=off") {
		t.Errorf("progress %q", progress.String())
	}
}
