package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"weaseldb/internal/peertable"
)

// stubLoadTester stands in for load_tester: it records its arguments (one
// run a line) and writes a --json result that ran on epoll, saying why
// when io_uring was asked for and FALLBACK is set.
const stubLoadTester = `#!/usr/bin/env bash
echo "$*" >>"$ARGS_LOG"
while [ $# -gt 0 ]; do case $1 in --json) j=$2; shift ;; --io-backend) b=$2; shift ;; esac; shift; done
ran=$b; [ -z "$FALLBACK" ] || ran=epoll
printf '{"requests":1000,"requests_per_sec":1000,"io_backend":"%s","io_backend_fallback":"%s"}\n' "$ran" "$FALLBACK" >"$j"
`

// stubValgrind runs its command without its options; stubPeers counts
// 1000 instructions in any dump.
const (
	stubValgrind = "#!/usr/bin/env bash\nwhile [ \"${1#--}\" != \"$1\" ]; do shift; done\nexec \"$@\"\n"
	stubPeers    = "#!/usr/bin/env bash\necho 1000 1000\n"
)

// clientsDriver sources the script's client, sample and count libraries
// and runs two rounds of two client scenarios with the stub, then the
// callgrind pass's client run (under the stub valgrind).
const clientsDriver = `set -euo pipefail
ROOT=$1; WORK=$2; BIN=$2/bin
CONNS=1 DURATION=1 RATE=10 CLIENT_ON=() SAMPLES=$WORK/samples.jsonl
PLAIN_URL=http://127.0.0.1:1/ok TLS_URL=https://127.0.0.1:1/ok TLS_DIR=$WORK
PEERS=$BIN/peers COST_GODEBUG= COST_CLIENT_S=1 COST_CONNS=1 PATH=$BIN:$PATH
. "$ROOT/scripts/lib/tools.sh"; . "$ROOT/scripts/lib/peers_samples.sh"; . "$ROOT/scripts/lib/peers_clients.sh"
. "$ROOT/scripts/lib/peers_counts.sh"
have_tool() { return 1; }  # no peers: load_tester's rows alone
CLIENT_PAIRS=("closed wrk2" "https11 wrk2")
client_round 1; client_round 2
: >"$ARGS_LOG"
LT_IO_BACKEND=io_uring cost_client closed load_tester
`

func runClients(t *testing.T, fallback string) (samples []peertable.Sample, args []string, output string) {
	t.Helper()
	for _, tool := range []string{"bash", "python3", "/usr/bin/time", "awk"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: compare_peers.sh needs it", tool)
		}
	}
	work := t.TempDir()
	if err := os.Mkdir(filepath.Join(work, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"load_tester": stubLoadTester, "valgrind": stubValgrind, "peers": stubPeers} {
		if err := os.WriteFile(filepath.Join(work, "bin", name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	argsLog := filepath.Join(work, "args.log")
	cmd := exec.Command("bash", "-c", clientsDriver, "driver", "../..", work)
	cmd.Env = append(os.Environ(), "ARGS_LOG="+argsLog, "FALLBACK="+fallback)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("driver: %v\n%s", err, out)
	}
	f, err := os.Open(filepath.Join(work, "samples.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if samples, err = peertable.ReadSamples(f); err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(argsLog)
	if err != nil {
		t.Fatal(err)
	}
	return samples, strings.Split(strings.TrimSpace(string(log)), "\n"), string(out)
}

// TestClientRowsPerEngine: each round runs load_tester once an engine,
// named on its command line, and records each under its own row; the
// callgrind pass's run is on epoll, whatever LT_IO_BACKEND says, and the
// pass says so.
func TestClientRowsPerEngine(t *testing.T) {
	samples, args, out := runClients(t, "")
	loads := map[string]int{}
	for _, s := range samples {
		if s.Kind == peertable.KindLoad {
			loads[s.Scenario+"/"+s.Peer]++
		}
	}
	for _, row := range []string{"closed/load_tester", "closed/load_tester_io_uring", "https11/load_tester", "https11/load_tester_io_uring"} {
		if loads[row] != 2 {
			t.Errorf("%s: %d rounds recorded, want 2 (all: %v)", row, loads[row], loads)
		}
	}
	if len(args) != 1 || !strings.Contains(args[0], "--io-backend epoll") {
		t.Errorf("the callgrind pass's run: %q, want one run with --io-backend epoll", args)
	}
	if !strings.Contains(out, "load_tester runs --io-backend epoll under callgrind (valgrind 3.19 hangs in io_uring_enter)") {
		t.Errorf("the callgrind pass does not say it runs on epoll:\n%s", out)
	}
}

// TestClientRowsFallback: an io_uring run that fell back to epoll is no
// io_uring figure: its row is skipped once a scenario with the reason, and
// the next runs are not made.
func TestClientRowsFallback(t *testing.T) {
	samples, _, _ := runClients(t, "kernel.io_uring_disabled is 2")
	for _, s := range samples {
		if s.Peer != "load_tester_io_uring" {
			continue
		}
		if s.Kind != peertable.KindSkip || s.Metric != "" || !strings.Contains(s.Note, "fell back to epoll: kernel.io_uring_disabled is 2") {
			t.Errorf("io_uring sample %+v, want a skip of the row naming the fallback", s)
		}
	}
	skips := 0
	for _, s := range samples {
		if s.Peer == "load_tester_io_uring" {
			skips++
		}
	}
	if skips != 2 {
		t.Errorf("%d io_uring samples, want one skip a scenario (2)", skips)
	}
}
