package cost

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"weaseldb/gate/launch"
	"weaseldb/gate/valgrind"
	"weaseldb/internal/serverproc"
)

// Preflight fits the server's environment to valgrind on this machine
// (gate/valgrind), then starts A under callgrind with it until it is
// ready, and stops it. A server that valgrind cannot run is found here,
// in a few seconds and with one line naming the instruction and the fix,
// rather than as every scenario's "exited before it was ready" with a
// wall of valgrind's output.
func Preflight(ctx context.Context, c Options, p Pair) (valgrind.Env, error) {
	env := valgrind.Probe(ctx, c.Valgrind, c.Godebug)
	dir, err := os.MkdirTemp(p.Dir, "preflight-")
	if err != nil {
		return env, fmt.Errorf("cost preflight: %w", err)
	}
	defer os.RemoveAll(dir)
	target, _ := launch.NewTarget("unix", dir, "preflight")
	doc, err := launch.ServerConfig(p.CfgA, target)
	if err != nil {
		return env, err
	}
	logPath := filepath.Join(dir, "valgrind.log")
	proc, err := serverproc.Start(serverproc.Spec{Name: "server A (callgrind preflight)", Binary: p.BinA, Config: doc,
		ConfigFile: filepath.Join(dir, "preflight.toml"), Dir: dir, Env: env.Environ(), StartTimeout: c.StartTimeout,
		Wrapper: []string{c.Valgrind, "--tool=callgrind", "--callgrind-out-file=" + filepath.Join(dir, "callgrind.%p"),
			"--vgdb-prefix=" + filepath.Join(dir, "vgdb"),
			"--log-file=" + logPath}})
	if err != nil {
		if line, ok := valgrind.ExplainLogFile(logPath); ok {
			return env, fmt.Errorf("cost preflight: %s: %s", p.BinA, line)
		}
		return env, fmt.Errorf("cost preflight: %w%s", err, valgrind.Cause(logPath))
	}
	// SIGKILL: callgrind aborts on SIGTERM, and nothing of this run is kept.
	_ = proc.Kill()
	return env, nil
}
