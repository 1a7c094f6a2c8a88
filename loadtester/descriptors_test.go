package loadtester

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"weaseldb/internal/testenv"
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
// limit (soft and hard: no raising it back) and call Run.
const descriptorChildEnv = "LOADTESTER_DESCRIPTOR_CHILD"

func TestDescriptorChild(t *testing.T) {
	if os.Getenv(descriptorChildEnv) != "1" {
		t.Skip("run by TestRunRefusesMoreConnectionsThanDescriptors")
	}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 64, Max: 64}); err != nil {
		t.Fatalf("setrlimit: %v", err)
	}
	cfg := DefaultConfig()
	cfg.UnixSocket, cfg.Concurrency, cfg.Duration = "/nonexistent/none.sock", 100, time.Second
	_, err := Run(context.Background(), cfg)
	t.Logf("Run: %v", err) // for the parent to read (it runs this with -test.v)
	if !errors.Is(err, ErrTooFewDescriptors) {
		t.Errorf("err %v, want ErrTooFewDescriptors", err)
	}
}

// A run that cannot hold its connections is refused before it starts
// (ErrTooFewDescriptors, the numbers and the fix in one line) instead of
// running with fewer connections than asked and a count of connect errors.
// cmd/load_tester's tests check the exit status the command makes of it.
func TestRunRefusesMoreConnectionsThanDescriptors(t *testing.T) {
	cmd := testenv.Command(os.Args[0], "-test.run=^TestDescriptorChild$", "-test.v")
	cmd.Env = append(os.Environ(), descriptorChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("exit %v, want ErrTooFewDescriptors:\n%s", err, out)
	}
	for _, want := range []string{"--concurrency 100 needs", "64", "ulimit -n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("error lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "cannot connect") {
		t.Errorf("it tried the target first:\n%s", out)
	}
}
