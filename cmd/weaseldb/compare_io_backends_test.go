package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Stand-ins for the binaries scripts/compare_io_backends.sh runs: a server
// that says which backend its config asked for and records its pid, a
// load_tester that writes its JSON as the real one does (no "warmup" with
// --warmup 0), and a wrk that prints its two lines the script reads.
const (
	stubServer = `#!/usr/bin/env bash
echo $$ >>"$STUB_PIDS"
backend=$(sed -n 's/^io_backend = "\(.*\)"/\1/p' "$2")
echo "weaseldb: io_backend $backend"
echo "weaseldb: ready"
trap 'exit 0' TERM
while :; do sleep 0.05; done
`
	stubLoadTester = `#!/usr/bin/env bash
while [ $# -gt 0 ]; do case $1 in --json) j=$2; shift ;; --warmup) w=$2; shift ;; esac; shift; done
if [ "$w" = 0 ]; then echo '{"requests":1000,"requests_per_sec":1000}' >"$j"
else echo '{"requests":1000,"requests_per_sec":1000,"warmup":{"answered":10}}' >"$j"; fi
`
	stubWrk = "#!/usr/bin/env bash\necho '  1000 requests in 1.00s'\necho 'Requests/sec:   1000.00'\n"
)

// With WARMUP=0 the script measures and ends cleanly, and no server it
// started outlives it (it used to stop at a KeyError on the result's
// missing "warmup", with its server left running); the io_uring peek and
// budget variants are measured beside io_uring.
func TestCompareIOBackendsWithoutWarmup(t *testing.T) {
	for _, tool := range []string{"bash", "python3", "taskset", "sed", "awk", "pgrep"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: compare_io_backends.sh needs it", tool)
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"weaseldb": stubServer, "load_tester": stubLoadTester, "wrk": stubWrk} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	pids := filepath.Join(dir, "pids")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "../../scripts/compare_io_backends.sh")
	cmd.Env = append(os.Environ(), "BUILD_DIR="+bin, "PATH="+bin+":"+os.Getenv("PATH"), "STUB_PIDS="+pids,
		"WARMUP=0", "PAIRS=1", "DURATION=1", "SKIP_STRACE=1", "SKIP_IDLE=1", "SERVER_CPU=0", "CLIENT_CPU=0",
		"URING_PEEK_NS=1000", "URING_BUDGET=8")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("compare_io_backends.sh with WARMUP=0: %v\n%s", err, out)
	}
	for _, want := range []string{"io_uring / epoll: req/s", "io_uring_peek / io_uring: req/s", "io_uring_budget / io_uring: req/s"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	started, err := os.ReadFile(pids)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(started))
	if len(lines) == 0 {
		t.Fatal("the script started no server")
	}
	for _, line := range lines {
		pid, err := strconv.Atoi(line)
		if err != nil {
			t.Fatal(err)
		}
		if syscall.Kill(pid, 0) == nil {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("server %d outlived the script", pid)
		}
	}
}
