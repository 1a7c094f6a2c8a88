package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// repoBinary finds build/<name> at the repository root (make build), or the
// path in $GATE_<NAME> (e.g. GATE_LOAD_TESTER=/tmp/x/load_tester), and skips
// the test when there is none.
func repoBinary(t *testing.T, name string) string {
	t.Helper()
	if env := os.Getenv("GATE_" + strings.ToUpper(name)); env != "" {
		return env
	}
	p, err := filepath.Abs(filepath.Join("..", "build", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s not built (run make build); skipping", p)
	}
	return p
}

// TestGateWithRealLoadTester drives the fake servers with the real
// load_tester: its measured req/s, not a model. On a machine shared with
// other work the exact verdict may be "could not judge", so the test asserts
// what must never happen: A/A called a regression, or a B three times as
// slow called a pass.
func TestGateWithRealLoadTester(t *testing.T) {
	lt := repoBinary(t, "load_tester")
	o := quickOptions(t)
	o.LoadTester = lt
	// Runs long enough that a starved (race-instrumented) fake still answers.
	o.Rounds = 4
	o.Duration = time.Second
	o.Warmup = 300 * time.Millisecond
	o.Concurrency = 16
	o.AllowClientBound = true // the fakes are slow on purpose; the client idles
	o.Config = writeFile(t, "a.toml", "[fake]\ndelay_us = 4000\n")
	t.Run("A/A", func(t *testing.T) {
		r := runGate(t, o)
		if r.Verdict == Regression {
			t.Fatalf("A/A called a regression: %s", r.Reason)
		}
		if r.Verdict == CouldNotJudge && r.ReasonCode != ReasonNoisy {
			t.Fatalf("A/A: %s (%s): %s", r.Verdict, r.ReasonCode, r.Reason)
		}
	})
	t.Run("3x slower B", func(t *testing.T) {
		o := o
		o.BConfig = writeFile(t, "b.toml", "[fake]\ndelay_us = 12000\n")
		r := runGate(t, o)
		if r.Verdict == Pass {
			t.Fatalf("a 3x slower B passed: %s", r.Reason)
		}
		if r.Verdict == CouldNotJudge && r.ReasonCode != ReasonNoisy {
			t.Fatalf("slower B: %s (%s): %s", r.Verdict, r.ReasonCode, r.Reason)
		}
	})
}

// TestGateWithRealWeaseldb is the CI smoke gate run on the real binaries:
// A/A with a generous tolerance and --noise-ok must exit 0, and a B slowed
// by spin work must not pass.
func TestGateWithRealWeaseldb(t *testing.T) {
	lt := repoBinary(t, "load_tester")
	server := repoBinary(t, "weaseldb")
	o := DefaultOptions()
	o.A, o.B, o.LoadTester = server, server, lt
	o.Rounds = 4
	o.Duration = 500 * time.Millisecond
	o.Warmup = 200 * time.Millisecond
	o.WarmupRun = 300 * time.Millisecond
	o.Resamples = 2000
	t.Run("A/A smoke", func(t *testing.T) {
		o := o
		o.Tolerance = 0.5
		o.NoiseOK = true
		if r := runGate(t, o); r.ExitCode != 0 {
			t.Fatalf("A/A smoke: exit %d, %s (%s): %s", r.ExitCode, r.Verdict, r.ReasonCode, r.Reason)
		}
	})
	t.Run("slowed B", func(t *testing.T) {
		o := o
		o.BConfig = writeFile(t, "slow.toml", strings.Replace(string(DefaultConfig()),
			"ok_resolve_iterations = 0", "ok_resolve_iterations = 200000", 1))
		r := runGate(t, o)
		if r.Verdict == Pass {
			t.Fatalf("a B spinning 200000 iterations per /ok passed: %s", r.Reason)
		}
		if r.Verdict == CouldNotJudge && r.ReasonCode != ReasonNoisy && r.ReasonCode != ReasonClientBound {
			t.Fatalf("slowed B: %s (%s): %s", r.Verdict, r.ReasonCode, r.Reason)
		}
	})
}
