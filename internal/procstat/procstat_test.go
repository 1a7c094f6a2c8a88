package procstat

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"
)

// burn spins on the calling goroutine until d of wall time has passed.
func burn(d time.Duration) {
	x := 0
	for start := time.Now(); time.Since(start) < d; {
		for i := 0; i < 1000; i++ {
			x += i
		}
	}
	runtime.KeepAlive(x)
}

func TestSelfCPUGrowsWithWork(t *testing.T) {
	before, err := SelfCPU()
	if err != nil {
		t.Fatal(err)
	}
	burn(50 * time.Millisecond)
	after, err := SelfCPU()
	if err != nil {
		t.Fatal(err)
	}
	// On a loaded machine the burner may get little CPU; only require progress.
	if after <= before {
		t.Fatalf("SelfCPU did not grow: before %v, after %v", before, after)
	}
}

func TestThreadCPUCountsOnlyThisThread(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start, err := ThreadCPU()
	if err != nil {
		t.Fatal(err)
	}
	// This thread sleeps while another goroutine burns: its own CPU must stay
	// well below the burner's.
	done := make(chan struct{})
	go func() { burn(100 * time.Millisecond); close(done) }()
	selfBefore, _ := SelfCPU()
	<-done
	selfAfter, _ := SelfCPU()
	idle, err := ThreadCPU()
	if err != nil {
		t.Fatal(err)
	}
	if spent, total := idle-start, selfAfter-selfBefore; total > 20*time.Millisecond && spent > total/2 {
		t.Fatalf("a waiting thread used %v while the process used %v", spent, total)
	}
	burn(30 * time.Millisecond)
	busy, err := ThreadCPU()
	if err != nil {
		t.Fatal(err)
	}
	if busy <= idle {
		t.Fatalf("ThreadCPU did not grow while this thread burned: %v then %v", idle, busy)
	}
}

// TestHelperBurn is not a test: TestPidCPU runs this test binary again
// with PROCSTAT_BURN=1 so that it burns CPU as a child process.
func TestHelperBurn(t *testing.T) {
	if os.Getenv("PROCSTAT_BURN") != "1" {
		t.Skip("helper process for TestPidCPU")
	}
	burn(30 * time.Second) // killed by the parent long before
}

func TestPidCPU(t *testing.T) {
	if _, err := PidCPU(os.Getpid()); err != nil {
		t.Fatalf("own pid: %v", err)
	}
	if _, err := PidCPU(-1); err == nil {
		t.Fatal("PidCPU(-1) did not fail")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperBurn$")
	cmd.Env = append(os.Environ(), "PROCSTAT_BURN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// The child needs one clock tick (10 ms) of CPU to show; give a loaded
	// machine plenty of time.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		d, err := PidCPU(cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		if d > 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("child's CPU stayed 0 while it burned")
}
