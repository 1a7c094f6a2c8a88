package procstat

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeProc writes files into a temporary directory laid out like /proc and
// returns it as a root to read from.
func fakeProc(t testing.TB, files map[string]string) procRoot {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return procRoot(root)
}

// A /proc/<pid>/stat line as the kernel writes it, with utime 7 and stime 3.
const plainStat = "1234 (bash) S 1 1234 1234 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 1 0 270041 3133440 388 18446744073709551615 " +
	"94215698477056 94215698496937 140730782130656 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 94215698512944 94215698514560 " +
	"94216751517696 140730782132683 140730782132703 140730782132703 140730782134251 0\n"

func TestPidCPUFromStatFile(t *testing.T) {
	tests := []struct {
		name             string
		stat             string
		wantUser, wantSy time.Duration
		wantErr          string
	}{
		{"plain", plainStat, 7 * ClockTick, 3 * ClockTick, ""},
		{"spaces and parens in the command name", strings.Replace(plainStat, "(bash)", "(a) b (c)", 1), 7 * ClockTick, 3 * ClockTick, ""},
		{"large counts", strings.Replace(plainStat, " 7 3 ", " 250000 50000 ", 1), 250000 * ClockTick, 50000 * ClockTick, ""},
		{"no parenthesis", "42 bash S 1 2 3", 0, 0, "42/stat"},
		{"truncated", "42 (x) S 1 2 3", 0, 0, "42/stat"},
		{"not a number", strings.Replace(plainStat, " 7 3 ", " abc 3 ", 1), 0, 0, "42/stat"},
		{"parentheses reversed", "42 ) x ( S 1", 0, 0, "42/stat"},
		{"nothing after the name", "42 (x)", 0, 0, "42/stat"},
		{"empty", "", 0, 0, "42/stat"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := fakeProc(t, map[string]string{"42/stat": tc.stat})
			user, sys, err := root.pidCPU(42)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v+%v, %v; want an error naming %q", user, sys, err, tc.wantErr)
				}
				return
			}
			if err != nil || user != tc.wantUser || sys != tc.wantSy {
				t.Fatalf("got user %v system %v, %v; want %v and %v", user, sys, err, tc.wantUser, tc.wantSy)
			}
		})
	}
}

// PidRunTime sums every thread's schedstat run time, in nanoseconds.
func TestPidRunTime(t *testing.T) {
	root := fakeProc(t, map[string]string{
		"42/task/42/schedstat": "1500000 200 30\n",
		"42/task/43/schedstat": "2500 1 1\n",
		"43/task/43/schedstat": "x 1 1\n",
	})
	got, err := root.pidRunTime(42)
	if err != nil || got != 1502500 {
		t.Fatalf("got %v, %v; want 1.5025ms", got, err)
	}
	if _, err := root.pidRunTime(43); err == nil || !strings.Contains(err.Error(), "not a run time") {
		t.Errorf("a malformed schedstat: %v", err)
	}
	if _, err := root.pidRunTime(44); err == nil {
		t.Error("no such process: no error")
	}
	real, err := PidRunTime(os.Getpid())
	if err != nil || real <= 0 {
		t.Errorf("this process: %v, %v", real, err)
	}
}

func TestPidCPUNoSuchProcess(t *testing.T) {
	root := fakeProc(t, map[string]string{"1/stat": plainStat})
	_, _, err := root.pidCPU(42)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "42/stat") {
		t.Fatalf("error %v: want one wrapping fs.ErrNotExist and naming the file", err)
	}
	if _, _, err := procRoot(filepath.Join(t.TempDir(), "absent")).pidCPU(1); err == nil {
		t.Fatal("a missing /proc was not reported")
	}
}

// FuzzPidCPU: any stat file gives a figure or an error, never a panic.
func FuzzPidCPU(f *testing.F) {
	f.Add([]byte(plainStat))
	f.Add([]byte("42 (a) b) R"))
	f.Add([]byte("42 ) ("))
	f.Add([]byte("(x)"))
	root := fakeProc(f, map[string]string{"42/stat": ""})
	path := filepath.Join(string(root), "42", "stat")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if user, sys, err := root.pidCPU(42); err == nil && (user < 0 || sys < 0) {
			t.Fatalf("negative CPU time: user %v, system %v", user, sys)
		}
	})
}

func TestMachineBusy(t *testing.T) {
	tests := []struct {
		name    string
		stat    string
		want    time.Duration
		wantErr bool
	}{
		// user nice system idle iowait irq softirq steal guest guest_nice
		{"aggregate line", "cpu  100 5 50 1000 20 3 2 1 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\nbtime 1\n",
			(100 + 5 + 50 + 3 + 2 + 1) * ClockTick, false},
		{"per-CPU lines only", "cpu0 1 2 3 4 5 6 7 8 0 0\n", 0, true},
		{"not a number", "cpu 1 2 x 4 5 6 7 8\n", 0, true},
		{"empty", "", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := fakeProc(t, map[string]string{"stat": tc.stat}).machineBusy()
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("got %v, %v; want %v, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestMachineCPUs(t *testing.T) {
	root := fakeProc(t, map[string]string{"stat": "cpu  1 2 3 4 5 6 7 8 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\ncpu3 1 2 3 4 5 6 7 8 0 0\n"})
	if n, err := root.machineCPUs(); n != 2 || err != nil {
		t.Errorf("machineCPUs = %d, %v; want 2", n, err)
	}
	if _, err := fakeProc(t, map[string]string{"stat": "cpu  1 2 3 4 5 6 7 8 0 0\n"}).machineCPUs(); err == nil {
		t.Error("no per-CPU lines accepted")
	}
}

// The real /proc: this machine's figures exist and are sane.
func TestRealProc(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	busy, err := MachineBusy()
	if err != nil || busy <= 0 {
		t.Fatalf("MachineBusy = %v, %v", busy, err)
	}
	if _, err := PidCPU(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if n, err := MachineCPUs(); n < 1 || err != nil {
		t.Fatalf("MachineCPUs = %d, %v", n, err)
	}
	if n, err := ReadCPUName(); err != nil || (n.Model == "") != (n.Source == "") {
		t.Fatalf("ReadCPUName = %+v, %v", n, err)
	}
}
