package uring

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Probe reports why an event loop of multishot receives into a
// provided-buffer ring cannot run here (nil: it can): the kernel must be
// 6.1 or later (multishot receive into a buffer ring came in 6.0, deferred
// task work in 6.1), and a ring and a buffer ring are set up and torn
// down. The error wraps ErrUnsupported with the kernel's answer: EPERM
// from a seccomp profile or kernel.io_uring_disabled, ENOSYS from an old
// kernel or an emulator (qemu-user) that does not pass io_uring on.
func Probe() error {
	var u unix.Utsname
	if err := unix.Uname(&u); err == nil {
		release := unix.ByteSliceToString(u.Release[:])
		var major, minor int
		if _, err := fmt.Sscanf(release, "%d.%d", &major, &minor); err == nil && (major < 6 || major == 6 && minor < 1) {
			return fmt.Errorf("%w: kernel %s, 6.1 or later is needed", ErrUnsupported, release)
		}
	}
	ring, err := New(8, 0)
	if err != nil {
		return err
	}
	defer ring.Close()
	b, err := ring.RegisterBufRing(1, 2, 4096)
	if err != nil {
		return err
	}
	return b.Close()
}
