package eventloop

import (
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// testBackendEnv names the backend the tests' servers run on: make test
// runs this package (and server/app) once as is (epoll) and once with
// WEASELDB_TEST_IO_BACKEND=io_uring, so every behaviour test covers both.
const testBackendEnv = "WEASELDB_TEST_IO_BACKEND"

// withTestBackend sets opt's backend from the environment, unless set.
func withTestBackend(opt Options) Options {
	if opt.Backend == "" {
		opt.Backend = Backend(os.Getenv(testBackendEnv))
	}
	return opt
}

// dispatch hands an epoll event to the loop's epoll backend, for the tests
// that drive a loop by hand (such loops are created on epoll).
func (l *Loop) dispatch(ev unix.EpollEvent) { l.be.(*epollBackend).dispatch(ev) }

// TestBackendSelection: the backend asked for is the one that serves, or
// epoll with a reason when io_uring is unavailable; an unknown name is
// refused.
func TestBackendSelection(t *testing.T) {
	for _, b := range []Backend{"", BackendEpoll, BackendIOUring} {
		ln, err := ListenTCP("127.0.0.1", 0)
		if err != nil {
			t.Fatal(err)
		}
		var reported []string
		logf := func(format string, args ...any) { reported = append(reported, fmt.Sprintf(format, args...)) }
		srv, err := NewServer([]*Listener{ln}, 1, Options{Backend: b, Logf: logf}, func(int) Handler { return &lineHandler{inline: true} },
			func(err error) { t.Errorf("loop: %v", err) })
		if err != nil {
			t.Fatal(err)
		}
		want := b
		if b == "" {
			want = BackendEpoll
		}
		if b == BackendIOUring && ProbeIOUring() != nil {
			want = BackendEpoll
			if len(reported) != 1 {
				t.Errorf("io_uring unavailable but not reported: %v", reported)
			}
		}
		if got := srv.Backend(); got != want {
			t.Errorf("asked %q: serves on %q, want %q", b, got, want)
		}
		srv.Close()
		for _, l := range srv.Loops() {
			l.closeFds()
		}
		ln.Close()
	}
	ln, _ := ListenTCP("127.0.0.1", 0)
	defer ln.Close()
	if _, err := NewServer([]*Listener{ln}, 1, Options{Backend: "kqueue"}, func(int) Handler { return nil }, nil); err == nil {
		t.Error("backend kqueue accepted")
	}
}

// TestTestBackend says which backend the behaviour tests of this run serve
// on (go test -v shows it), and fails when they were asked to run on
// io_uring, io_uring is available, and they serve on something else: a
// second run that silently fell back would cover epoll twice.
func TestTestBackend(t *testing.T) {
	srv, _, _ := startLineServer(t, 1, 1, true, Options{})
	got := srv.Backend()
	t.Logf("behaviour tests serve on %s (%s=%q)", got, testBackendEnv, os.Getenv(testBackendEnv))
	if want := Backend(os.Getenv(testBackendEnv)); want == BackendIOUring && ProbeIOUring() == nil && got != want {
		t.Errorf("asked for %s, which is available, but serving on %s", want, got)
	}
}
