package main

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"weaseldb/internal/testenv"
)

// On a terminal, --rate-steps shows its interval lines as one line
// rewritten in place, with about how long is left, and keeps the table's
// rows; piped, the same run writes plain lines only.
func TestRateStepsProgressOnATerminal(t *testing.T) {
	bin := buildBinary(t)
	s := startOKServer(t, 0)
	args := []string{"--port", s.port(), "--concurrency", "2", "--rate-steps", "200,400",
		"--duration", "0.6", "--stats-interval", "0.2"}

	control, term, err := testenv.OpenPTY(200)
	if err != nil {
		t.Skipf("no pty here: %v", err)
	}
	defer control.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout = term
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	term.Close() // the child holds it; reads end (EIO) once it exits
	var out bytes.Buffer
	_, _ = io.Copy(&out, control)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("load_tester: %v: %s", err, stderr.String())
	}
	tty := out.String()
	if !strings.Contains(tty, "\r\x1b[K") || !strings.Contains(tty, " left]") {
		t.Errorf("on a terminal: no line rewritten in place with the time left:\n%q", tty)
	}
	if !strings.Contains(tty, "400") {
		t.Errorf("on a terminal: the steps' table lost:\n%q", tty)
	}

	piped, err := exec.CommandContext(ctx, bin, args...).Output()
	if err != nil {
		t.Fatalf("load_tester piped: %v", err)
	}
	if bytes.Contains(piped, []byte("\r")) || bytes.Contains(piped, []byte("\x1b[")) {
		t.Errorf("piped output has terminal controls:\n%q", piped)
	}
}
