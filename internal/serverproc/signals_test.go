package serverproc

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"weaseldb/internal/syncbuf"
)

// supervisorHelperEnv makes the test binary, re-run by
// TestSupervisorContext, act as a supervisor: it writes to a stdout whose
// reader is gone (a `| tee` killed by Ctrl-C), then waits for its context.
const supervisorHelperEnv = "SERVERPROC_SUPERVISOR_HELPER"

func TestSupervisorHelper(t *testing.T) {
	if os.Getenv(supervisorHelperEnv) != "1" {
		t.Skip("run by TestSupervisorContext")
	}
	ctx, stop := SupervisorContext()
	defer stop()
	_, err := fmt.Println("to a pipe nobody reads")
	fmt.Fprintf(os.Stderr, "write: %v\n", err)
	fmt.Fprintln(os.Stderr, "ready")
	select {
	case <-ctx.Done():
		fmt.Fprintln(os.Stderr, "cancelled: stopping the servers")
		os.Exit(0)
	case <-time.After(20 * time.Second):
		os.Exit(3)
	}
}

// A supervisor survives a write to a dead stdout (EPIPE, not death by
// SIGPIPE), and SIGTERM cancels its context instead of killing it, so it
// can stop its servers.
func TestSupervisorContext(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // the reader is gone before the first write
	cmd := exec.Command(os.Args[0], "-test.run=^TestSupervisorHelper$")
	cmd.Env = append(os.Environ(), supervisorHelperEnv+"=1")
	var stderr syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(stderr.String(), "ready") {
		select {
		case err := <-done:
			t.Fatalf("the supervisor died before it was ready (%v): %s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no ready line: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit %v, want 0 after its context was cancelled: %s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("SIGTERM did not cancel the context")
	}
	out := stderr.String()
	if !strings.Contains(out, "broken pipe") || !strings.Contains(out, "cancelled") {
		t.Errorf("stderr %q: want the write's EPIPE and the cancellation", out)
	}
}
