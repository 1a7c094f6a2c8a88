package testenv

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// OpenPTY opens a pseudo-terminal: the controlling side, which reads what
// a program writes to the terminal, and the terminal itself, to give the
// program as its stdout. It is opened by hand (/dev/ptmx) rather than
// through a pty library, for the tests that run a tool on a terminal.
func OpenPTY(cols int) (control, term *os.File, err error) {
	control, err = os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	fd := int(control.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		control.Close()
		return nil, nil, fmt.Errorf("unlock the pty: %w", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		control.Close()
		return nil, nil, fmt.Errorf("the pty's number: %w", err)
	}
	term, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		control.Close()
		return nil, nil, fmt.Errorf("open the pty: %w", err)
	}
	if err := unix.IoctlSetWinsize(int(term.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: uint16(cols)}); err != nil {
		control.Close()
		term.Close()
		return nil, nil, fmt.Errorf("set the pty's size: %w", err)
	}
	return control, term, nil
}
