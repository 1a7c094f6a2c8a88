package loadtester

import (
	"os"
	"testing"
	"time"

	"weaseldb/internal/uring"
)

// testIOBackendEnv runs the package's tests on another engine:
// LOADTESTER_TEST_IO_BACKEND=epoll makes it DefaultConfig's (and so
// every test's that builds its Config from DefaultConfig or testConfig),
// as WEASELDB_TEST_IO_BACKEND does for the server's suites (make race
// runs both). Tests that drive a thread's epoll events by hand build their
// threads without a runner's engine choice and stay on epoll. go test's
// cache keys a result on the variables a test reads while it runs, not in
// init: testConfig reads it again for that, and a run that builds its
// Config otherwise wants -count=1 (as make race has).
const testIOBackendEnv = "LOADTESTER_TEST_IO_BACKEND"

func init() {
	if b := os.Getenv(testIOBackendEnv); b != "" {
		defaultIOBackend = b
	}
}

// Each engine runs plain HTTP/1.1 over TCP and a unix socket, closed loop
// (unpipelined and pipelined) and open loop, and says which one ran; an
// io_uring the kernel refuses falls back to epoll and says why.
func TestEnginesRun(t *testing.T) {
	uringOK := uring.Probe() == nil
	for _, backend := range []string{IOBackendEpoll, IOBackendIOUring} {
		for _, tc := range []struct {
			name     string
			network  string
			pipeline int
			rate     float64
		}{
			{"tcp", "tcp", 1, 0},
			{"tcp pipelined", "tcp", 16, 0},
			{"unix", "unix", 1, 0},
			{"tcp open loop", "tcp", 1, 2000},
		} {
			t.Run(backend+" "+tc.name, func(t *testing.T) {
				s := startTestServer(t, tc.network, nil)
				cfg := testConfig(s)
				cfg.IOBackend, cfg.Pipeline, cfg.Rate = backend, tc.pipeline, tc.rate
				cfg.Duration = 300 * time.Millisecond
				res := runOK(t, cfg)
				if res.Answered == 0 || res.Failed != 0 || res.Errors != 0 {
					t.Fatalf("answered %d, failed %d, errors %d", res.Answered, res.Failed, res.Errors)
				}
				switch {
				case backend == IOBackendIOUring && !uringOK && res.IOBackendFallback == "":
					t.Fatalf("io_uring fell back with no reason")
				case res.IOBackend == backend && res.IOBackendFallback != "":
					t.Fatalf("a fallback reason (%q) where none fell back", res.IOBackendFallback)
				}
			})
		}
	}
}
