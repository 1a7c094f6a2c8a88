// Package testenv tells tests where they run: under qemu-user (make arm64
// runs the arm64 test binaries with `go test -exec qemu-aarch64-static`
// and says so in WEASELDB_QEMU_USER), a test that re-runs its own binary
// must run it through the same emulator, since a container seldom has
// binfmt_misc to do it for it; and a test of what qemu-user does not
// emulate says so and skips.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// QemuUserEnv names the emulator the tests run under ("" when native).
const QemuUserEnv = "WEASELDB_QEMU_USER"

// QemuUser is the emulator running this test binary, or "".
func QemuUser() string { return os.Getenv(QemuUserEnv) }

// Command runs bin with args as this test binary is run: through the
// emulator where there is one.
func Command(bin string, args ...string) *exec.Cmd {
	if q := QemuUser(); q != "" {
		return exec.Command(q, append([]string{bin}, args...)...)
	}
	return exec.Command(bin, args...)
}

// SkipUnderQemuUser skips a test of a kernel feature qemu-user does not
// pass through; why says which.
func SkipUnderQemuUser(t testing.TB, why string) {
	t.Helper()
	if q := QemuUser(); q != "" {
		t.Skipf("under %s: %s", q, why)
	}
}
