package loadtester

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestDescriptorsNeeded(t *testing.T) {
	tests := []struct {
		name                 string
		concurrency, threads int
		soft, hard           uint64
		wantRaise            uint64 // the soft limit to ask for; 0: none
		wantErr              bool
	}{
		{"plenty", 100, 2, 65536, 65536, 0, false},
		{"exactly enough", 100, 2, uint64(100 + 3*2 + descriptorReserve), 1 << 20, 0, false},
		{"soft too low, hard enough: raise it", 1000, 4, 256, 4096, uint64(1000 + 3*4 + descriptorReserve), false},
		{"hard too low: refuse", 100, 1, 40, 40, 0, true},
		{"one short: refuse", 100, 1, uint64(100 + 3 + descriptorReserve - 1), uint64(100 + 3 + descriptorReserve - 1), 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raise, err := descriptorPlan(tc.concurrency, tc.threads, unix.Rlimit{Cur: tc.soft, Max: tc.hard})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if raise != tc.wantRaise {
				t.Errorf("raise to %d, want %d", raise, tc.wantRaise)
			}
			if err != nil && (!errors.Is(err, ErrTooFewDescriptors) || !strings.Contains(err.Error(), "ulimit -n")) {
				t.Errorf("error %q: want ErrTooFewDescriptors saying how to raise the limit", err)
			}
		})
	}
}

// descriptorChildEnv makes the test binary, re-run by
// TestRunRefusesMoreConnectionsThanDescriptors, lower its own descriptor
// limit (soft and hard: no raising it back) and run Main.
const descriptorChildEnv = "LOADTESTER_DESCRIPTOR_CHILD"

func TestDescriptorChild(t *testing.T) {
	if os.Getenv(descriptorChildEnv) != "1" {
		t.Skip("run by TestRunRefusesMoreConnectionsThanDescriptors")
	}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 64, Max: 64}); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		os.Exit(3)
	}
	os.Exit(Main([]string{"--unix-socket", "/nonexistent/none.sock", "--concurrency", "100", "--duration", "1"}, os.Stdout, os.Stderr))
}

// A run that cannot hold its connections is refused before it starts
// (exit 2, the numbers and the fix in one line) instead of running with
// fewer connections than asked and a count of connect errors.
func TestRunRefusesMoreConnectionsThanDescriptors(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestDescriptorChild$")
	cmd.Env = append(os.Environ(), descriptorChildEnv+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != ExitUsage {
		t.Fatalf("exit %v, want %d; stderr: %s", err, ExitUsage, stderr.String())
	}
	for _, want := range []string{"--concurrency 100 needs", "64", "ulimit -n"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q lacks %q", stderr.String(), want)
		}
	}
	if strings.Contains(stderr.String(), "cannot connect") {
		t.Errorf("it tried the target first: %s", stderr.String())
	}
}
