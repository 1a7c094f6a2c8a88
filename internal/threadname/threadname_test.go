package threadname

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func threadComm(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/comm", unix.Gettid()))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	return strings.TrimSuffix(string(b), "\n")
}

// Name names the calling thread (at most 15 bytes, the kernel's
// limit) and restore gives it its old name back.
func TestName(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"io-0", "io-0"},
		{"release-12", "release-12"},
		{"a-name-longer-than-fifteen", "a-name-longer-t"},
	} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			old := threadComm(t)
			restore, err := Name(tc.name)
			if err != nil {
				t.Error(err)
				return
			}
			if got := threadComm(t); got != tc.want {
				t.Errorf("Name(%q): comm %q, want %q", tc.name, got, tc.want)
			}
			restore()
			if got := threadComm(t); got != old {
				t.Errorf("after restore: comm %q, want %q", got, old)
			}
		}()
		<-done
	}
}
